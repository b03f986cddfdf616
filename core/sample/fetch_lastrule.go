package sample

// RuleInfo is implemented by a Stream that records the last rule that
// decided for it: the final action that ended a rule set's evaluation.
type RuleInfo interface {
	// LastRule is that rule's file and line; ok false when none did.
	LastRule() (file string, line int, ok bool)
}

func init() {
	RegisterFetches(
		Fetch{Name: "last_rule_file", Out: TStr, Need: NeedNothing, Fn: fetchLastRule(false)},
		Fetch{Name: "last_rule_line", Out: TSint, Need: NeedNothing, Fn: fetchLastRule(true)},
	)
}

func fetchLastRule(line bool) func(r *Request, _ []Arg, s *Sample) bool {
	return func(r *Request, _ []Arg, s *Sample) bool {
		ri, ok := r.Stream.(RuleInfo)
		if !ok {
			return false
		}
		file, n, ok := ri.LastRule()
		if !ok {
			return false
		}
		if line {
			s.setInt(int64(n))
		} else {
			s.setStr(append(r.alloc(len(file)), file...))
		}
		return true
	}
}
