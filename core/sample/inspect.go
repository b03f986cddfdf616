package sample

// Content inspection (tcp-request content with an inspect-delay): rules run
// as the client's first bytes arrive, and a condition that reads those
// bytes may not be decided yet. HAProxy's fetches then say that their
// sample "may change", and its ACLs take a third value, a miss, that makes
// the rules wait for more bytes or for the end of the delay.

// Inspection is implemented by a Stream whose received bytes may still
// grow while rules run.
type Inspection interface {
	// Partial says that the request's (res false) or the response's
	// bytes may still grow: a condition on them is not final.
	Partial(res bool) bool
}

// partial says whether rules for r run before the end of inspection.
func partial(r *Request, res bool) bool {
	in, ok := r.Stream.(Inspection)
	return ok && in.Partial(res)
}

// Three-valued results of a condition under inspection, ordered so that
// AND is the minimum, OR the maximum and NOT the complement.
const (
	triFail = 0
	triMiss = 1
	triPass = 2
)

// mayChange says whether a term that did not match may match once more
// bytes arrived: its fetch reads the received bytes, or the end of the
// delay. found says the fetch gave a sample: then only lengths change, as
// in HAProxy, whose payload and TLS fetches are final once their bytes are
// all there. final says a converter decided that no sample would come.
func (t *Term) mayChange(found, final, noHead bool) bool {
	f := t.expr.fetch
	switch f.Name {
	case "wait_end":
		return true
	case "req.len", "req_len", "res.len":
		return true
	case "req.payload", "res.payload":
		// A length of 0 reads all the bytes there are, which may grow.
		if len(t.expr.args) == 2 && t.expr.args[1].I == 0 && !final {
			return true
		}
	}
	switch f.Need {
	case NeedReqBuf, NeedResBuf:
		return !found && !final
	case NeedReq, NeedReqHdr, NeedHdr:
		// An HTTP fetch on a tcp stream reads the request once its
		// head is whole: until then it may change.
		return !found && !final && noHead
	}
	return false
}

// EvalPartial evaluates the expression as Eval does, and says, when it
// gives no sample while the request's bytes may still grow, whether its
// fetch reads them (the payload, or the HTTP request a tcp stream parses
// from it): the caller then waits for more, as HAProxy's actions do.
func (e *SampleExpr) EvalPartial(r *Request, s *Sample) (ok, miss bool) {
	if e.Eval(r, s) {
		return true, false
	}
	if !partial(r, false) {
		return false, false
	}
	switch e.fetch.Need {
	case NeedReqBuf, NeedReqHdr, NeedReq, NeedHdr:
		return false, true
	}
	return false, false
}

// EvalPartial evaluates the condition as Eval does, except while the
// stream's bytes may still grow (Inspection): then miss reports a
// condition that cannot be decided yet, and match is false.
func (c *Cond) EvalPartial(v *Request) (match, miss bool) {
	if c == nil {
		return true, false
	}
	if !partial(v, false) && !partial(v, true) {
		return c.Eval(v), false
	}
	res := triFail
	for _, and := range c.ors {
		r := triPass
		for _, ct := range and {
			t := triFail
			for _, term := range ct.terms {
				if term.Eval(v) {
					t = triPass
					break
				}
				found := term.found(v)
				if term.mayChange(found, v.final, v.Head == nil) {
					t = triMiss
				}
			}
			if ct.neg {
				t = triPass - t
			}
			r = min(r, t)
			if r == triFail {
				break
			}
		}
		res = max(res, r)
		if res == triPass {
			break
		}
	}
	if res == triMiss {
		return false, true
	}
	return (res == triPass) != c.unless, false
}

// found says whether the term's expression gives a sample.
func (t *Term) found(v *Request) bool {
	v.reset()
	return t.expr.Eval(v, &v.iterSmp)
}
