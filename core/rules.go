package core

import (
	"fmt"
	"goha/core/sample"
	"maps"
	"slices"
	"strings"
)

// ruleActions says, for each action goha runs, how many of the words
// after the action's name it reads, as HAProxy's action parsers do: what
// follows must be a condition, so a misspelt "if" or a stray word is an
// error rather than a rule that applies to every request.
var ruleActions = map[string]func(args []string) int{
	"allow":          fixedArgs(0),
	"capture":        fixedArgs(3),
	"set-header":     fixedArgs(2),
	"add-header":     fixedArgs(2),
	"del-header":     delHeaderArgs,
	"deny":           replyArgs(true),
	"return":         replyArgs(false),
	"set-var(":       fixedArgs(1),
	"set-var-fmt(":   fixedArgs(1),
	"unset-var(":     fixedArgs(0),
	"set-path":       fixedArgs(1),
	"set-pathq":      fixedArgs(1),
	"set-query":      fixedArgs(1),
	"set-uri":        fixedArgs(1),
	"set-method":     fixedArgs(1),
	"replace-path":   fixedArgs(2),
	"replace-pathq":  fixedArgs(2),
	"replace-uri":    fixedArgs(2),
	"replace-header": fixedArgs(3),
	"replace-value":  fixedArgs(3),
	"set-status":     setStatusArgs,
	"redirect":       redirectArgs,
	"set-src":        fixedArgs(1),
	"set-src-port":   fixedArgs(1),
	"set-dst":        fixedArgs(1),
	"set-dst-port":   fixedArgs(1),
	"set-timeout":    fixedArgs(2),
	"tarpit":         replyArgs(true),
	"auth":           authArgs,
	// core/stream/actions_more.go
	"set-log-level":    fixedArgs(1),
	"strict-mode":      fixedArgs(1),
	"disable-l7-retry": fixedArgs(0),
	"set-nice":         fixedArgs(1),
	"set-mark":         fixedArgs(1),
	"set-tos":          fixedArgs(1),
	"early-hint":       fixedArgs(2),
	"reject":           fixedArgs(0),
	// core/stream/waitbody.go, core/stream/normalize.go
	"wait-for-body": waitBodyArgs,
	"normalize-uri": normalizeArgs,
	// core/stream/cache.go
	"cache-use":   fixedArgs(1),
	"cache-store": fixedArgs(1),
}

// authArgs reads [realm <realm>].
func authArgs(args []string) int {
	if len(args) > 0 && args[0] == "realm" {
		return 2
	}
	return 0
}

// actionKey is the table's key for an action word: "set-var(txn.x)" is
// "set-var(".
func actionKey(w string) string {
	if i := strings.IndexByte(w, '('); i > 0 {
		return w[:i+1]
	}
	return w
}

// setStatusArgs reads <code> [reason <text>].
func setStatusArgs(args []string) int {
	if len(args) > 2 && args[1] == "reason" {
		return 3
	}
	return 1
}

// redirectArgs reads location|prefix|scheme <where> and the options that
// may follow, up to the condition.
func redirectArgs(args []string) int {
	i := 2
	for i < len(args) {
		switch args[i] {
		case "code", "set-cookie", "clear-cookie":
			i += 2
		case "drop-query", "append-slash", "ignore-empty":
			i++
		default:
			return min(i, len(args))
		}
	}
	return min(i, len(args))
}

func fixedArgs(n int) func([]string) int { return func([]string) int { return n } }

// delHeaderArgs reads <name> [-m <method>].
func delHeaderArgs(args []string) int {
	if len(args) > 1 && args[1] == "-m" {
		return 3
	}
	return 1
}

// replyArgs reads the words of an HTTP reply (deny, return): each known
// keyword with its values, in any order, up to the first other word.
func replyArgs(deny bool) func([]string) int {
	return func(args []string) int {
		i := 0
		for i < len(args) {
			switch args[i] {
			case "status", "content-type", "errorfile", "errorfiles", "file", "lf-file", "string", "lf-string":
				i += 2
			case "hdr":
				i += 3
			case "default-errorfiles":
				i++
			case "deny_status":
				if !deny {
					return i
				}
				i += 2
			default:
				return i
			}
		}
		return i
	}
}

// checkRuleCond refuses a rule whose action is followed by anything but a
// condition, in HAProxy's words. Unknown actions are left to compileRule.
func checkRuleCond(kw string, words []string) error {
	n, ok := RuleArity(words)
	if !ok || n >= len(words) {
		return nil
	}
	if w := words[n]; w != "if" && w != "unless" {
		return tightf("'%s %s' expects either 'if' or 'unless' followed by a condition but found '%s'.", kw, words[0], w)
	}
	return nil
}

// finalRule says whether a rule stops the evaluation of the rules after it
// whatever the request: a final action without a condition.
func finalRule(words []string) bool {
	switch words[0] {
	case "allow", "deny", "return", "redirect", "tarpit", "auth", "reject":
		n, ok := RuleArity(words)
		return ok && n == len(words)
	}
	return false
}

// addRule keeps an http-request or http-response rule, warning as HAProxy
// does when an earlier rule makes it unreachable. An unknown action is
// reported here, with the other problems of the section, rather than
// after them.
func addRule(c *kwCtx, rules *[]LineDef, args []string) error {
	if len(args) == 0 {
		return tightf("'%s' expects %s, but got '' (missing argument).", c.kw, quotedActions())
	}
	if err := c.checkExperimental(args[0]); err != nil {
		return err
	}
	if _, ok := RuleArity(args); !ok {
		if !haproxyAction(c.kw, args[0]) {
			// A word HAProxy does not know either: its message, with the
			// actions goha has, and the nearest of them.
			msg := fmt.Sprintf("'%s' expects %s, but got '%s'.", c.kw, quotedActions(), args[0])
			if best := SuggestFunc(args[0], actionNames()); best != "" {
				msg += fmt.Sprintf(" Did you mean '%s' maybe ?", best)
			}
			return tightf("%s", msg)
		}
		return errf("'%s %s' : %v", c.kw, args[0], UnknownAction(args[0]))
	}
	if args[0] == "cache-use" || args[0] == "cache-store" {
		if err := cacheRule(c.p, args); err != nil {
			return errf("error detected in %s '%s' while parsing '%s %s' rule : %v.", capName(c.p.Cap), c.p.Name, c.kw, args[0], err)
		}
	}
	if err := checkRuleCond(c.kw, args); err != nil {
		return err
	}
	if n, _ := RuleArity(args); n < len(args) {
		if _, err := sample.CompileCond(nil, args[n:], c.p.aclsSoFar); err != nil {
			return errf("error detected while parsing an '%s %s' condition : %v.", c.kw, args[0], err)
		}
	}
	args, err := captureRule(c, args)
	if err != nil {
		return err
	}
	*rules = append(*rules, LineDef{c.pos, args})
	if n := len(*rules); n > 1 && finalRule((*rules)[n-2].Words) {
		return tightWarnf("previous '%s' action is final and has no condition attached, further entries are NOOP.", c.kw)
	}
	return nil
}

func UnknownAction(a string) error {
	return &UnknownActionError{fmt.Sprintf("unknown or unsupported action '%s'; goha supports %s.", a, quotedActions())}
}

// UnknownActionError is an action goha does not run.
type UnknownActionError struct{ msg string }

func (e *UnknownActionError) Error() string { return e.msg }

// actionNames lists the actions goha runs, as written ("set-var(<var-name>)").
func actionNames() []string {
	var out []string
	for _, a := range slices.Sorted(maps.Keys(ruleActions)) {
		if strings.HasSuffix(a, "(") {
			a += "*)"
		}
		out = append(out, a)
	}
	return out
}

// RuleArity returns how many words the action and its arguments take.
func RuleArity(words []string) (int, bool) {
	f := ruleActions[actionKey(words[0])]
	if f == nil {
		return 0, false
	}
	return min(1+f(words[1:]), len(words)), true
}

// quotedActions lists the actions goha runs as HAProxy lists its own.
func quotedActions() string {
	var b strings.Builder
	for i, a := range actionNames() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("'" + a + "'")
	}
	return b.String()
}

// HAProxy 2.6's http-request and http-response actions; a name ending in
// '(' takes its argument in parentheses (sc-inc-gpc(0), set-var(txn.x)).
var (
	haproxyReqActions = strings.Fields(`wait-for-handshake ot-group set-log-level set-nice use-service
		sc-inc-gpc( sc-inc-gpc0( sc-inc-gpc1( sc-set-gpt( sc-set-gpt0( send-spoe-group do-resolve(
		cache-use add-acl( add-header allow auth capture del-acl( del-header del-map( deny
		disable-l7-retry early-hint normalize-uri redirect reject replace-header replace-path
		replace-pathq replace-uri replace-value return set-header set-map( set-method set-path
		set-pathq set-query set-uri strict-mode tarpit track-sc set-timeout wait-for-body
		set-var-fmt( set-var( unset-var( set-dst set-dst-port set-mark set-src set-src-port set-tos
		silent-drop set-priority-class set-priority-offset`)
	haproxyRespActions = strings.Fields(`ot-group set-log-level set-nice sc-inc-gpc( sc-inc-gpc0(
		sc-inc-gpc1( sc-set-gpt( sc-set-gpt0( send-spoe-group cache-store add-acl( add-header allow
		capture del-acl( del-header del-map( deny redirect replace-header replace-value return
		set-header set-map( set-status strict-mode track-sc wait-for-body set-var-fmt( set-var(
		unset-var( set-mark set-tos silent-drop`)
)

// haproxyAction says whether HAProxy 2.6 knows action a of rule keyword kw.
func haproxyAction(kw, a string) bool {
	list := haproxyReqActions
	if kw == "http-response" {
		list = haproxyRespActions
	}
	for _, x := range list {
		if x == a || strings.HasSuffix(x, "(") && strings.HasPrefix(a, x) || x == "track-sc" && strings.HasPrefix(a, x) {
			return true
		}
	}
	return false
}
