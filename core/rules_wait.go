package core

// waitBodyArgs reads wait-for-body's "time <time>" and "at-least <bytes>"
// pairs, in any order, up to the first other word.
func waitBodyArgs(args []string) int {
	i := 0
	for i < len(args) && (args[i] == "time" || args[i] == "at-least") {
		i += 2
	}
	return i
}

// normalizeArgs reads normalize-uri's normalizer and, for those that take
// one, the word after it unless it starts the condition.
func normalizeArgs(args []string) int {
	if len(args) < 2 {
		return len(args)
	}
	switch args[0] {
	case "path-strip-dotdot", "percent-to-uppercase", "percent-decode-unreserved":
		if args[1] != "if" && args[1] != "unless" {
			return 2
		}
	}
	return 1
}
