package sample

// CacheInfo is implemented by a Stream whose response may come from an
// HTTP cache.
type CacheInfo interface {
	// CacheHit is the name of the cache that answered; ok false when the
	// response did not come from one.
	CacheHit() (name string, ok bool)
}

func init() {
	RegisterFetches(
		// A boolean wherever the response's stage is reachable, the log
		// line included, as HAProxy's reads only the stream's target.
		Fetch{Name: "res.cache_hit", Out: TBool, Need: NeedRes, Fn: func(r *Request, a []Arg, s *Sample) bool {
			ci, ok := r.Stream.(CacheInfo)
			hit := false
			if ok {
				_, hit = ci.CacheHit()
			}
			s.setBool(hit)
			return true
		}},
		// Nothing when the response did not come from a cache.
		Fetch{Name: "res.cache_name", Out: TStr, Need: NeedRes, Fn: func(r *Request, a []Arg, s *Sample) bool {
			ci, ok := r.Stream.(CacheInfo)
			if !ok {
				return false
			}
			name, hit := ci.CacheHit()
			if !hit {
				return false
			}
			s.setStr(append(r.alloc(len(name)), name...))
			return true
		}},
	)
}
