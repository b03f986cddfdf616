package core

import (
	"strings"
	"time"

	"goha/core/config"
	"goha/core/sample"
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
}

// TCPRuleArity returns how many words the action and its arguments take.
func TCPRuleArity(words []string) (int, bool) {
	if f, ok := tcpArity[actionKey(words[0])]; ok {
		return min(1+f(words[1:]), len(words)), true
	}
	n, ok := tcpActions[actionKey(words[0])]
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
	n, ok := TCPRuleArity(words)
	if !ok {
		return errf("'tcp-request %s %s' is not supported by goha.", stage, words[0])
	}
	if n < len(words) {
		if w := words[n]; w != "if" && w != "unless" {
			return errf("'tcp-request %s %s' expects either 'if' or 'unless' followed by a condition but found '%s'.", stage, words[0], w)
		}
		if _, err := sample.CompileCond(nil, words[n:], c.p.aclsSoFar); err != nil {
			return errf("error detected while parsing a 'tcp-request %s' condition : %v.", stage, err)
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
	if len(args) != 2 {
		return errf("'%s' expects a variable name and a sample expression.", c.kw)
	}
	c.g.SetVars = append(c.g.SetVars, LineDef{Pos: c.pos, Words: []string{c.kw + "(" + args[0] + ")", args[1]}})
	return nil
}
