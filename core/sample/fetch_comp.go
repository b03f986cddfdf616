package sample

// CompInfo is implemented by a Stream that may compress its response.
type CompInfo interface {
	// ResComp is the algorithm compressing the response, ok false when
	// the response is not compressed.
	ResComp() (algo string, ok bool)
}

func init() {
	RegisterFetches(
		Fetch{Name: "res.comp", Out: TBool, Need: NeedRes, Fn: fetchResComp},
		Fetch{Name: "res.comp_algo", Out: TStr, Need: NeedRes, Fn: fetchResCompAlgo},
	)
}

func fetchResComp(r *Request, _ []Arg, s *Sample) bool {
	if r.response() == nil {
		return false
	}
	ci, ok := r.Stream.(CompInfo)
	on := false
	if ok {
		_, on = ci.ResComp()
	}
	s.setBool(on)
	return true
}

func fetchResCompAlgo(r *Request, _ []Arg, s *Sample) bool {
	ci, ok := r.Stream.(CompInfo)
	if !ok {
		return false
	}
	algo, on := ci.ResComp()
	if !on {
		return false
	}
	s.setStr(append(r.alloc(len(algo)), algo...))
	return true
}
