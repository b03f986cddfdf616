package sample

// CaptureInfo is implemented by a Stream that keeps its frontend's capture
// slots (capture request|response header, declare capture, the capture
// actions).
type CaptureInfo interface {
	// Captured is slot id of the request's (res false) or the
	// response's slots; ok false when nothing was captured in it.
	Captured(res bool, id int) (v []byte, ok bool)
}

func init() {
	RegisterFetches(
		Fetch{Name: "capture.req.hdr", Min: 1, Max: 1, Out: TStr, Need: NeedReq, Check: argInt, Fn: capturedSlot(false)},
		Fetch{Name: "capture.res.hdr", Min: 1, Max: 1, Out: TStr, Need: NeedRes, Check: argInt, Fn: capturedSlot(true)},
	)
}

func capturedSlot(res bool) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		ci, ok := r.Stream.(CaptureInfo)
		if !ok {
			return false
		}
		v, ok := ci.Captured(res, int(a[0].I))
		if !ok {
			return false
		}
		s.setStr(v)
		return true
	}
}
