package stream

import (
	"strings"
	"time"

	"goha/core"
	"goha/core/http1"
)

// Cookie-based persistence (the backend's `cookie`), as HAProxy 2.6 does
// it: the request's cookie names the server, the response's Set-Cookie
// tells the client which one served it.

// The log's persistence characters (the 3rd and 4th of %tsc).
const (
	ckNone    = 'N' // no persistence cookie in the request / none in the response
	ckInvalid = 'I' // the cookie named no server
	ckDown    = 'D' // it named a server that was down
	ckValid   = 'V' // it named a usable server
	ckExpired = 'E' // its maxidle date had passed
	ckOld     = 'O' // its maxlife date had passed

	sckFound    = 'P' // the server's cookie went to the client untouched
	sckDeleted  = 'D' // the server's cookie was removed
	sckInserted = 'I' // a cookie was added
	sckReplaced = 'R' // the server's cookie was rewritten
	sckUpdated  = 'U' // the client's cookie was refreshed (its date)
)

// cookieState is what persistence decided for one exchange.
type cookieState struct {
	cli, srv byte // log characters; 0 reads as 'N'
	direct   bool // the server was chosen by the cookie (HAProxy's SF_DIRECT)
	// The dates the request's cookie carried (unix seconds, multiples of
	// 4), 0 when absent or discarded.
	firstDate, lastDate int64
	// The response carried a Set-Cookie (HAProxy's TX_SCK_PRESENT).
	present bool
}

// logChars returns the two characters %tsc ends with: "--" when the
// backend's cookie has no mode (or there is none), as in HAProxy.
func (si *streamInfo) cookieChars() (byte, byte) {
	be := si.be
	if be == nil {
		be = si.fe
	}
	if be == nil || !be.CookiePersist.Any() {
		return '-', '-'
	}
	c, s := si.ck.cli, si.ck.srv
	if c == 0 {
		c = ckNone
	}
	if s == 0 {
		s = ckNone
	}
	return c, s
}

func isSPHT(c byte) bool { return c == ' ' || c == '\t' }

// cookieValueEnd returns the end of the cookie value starting at b[i]: the
// first ',' or ';' outside double quotes, or len(b).
func cookieValueEnd(b []byte, i int) int {
	quoted, pair := false, false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case pair:
			pair = false
		case quoted:
			if c == '\\' {
				pair = true
			} else if c == '"' {
				quoted = false
			}
		case c == '"':
			quoted = true
		case c == ',' || c == ';':
			return i
		}
	}
	return i
}

// cookieElem is one NAME=VALUE of a Cookie or Set-Cookie value: prev is
// the delimiter before it (or 0 for the first), next the one after it.
type cookieElem struct {
	prev, attBeg, attEnd, equal, valBeg, valEnd, next int
}

// scanCookie finds the element starting at prev. setCookie says the value
// is a Set-Cookie's, where ',' is no delimiter.
func scanCookie(b []byte, prev int, first, setCookie bool) cookieElem {
	e := cookieElem{prev: prev}
	i := prev
	if !first {
		i++
	}
	for i < len(b) && isSPHT(b[i]) {
		i++
	}
	e.attBeg = i
	e.attEnd = i
	j := i
	for j < len(b) {
		c := b[j]
		if c == '=' || c == ';' || (c == ',' && !setCookie) {
			break
		}
		j++
		if !isSPHT(c) {
			e.attEnd = j
		}
	}
	e.equal = j
	if j < len(b) && b[j] == '=' {
		v := j + 1
		for v < len(b) && isSPHT(b[v]) {
			v++
		}
		e.valBeg = v
		e.next = cookieValueEnd(b, v)
		e.valEnd = e.next
		for e.valEnd > e.valBeg && isSPHT(b[e.valEnd-1]) {
			e.valEnd--
		}
	} else {
		e.valBeg, e.valEnd, e.next = j, j, j
	}
	return e
}

// tightenEqual removes the blanks around the element's '=', as HAProxy
// does before it looks at a cookie, and returns the shortened value.
func tightenEqual(b []byte, e *cookieElem) []byte {
	if e.attEnd == e.equal && e.valBeg == e.equal+1 {
		return b
	}
	shift := 0
	if e.attEnd != e.equal {
		n := e.equal - e.attEnd
		b = append(b[:e.attEnd], b[e.equal:]...)
		shift -= n
		e.equal -= n
		e.valBeg -= n
	}
	if e.valBeg > e.equal+1 {
		n := e.valBeg - (e.equal + 1)
		b = append(b[:e.equal+1], b[e.valBeg:]...)
		shift -= n
		e.valBeg -= n
	}
	e.valEnd += shift
	e.next += shift
	return b
}

// delCookies removes the elements from the delimiter at from to the one
// at next (or, when from is 0, from the start through next's delimiter),
// keeping one delimiter and a blank between what stays, as HAProxy does.
// It returns the value, where the removal began, and the change in length.
func delCookies(b []byte, from, next int) ([]byte, int, int) {
	prev := from
	if prev == 0 {
		if next < len(b) {
			next++
		}
		for next < len(b) && isSPHT(b[next]) {
			next++
		}
	} else {
		for prev > 0 && isSPHT(b[prev-1]) {
			prev--
		}
		from = prev
		if next < len(b) {
			b[prev] = b[next]
			prev++
			next++
			if prev+1 < next {
				b[prev] = ' '
				prev++
			}
			for next < len(b) && isSPHT(b[next]) {
				next++
			}
		}
	}
	delta := prev - next
	b = append(b[:prev], b[next:]...)
	return b, from, delta
}

// clientCookies reads the request's Cookie fields for the backend's
// persistence cookie: it returns the server the cookie names when it may
// be used, records the log character and dates, and strips the cookie (or
// its prefix) from what the server will see, as the mode asks. Fields are
// edited in place: what is removed never makes them longer.
func (hc *hconn) clientCookies(be *proxy, req *http1.Head, now time.Time) *server {
	ck := be.CookiePersist
	st := &hc.si.ck
	var direct *server
	for i := req.Index("cookie", 0); i >= 0; i = req.Index("cookie", i+1) {
		b := append(hc.scratch[:0], req.Value(i)...)
		orig := len(b)
		changed := false
		delFrom := -1
		preserve := false
		first := true
		for prev := 0; prev < len(b); {
			e := scanCookie(b, prev, first, false)
			first = false
			prev = e.next
			if e.attBeg < len(b) && b[e.attBeg] == '$' {
				continue
			}
			if e.equal == e.next {
				// No '=': not a cookie of ours, kept.
				preserve = true
				if delFrom >= 0 {
					var delta int
					b, delFrom, delta = delCookies(b, delFrom, e.prev)
					prev = e.next + delta
					changed = true
					delFrom = -1
				}
				continue
			}
			if n := len(b); e.attEnd != e.equal || e.valBeg > e.equal+1 {
				b = tightenEqual(b, &e)
				changed = changed || len(b) != n
				prev = e.next
			}
			if string(b[e.attBeg:e.attEnd]) != ck.Name {
				preserve = true
				if delFrom >= 0 {
					var delta int
					b, delFrom, delta = delCookies(b, delFrom, e.prev)
					prev = e.next + delta
					changed = true
					delFrom = -1
				}
				continue
			}
			delim := e.valEnd
			if ck.Prefix {
				delim = e.valBeg
				for delim < e.valEnd && b[delim] != '~' {
					delim++
				}
			} else if bar := indexByteFrom(b[:e.valEnd], e.valBeg, '|'); bar >= 0 {
				// NAME=SRV|<last seen>|<first seen>, dates in base64.
				delim = bar
				bar++
				if e.valEnd-bar >= 5 {
					if v := b64ToS30(b[bar : bar+5]); v > 0 {
						st.lastDate = int64(v) << 2
					}
				}
				if bar2 := indexByteFrom(b[:e.valEnd], bar, '|'); bar2 >= 0 && e.valEnd-bar2 > 5 {
					if v := b64ToS30(b[bar2+1 : bar2+6]); v > 0 {
						st.firstDate = int64(v) << 2
					}
				}
			}
			nowS := now.Unix()
			switch {
			case st.firstDate != 0 && ck.MaxLife != 0 && (nowS-st.firstDate > int64(ck.MaxLife) || st.firstDate-nowS > 86400):
				st.cli = ckOld
				delim = e.valBeg
				st.firstDate, st.lastDate = 0, 0
			case st.lastDate != 0 && ck.MaxIdle != 0 && (nowS-st.lastDate > int64(ck.MaxIdle) || st.lastDate-nowS > 86400):
				st.cli = ckExpired
				delim = e.valBeg
				st.firstDate, st.lastDate = 0, 0
			}
			if delim != e.valBeg && direct == nil && !st.direct {
				want := b[e.valBeg:delim]
				// The first server in configuration order with this
				// cookie that may take the request.
				for _, s := range *be.rt.byIdx.Load() {
					if s == nil || s.Cookie == "" || s.Cookie != string(want) {
						continue
					}
					if s.OpState() != core.OpStopped || be.Persist {
						if s.OpState() != core.OpStopped {
							st.cli = ckValid
						} else {
							st.cli = ckDown
						}
						direct = s
						st.direct = true
						break
					}
					st.cli = ckDown
				}
			}
			if direct == nil && st.cli != ckDown && st.cli != ckExpired && st.cli != ckOld {
				st.cli = ckInvalid
			}
			switch {
			case ck.Prefix && delim != e.valEnd:
				// NAME=SRV~VALUE reaches the server as NAME=VALUE.
				n := delim + 1 - e.valBeg
				b = append(b[:e.valBeg], b[delim+1:]...)
				prev = e.next - n
				changed = true
				delFrom = -1
				preserve = true
			case delFrom < 0 && ck.Insert && ck.Indirect:
				delFrom = e.prev
			}
		}
		if delFrom >= 0 {
			changed = true
			if preserve {
				b = b[:delFrom]
			} else {
				b = b[:0]
			}
		}
		hc.scratch = b[:0]
		if !changed && len(b) == orig {
			continue
		}
		if len(b) == 0 {
			req.DelField(i)
		} else {
			req.SetValue(i, b)
		}
	}
	return direct
}

func indexByteFrom(b []byte, from int, c byte) int {
	for i := from; i < len(b); i++ {
		if b[i] == c {
			return i
		}
	}
	return -1
}

const base64Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// b64ToS30 reads the 30-bit value of 5 base64 characters, most
// significant first, or -1.
func b64ToS30(b []byte) int {
	v := 0
	for _, c := range b[:5] {
		i := strings.IndexByte(base64Chars, c)
		if i < 0 {
			return -1
		}
		v = v<<6 | i
	}
	return v
}

// appendS30 appends the low 30 bits of v as 5 base64 characters.
func appendS30(b []byte, v int64) []byte {
	for i := 0; i < 5; i++ {
		b = append(b, base64Chars[(v>>24)&0x3f])
		v <<= 6
	}
	return b
}

// serverCookies applies persistence to a response, after the response
// rules: the server's own persistence cookie is kept, removed or
// rewritten as the mode says, and insert mode adds the client's.
func (hc *hconn) serverCookies(be *proxy, srv *server, req, resp *http1.Head, now time.Time) {
	ck := be.CookiePersist
	st := &hc.si.ck
	found := false
	for i := resp.Index("set-cookie", 0); i >= 0; i = resp.Index("set-cookie", i+1) {
		st.present = true
		b := append(hc.scratch[:0], resp.Value(i)...)
		orig := len(b)
		e := scanCookie(b, 0, true, true)
		hc.scratch = b[:0]
		if e.equal == e.valEnd {
			continue
		}
		b = tightenEqual(b, &e)
		if string(b[e.attBeg:e.attEnd]) != ck.Name {
			if len(b) != orig {
				resp.SetValue(i, b)
			}
			continue
		}
		found = true
		st.srv = sckFound
		switch {
		case ck.Preserve:
		case ck.Insert || (st.direct && ck.Indirect):
			resp.DelField(i)
			st.srv = sckDeleted
			continue
		case srv.Cookie != "" && ck.Rewrite:
			v := append([]byte(nil), b[:e.valBeg]...)
			v = append(v, srv.Cookie...)
			v = append(v, b[e.valEnd:]...)
			hc.rwResp.Replace(resp, i, v)
			st.srv = sckReplaced
			continue
		case srv.Cookie != "" && ck.Prefix:
			v := append([]byte(nil), b[:e.valBeg]...)
			v = append(v, srv.Cookie...)
			v = append(v, '~')
			v = append(v, b[e.valBeg:]...)
			hc.rwResp.Replace(resp, i, v)
			st.srv = sckReplaced
			continue
		}
		if len(b) != orig {
			resp.SetValue(i, b)
		}
	}
	cacheable := false
	if ck.NoCache {
		cacheable = responseCacheable(req, resp)
	}
	nowS := now.Unix()
	refresh := !st.direct ||
		((ck.MaxIdle != 0 || st.lastDate != 0) && (st.lastDate == 0 || st.lastDate-nowS < 0)) ||
		(ck.MaxLife != 0 && st.firstDate == 0) ||
		(ck.MaxLife == 0 && st.firstDate != 0)
	if !ck.Insert || (found && ck.Preserve) || !refresh || (ck.PostOnly && req.Method != http1.MethodPOST) {
		return
	}
	v := hc.out[:0]
	v = append(v, ck.Name...)
	v = append(v, '=')
	if srv.Cookie == "" {
		v = append(v, "; Expires=Thu, 01-Jan-1970 00:00:01 GMT; path=/"...)
	} else {
		v = append(v, srv.Cookie...)
		if ck.MaxIdle != 0 || ck.MaxLife != 0 {
			v = append(v, '|')
			v = appendS30(v, (nowS+3)>>2)
			if ck.MaxLife != 0 {
				v = append(v, '|')
				if st.firstDate != 0 {
					v = appendS30(v, st.firstDate>>2)
				} else {
					v = appendS30(v, (nowS+3)>>2)
				}
			}
		}
		v = append(v, "; path=/"...)
	}
	if ck.Domain != "" {
		v = append(v, "; domain="...)
		v = append(v, ck.Domain...)
	}
	if ck.HTTPOnly {
		v = append(v, "; HttpOnly"...)
	}
	if ck.Secure {
		v = append(v, "; Secure"...)
	}
	if ck.Attrs != "" {
		v = append(v, "; "...)
		v = append(v, ck.Attrs...)
	}
	hc.rwResp.Add("Set-Cookie", v)
	hc.out = v[:0]
	if srv.Cookie != "" && st.direct {
		st.srv = sckUpdated
	} else {
		st.srv = sckInserted
	}
	if ck.NoCache && cacheable {
		// A shared cache would give this client's cookie to others.
		hc.rwResp.AddString("Cache-control", "private")
	}
}

// responseCacheable says whether a shared cache may keep resp, as
// HAProxy 2.6.12 judges it for `cookie ... nocache`: a safe method, a
// status cacheable by default, no Pragma or Cache-Control saying otherwise
// ("public" makes any response cacheable), and an expiration time or a
// validator.
func responseCacheable(req, resp *http1.Head) bool {
	ok := false
	switch req.Method {
	case http1.MethodGET, http1.MethodHEAD, http1.MethodOPTIONS, http1.MethodTRACE:
		ok = true
	}
	switch resp.Status {
	case 200, 203, 204, 206, 300, 301, 404, 405, 410, 414, 501:
	default:
		ok = false
	}
	if p, has := resp.Get("pragma"); has && strings.EqualFold(string(p), "no-cache") {
		return false
	}
	fresh := false
	for i := resp.Index("cache-control", 0); i >= 0; i = resp.Index("cache-control", i+1) {
		for e, rest, more := http1.NextValue(resp.Value(i)); more; e, rest, more = http1.NextValue(rest) {
			v := strings.ToLower(string(e))
			switch v {
			case "public":
				ok = true
			case "private", "no-cache", "no-store", "max-age=0", "s-maxage=0":
				ok = false
			default:
				if !strings.HasPrefix(v, "no-cache=\"set-cookie") && (strings.HasPrefix(v, "s-maxage") || strings.HasPrefix(v, "max-age")) {
					fresh = true
				}
			}
		}
	}
	if !fresh && resp.Index("expires", 0) < 0 && resp.Index("etag", 0) < 0 && resp.Index("last-modified", 0) < 0 {
		return false
	}
	return ok
}
