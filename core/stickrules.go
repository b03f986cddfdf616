package core

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

// trackArgs reads <key> [table <table>].
func trackArgs(args []string) int {
	if len(args) > 1 && args[1] == "table" {
		return 3
	}
	return 1
}
