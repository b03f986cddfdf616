package sample

// UniqueIDInfo is implemented by a Stream whose frontend may have a
// unique-id-format.
type UniqueIDInfo interface {
	// UniqueID is the stream's unique id, built on first use from the
	// expressions of r; ok false when there is no format.
	UniqueID(r *Request) (id []byte, ok bool)
}

func init() {
	RegisterFetches(
		Fetch{Name: "unique-id", Min: 0, Max: 0, Out: TStr, Need: NeedL4, Fn: fetchUniqueID},
	)
}

func fetchUniqueID(r *Request, _ []Arg, s *Sample) bool {
	u, ok := r.Stream.(UniqueIDInfo)
	if !ok {
		return false
	}
	id, ok := u.UniqueID(r)
	if !ok {
		return false
	}
	s.setStr(id)
	return true
}
