package core

import (
	"fmt"
	"goha/core/sample"
)

// ruleActions says, for each action goha runs, how many of the words
// after the action's name it reads, as HAProxy's action parsers do: what
// follows must be a condition, so a misspelt "if" or a stray word is an
// error rather than a rule that applies to every request.
var ruleActions = map[string]func(args []string) int{
	"allow":      fixedArgs(0),
	"set-header": fixedArgs(2),
	"add-header": fixedArgs(2),
	"del-header": delHeaderArgs,
	"deny":       replyArgs(true),
	"return":     replyArgs(false),
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
	case "allow", "deny", "return":
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
	if _, ok := RuleArity(args); !ok {
		return errf("'%s %s' : %v", c.kw, args[0], UnknownAction(args[0]))
	}
	if err := checkRuleCond(c.kw, args); err != nil {
		return err
	}
	if n, _ := RuleArity(args); n < len(args) {
		if _, err := sample.CompileCond(args[n:], c.p.aclsSoFar); err != nil {
			return errf("error detected while parsing an '%s %s' condition : %v.", c.kw, args[0], err)
		}
	}
	*rules = append(*rules, LineDef{c.pos, args})
	if n := len(*rules); n > 1 && finalRule((*rules)[n-2].Words) {
		return tightWarnf("previous '%s' action is final and has no condition attached, further entries are NOOP.", c.kw)
	}
	return nil
}

func UnknownAction(a string) error {
	return fmt.Errorf("unknown or unsupported action '%s'; goha supports 'set-header', 'add-header', 'del-header', 'allow', 'deny' and 'return'.", a)
}

// RuleArity returns how many words the action and its arguments take.
func RuleArity(words []string) (int, bool) {
	f := ruleActions[words[0]]
	if f == nil {
		return 0, false
	}
	return min(1+f(words[1:]), len(words)), true
}
