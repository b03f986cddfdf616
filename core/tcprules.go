package core

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"goha/core/config"
	"goha/core/sample"
	"goha/ring"
)

// tcp-request rules: connection and session rules run once per client
// connection, content rules once per stream (each HTTP request of a
// keep-alive connection, as in HAProxy). goha runs the actions that do not
// read the stream's payload; the others are refused by name.

// tcpActions are the tcp-request actions goha runs, with the number of
// words each takes after its name.
var tcpActions = map[string]int{
	"accept": 0, "reject": 0,
	"set-var(": 1, "set-var-fmt(": 1, "unset-var(": 0,
	"set-src": 1, "set-dst": 1, "set-src-port": 1, "set-dst-port": 1,
	"expect-proxy": 1, // layer4, connection rules only
}

func init() {
	// switch-mode http [proto h1], content rules only (parseTCPRequest).
	tcpArity["switch-mode"] = func(args []string) int {
		if len(args) > 1 && args[1] == "proto" {
			return 3
		}
		return 1
	}
}

// TCPRuleArity returns how many words the action and its arguments take.
func TCPRuleArity(words []string) (int, bool) {
	if f, ok := tcpArity[actionKey(words[0])]; ok {
		return min(1+f(words[1:]), len(words)), true
	}
	return tableArity(tcpActions, words)
}

// tableArity reads the arity of words' action in table.
func tableArity(table map[string]int, words []string) (int, bool) {
	n, ok := table[actionKey(words[0])]
	if !ok {
		return 0, false
	}
	return min(1+n, len(words)), true
}

func parseTCPRequest(c *kwCtx, args []string) error {
	if len(args) == 0 {
		return errf("'tcp-request' expects 'connection', 'session', 'content' or 'inspect-delay' as first argument.")
	}
	stage := args[0]
	switch stage {
	case "inspect-delay":
		if len(args) < 2 {
			return errf("'tcp-request inspect-delay' expects a positive delay in milliseconds, in proxy '%s'.", c.p.Name)
		}
		d, err := config.ParseTime(args[1], time.Millisecond)
		if err != nil {
			return errf("'tcp-request inspect-delay' : %v.", err)
		}
		c.p.InspectDelay = d
		return nil
	case "connection", "session", "content":
	default:
		return errf("'tcp-request' expects 'connection', 'session', 'content' or 'inspect-delay' as first argument, got '%s'.", stage)
	}
	words := args[1:]
	if len(words) == 0 {
		return errf("'tcp-request %s' expects an action.", stage)
	}
	if words[0] == "switch-mode" && stage != "content" {
		return errf("'tcp-request %s' expects 'accept', 'reject', ... in %s '%s' (got 'switch-mode'): 'switch-mode' is for content rules.", stage, CapName(c.p.Cap), c.p.Name)
	}
	if words[0] == "switch-mode" {
		switch {
		case c.p.Cap&CapFE == 0:
			return errf("'tcp-request switch-mode' not allowed because %s '%s' has no frontend capability", CapName(c.p.Cap), c.p.Name)
		case len(words) < 2:
			return errf("'tcp-request switch-mode' expects a mode as argument.")
		case words[1] != "http":
			return errf("'tcp-request switch-mode' expects a valid mode (got '%s').", words[1])
		case len(words) > 2 && words[2] == "proto" && first(words[3:]) != "h1":
			if p := first(words[3:]); p == "h2" || p == "fcgi" {
				return errf("'tcp-request switch-mode' : 'proto %s' is not supported by goha.", p)
			}
			return errf("'tcp-request switch-mode': 'proto' expects a valid MUX protocol, if specified (got '%s')", first(words[3:]))
		}
	}
	if words[0] == "expect-proxy" {
		switch {
		case stage != "connection":
			return errf("'expect-proxy layer4' is not allowed in 'tcp-request %s' rules in %s '%s'", stage, CapName(c.p.Cap), c.p.Name)
		case len(words) < 2 || words[1] != "layer4":
			return errf("'tcp-request connection expect-proxy' only supports 'layer4' in %s '%s' (got '%s')", CapName(c.p.Cap), c.p.Name, first(words[1:]))
		}
	}
	n, ok := TCPRuleArity(words)
	if !ok {
		return errf("'tcp-request %s %s' is not supported by goha.", stage, words[0])
	}
	if n < len(words) {
		if w := words[n]; w != "if" && w != "unless" {
			return errf("'tcp-request %s %s' only accepts 'if' or 'unless', in %s '%s' (got '%s')", stage, words[0], CapName(c.p.Cap), c.p.Name, w)
		}
		if _, err := sample.CompileCond(nil, words[n:], c.p.aclsSoFar); err != nil {
			return errf("error detected while parsing a 'tcp-request %s' condition : %v.", stage, err)
		}
	}
	if strings.HasPrefix(words[0], "set-") && !strings.Contains(words[0], "(") {
		if n < 2 {
			return errf("missing fetch method")
		}
		if _, err := sample.CompileExpr(nil, words[1]); err != nil {
			return errf("%s", strings.TrimSuffix(err.Error(), "."))
		}
	}
	if strings.HasSuffix(actionKey(words[0]), "(") && !strings.HasSuffix(words[0], ")") {
		return errf("'tcp-request %s %s' : missing closing ')' after the variable name.", stage, words[0])
	}
	c.p.TCPReqRules = append(c.p.TCPReqRules, TCPRuleDef{Pos: c.pos, Stage: stage, Words: words})
	return nil
}

// globalSetVar keeps `set-var <name> <expr>` or `set-var-fmt <name> <fmt>`
// of the global section for the process to run at start-up.
func globalSetVar(c *kwCtx, args []string) error {
	if len(args) < 2 || args[0] == "" || args[1] == "" {
		what := "a sample expression"
		if c.kw == "set-var-fmt" {
			what = "a format string"
		}
		return errf("'%s' requires a process-wide variable name ('proc.<name>') and %s.", c.kw, what)
	}
	if len(args) > 2 {
		return errf("'%s' expects a variable name and a sample expression.", c.kw)
	}
	c.g.SetVars = append(c.g.SetVars, LineDef{Pos: c.pos, Words: []string{c.kw, args[0], args[1]}})
	return nil
}

// tcp-response rules: a backend's content rules run on the server's first
// bytes (tcp mode) or on each response (http mode), with their own
// inspect-delay.

// tcpRespActions are the tcp-response content actions goha runs, with the
// number of words each takes after its name.
var tcpRespActions = map[string]int{
	"accept": 0, "reject": 0, "close": 0,
	"set-var(": 1, "set-var-fmt(": 1, "unset-var(": 0,
	"set-log-level": 1, "set-mark": 1, "set-tos": 1, "set-nice": 1,
}

// haproxyTCPRespActions are HAProxy 2.6's tcp-response content actions,
// in the order its message lists them.
var haproxyTCPRespActions = strings.Fields(`accept close reject ot-group set-log-level set-nice
	sc-inc-gpc(*) sc-inc-gpc0(*) sc-inc-gpc1(*) sc-set-gpt(*) sc-set-gpt0(*) send-spoe-group
	set-var-fmt(*) set-var(*) unset-var(*) set-mark set-tos silent-drop`)

// TCPRespRuleArity returns how many words a tcp-response content action
// and its arguments take.
func TCPRespRuleArity(words []string) (int, bool) { return tableArity(tcpRespActions, words) }

func parseTCPResponse(c *kwCtx, args []string) error {
	if len(args) == 0 {
		return errf("missing argument for 'tcp-response' in %s '%s'", CapName(c.p.Cap), c.p.Name)
	}
	stage := args[0]
	if stage != "inspect-delay" && stage != "content" {
		return errf("'tcp-response' expects 'inspect-delay' or 'content' in %s '%s' (got '%s')", CapName(c.p.Cap), c.p.Name, stage)
	}
	if c.p.Cap != CapDefaults && c.p.Cap&CapBE == 0 {
		return errf("tcp-response %s is only allowed in 'backend' sections or 'defaults' section with a name", stage)
	}
	if stage == "inspect-delay" {
		if len(args) < 2 {
			return errf("'tcp-response inspect-delay' expects a positive delay in milliseconds, in %s '%s'", CapName(c.p.Cap), c.p.Name)
		}
		d, err := config.ParseTime(args[1], time.Millisecond)
		if err != nil {
			var ch string
			for _, r := range args[1] {
				if r < '0' || r > '9' {
					ch = string(r)
					break
				}
			}
			return errf("'tcp-response inspect-delay' expects a positive delay in milliseconds, in %s '%s' (unexpected character '%s')", CapName(c.p.Cap), c.p.Name, ch)
		}
		c.p.ResInspectDelay = d
		return nil
	}
	words := args[1:]
	if len(words) == 0 {
		words = []string{""}
	}
	k := actionKey(words[0])
	if strings.HasSuffix(k, "(") && !strings.HasSuffix(words[0], ")") && strings.HasSuffix(k, "var(") {
		return errf("incomplete argument after action '%s'. Expects 'set-var(<var-name>)', 'set-var-fmt(<var-name>)' or 'unset-var(<var-name>)'", words[0])
	}
	n, ok := TCPRespRuleArity(words)
	if !ok {
		if haproxyTCPRespAction(k) {
			return errf("'tcp-response content %s' is not supported by goha.", words[0])
		}
		msg := fmt.Sprintf("'tcp-response content' expects '%s' in %s '%s' (got '%s').",
			strings.Join(haproxyTCPRespActions, "', '"), CapName(c.p.Cap), c.p.Name, words[0])
		if best := SuggestFunc(words[0], tcpRespSuggestions()); best != "" {
			msg += fmt.Sprintf(" Did you mean '%s' maybe ?", best)
		}
		return errf("%s", msg)
	}
	if err := checkTCPRespArgs(words[:n]); err != nil {
		return err
	}
	if n == len(words)-1 && (words[n] == "if" || words[n] == "unless") {
		// HAProxy reads a missing condition as none.
		words = words[:n]
	}
	if n < len(words) {
		if w := words[n]; w != "if" && w != "unless" {
			return errf("'tcp-response content %s' only accepts 'if' or 'unless', in %s '%s' (got '%s')", words[0], CapName(c.p.Cap), c.p.Name, w)
		}
		if _, err := sample.CompileCond(nil, words[n:], c.p.aclsSoFar); err != nil {
			return errf("'tcp-response content %s' : error detected in %s '%s' while parsing '%s' condition : %s", words[0], CapName(c.p.Cap), c.p.Name, words[n], strings.TrimSuffix(err.Error(), "."))
		}
	}
	c.p.TCPRespRules = append(c.p.TCPRespRules, TCPRuleDef{Pos: c.pos, Stage: stage, Words: words})
	return nil
}

// checkTCPRespArgs refuses the arguments HAProxy's action parsers refuse.
func checkTCPRespArgs(args []string) error {
	switch args[0] {
	case "set-log-level":
		if len(args) < 2 || args[1] != "silent" && !logLevelName(args[1]) {
			return errf("expects exactly 1 argument (log level name or 'silent')")
		}
	case "set-mark", "set-tos":
		if len(args) < 2 {
			return errf("expects exactly 1 argument (integer/hex value)")
		}
		if _, err := strconv.ParseUint(args[1], 0, 32); err != nil || strings.HasPrefix(args[1], "+") {
			return errf("invalid character starting at '%s' (integer/hex value expected)", args[1])
		}
	case "set-nice":
		if len(args) < 2 {
			return errf("expects exactly 1 argument (integer value)")
		}
	}
	if k := actionKey(args[0]); (k == "set-var(" || k == "set-var-fmt(") && len(args) < 2 {
		return errf("missing fetch method")
	}
	return nil
}

// haproxyTCPRespAction says whether HAProxy 2.6 knows the tcp-response
// content action whose key (actionKey) is k.
func haproxyTCPRespAction(k string) bool {
	for _, a := range haproxyTCPRespActions {
		if a == k || strings.TrimSuffix(a, "*)") == k {
			return true
		}
	}
	return false
}

// tcpRespSuggestions are the action names HAProxy suggests from.
func tcpRespSuggestions() []string {
	out := make([]string, len(haproxyTCPRespActions))
	for i, a := range haproxyTCPRespActions {
		out[i] = strings.TrimSuffix(a, "(*)")
	}
	return out
}

func logLevelName(s string) bool {
	_, ok := ring.ParseLevel(s)
	return ok
}
