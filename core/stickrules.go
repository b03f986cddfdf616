package core

import (
	"goha/core/diag"
	"goha/core/sample"
)

// The stick-table actions of http-request, http-response and tcp-request
// rules: track-sc0 to track-sc2, sc-inc-gpc*, sc-set-gpt*.

func init() {
	for _, a := range []string{"track-sc0", "track-sc1", "track-sc2"} {
		ruleActions[a] = trackArgs
		tcpArity[a] = trackArgs
	}
	for a, n := range map[string]int{"sc-inc-gpc0(": 0, "sc-inc-gpc1(": 0, "sc-inc-gpc(": 0, "sc-set-gpt0(": 1, "sc-set-gpt(": 1} {
		ruleActions[a] = fixedArgs(n)
		tcpArity[a] = fixedArgs(n)
	}
}

// tcpArity holds the tcp-request actions whose word count varies.
var tcpArity = map[string]func(args []string) int{}

// StickRuleDef is a stick on|match|store-request|store-response line.
type StickRuleDef struct {
	Pos   diag.Pos
	Kind  string // "on", "match", "store-request", "store-response"
	Expr  string
	Table string // "" for the backend's own
	Cond  []string
}

// parseStickRule reads stick <kind> <pattern> [table <t>] [{if|unless} <cond>].
func parseStickRule(c *kwCtx, args []string) error {
	kind := first(args)
	switch kind {
	case "on", "match", "store-request", "store-response":
	default:
		return errf("'stick' expects 'on', 'match', or 'store'.")
	}
	if len(args) < 2 {
		return errf("'stick' expects a fetch method.")
	}
	r := StickRuleDef{Pos: c.pos, Kind: kind, Expr: args[1]}
	if _, err := sample.CompileExpr(nil, r.Expr); err != nil {
		return errf("'stick': %v.", err)
	}
	rest := args[2:]
	if len(rest) > 1 && rest[0] == "table" {
		r.Table, rest = rest[1], rest[2:]
	}
	if len(rest) > 0 {
		if rest[0] != "if" && rest[0] != "unless" {
			return errf("'stick': unknown keyword '%s'.", rest[0])
		}
		if _, err := sample.CompileCond(nil, rest, c.p.aclsSoFar); err != nil {
			return errf("'stick': error detected while parsing sticking condition : %v.", err)
		}
		r.Cond = rest
	}
	c.p.StickRules = append(c.p.StickRules, r)
	return nil
}

// trackArgs reads <key> [table <table>].
func trackArgs(args []string) int {
	if len(args) > 1 && args[1] == "table" {
		return 3
	}
	return 1
}
