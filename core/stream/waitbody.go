package stream

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"goha/core/check"
	"goha/core/http1"
)

// http-request and http-response wait-for-body: the rules that follow see
// the message's body (req.body, res.body...) once it is whole, or once
// at-least bytes of it are in, or the buffer is full, as in HAProxy 2.6.
// A wait that runs out is a 408 on the request side, a 504 on the
// response side.

const actWaitBody ruleAction = iota + 200

// waitBodyRule is a compiled wait-for-body.
type waitBodyRule struct {
	time    time.Duration // 0: no limit but the side's own timeout
	atLeast int64         // 0: the whole body
}

// compileRest compiles the actions of waitbody.go and normalize.go;
// handled false for another action.
func compileRest(r *httpRule, args []string, resp bool) (handled bool, err error) {
	switch args[0] {
	case "wait-for-body":
		r.act = actWaitBody
		r.wait, err = compileWaitBody(args[1:])
		return true, err
	case "normalize-uri":
		return true, compileNormalize(r, args[1:])
	}
	return compileCacheAction(r, args, resp)
}

// compileWaitBody reads time <time> [at-least <bytes>] with HAProxy's
// messages.
func compileWaitBody(args []string) (*waitBodyRule, error) {
	const usage = "expects time <time> [ at-least <bytes> ]"
	if len(args) == 0 {
		return nil, fmt.Errorf(usage)
	}
	w := &waitBodyRule{}
	timeSet := false
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return nil, fmt.Errorf("missing argument for '%s'", args[i])
		}
		switch args[i] {
		case "time":
			d, err := check.ParseDelay(args[i+1])
			if err != nil {
				// The first character after the digits is the one
				// HAProxy reports.
				v := args[i+1]
				n := len(v) - len(strings.TrimLeft(v, "0123456789"))
				if n < len(v) {
					return nil, fmt.Errorf("unexpected character '%c'", v[n])
				}
				return nil, fmt.Errorf("time overflow (maximum value is 2147483647 ms or ~24.8 days)")
			}
			w.time, timeSet = d, true
		case "at-least":
			n, bad := parseSizeC(args[i+1])
			if bad != 0 {
				return nil, fmt.Errorf("unexpected character '%c'", bad)
			}
			// More than any buffer holds is the whole body.
			w.atLeast = int64(min(n, 1<<40))
		}
	}
	if !timeSet {
		return nil, fmt.Errorf(usage)
	}
	return w, nil
}

// parseSizeC reads a size as HAProxy's parse_size_err: digits and an
// optional k, m or g; bad is the first character it refuses, 0 if none.
func parseSizeC(s string) (n uint64, bad rune) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + uint64(s[i]-'0')
		i++
	}
	if i == 0 && s != "" {
		return 0, rune(s[0])
	}
	if i < len(s) {
		switch s[i] {
		case 'k', 'K':
			n <<= 10
		case 'm', 'M':
			n <<= 20
		case 'g', 'G':
			n <<= 30
		default:
			return 0, rune(s[i])
		}
		i++
	}
	if i < len(s) {
		return 0, rune(s[i])
	}
	return n, 0
}

// waitTime is how long a wait may last: the rule's time, bounded by the
// side's own timeout (the client's for a request, the server's for a
// response), which HAProxy's wait also ends on; 0 is no limit.
func waitTime(rule, side time.Duration) time.Duration {
	if rule == 0 || side > 0 && side < rule {
		return side
	}
	return rule
}

// readMoreBody reads from conn into buf the body of the head h, which
// starts buf with hlen bytes, until the body is whole, atLeast bytes of
// its data are in (0: only the whole body will do), buf is full, or a
// read fails (a deadline included). It returns the data bytes present
// and the read's error. h follows the bytes when buf moves them.
func readMoreBody(conn net.Conn, buf *http1.Buffer, h *http1.Head, hlen int, atLeast int64) (int64, error) {
	limit := bodyLimit(buf, h)
	var b http1.Body
	defer func() { h.Rebase(buf.Bytes()) }()
	for {
		b.Init(h)
		_, done, err := http1.Complete(buf.Bytes(), hlen, &b)
		if done || err != nil || buf.Len() >= limit || atLeast > 0 && b.Data >= atLeast {
			return b.Data, nil
		}
		if _, err := buf.Fill(conn); err != nil {
			return b.Data, err
		}
	}
}

// bodyLimit is how much of buf a message may fill before the wait for
// its body ends: HAProxy's buffer less its reserve for rewrites.
func bodyLimit(buf *http1.Buffer, h *http1.Head) int {
	if h.MaxSize > 0 {
		return min(buf.Cap(), h.MaxSize)
	}
	return buf.Cap()
}

// wholeRequest says whether the request being handled is all in cbuf,
// body included, and how many bytes it takes there: a proxy's reply then
// lets the connection go on, as HAProxy's does.
func (hc *hconn) wholeRequest(cbuf *http1.Buffer, hlen int) (bool, int) {
	switch hc.req.Body {
	case http1.BodyNone:
		return true, hlen
	case http1.BodyTunnel:
		return false, hlen
	}
	var b http1.Body
	b.Init(&hc.req)
	n, done, err := http1.Complete(cbuf.Bytes(), hlen, &b)
	return done && err == nil, n
}

// bodyless says whether a message has no body to wait for.
func bodyless(h *http1.Head) bool {
	return h.Body == http1.BodyNone || h.Body == http1.BodyTunnel || h.Method == http1.MethodCONNECT
}

// waitReqBody runs an http-request wait-for-body. It returns false when
// the wait ran out: the client then has its 408 and the stream is logged.
func (proc *Process) waitReqBody(px *proxy, r *httpRule, c net.Conn, cbuf *http1.Buffer, hc *hconn, hlen int, si *streamInfo) bool {
	req := &hc.req
	fe := si.fe
	if bodyless(req) {
		return true
	}
	data, err := hc.readReqBody(c, cbuf, hlen, r.wait.atLeast, waitTime(r.wait.time, fe.Timeouts.Client))
	hc.dl.armRead(c, time.Now(), fe.Timeouts.Client)
	si.host = req.Host()
	if err != nil && isTimeout(err) {
		fe.FE.Ereq.Add(1)
		si.bytesIn += data
		si.status, si.term = 408, [2]byte{'c', 'R'}
		// HAProxy counts the request's time once its rules are done.
		si.trq = -1
		proc.replyError(px, c, 408, http1.ConnClose, si)
		return false
	}
	hc.roomReq.addData(data)
	// A client that closed, or sent something the body's framing
	// refuses, ends the wait; what follows deals with it.
	hc.ss.body, hc.ss.bodyOK = decodeBody(hc.ss.body[:0], cbuf.Bytes()[hlen:], req), true
	return true
}

// readReqBody reads the body of the request being handled as
// readMoreBody does, within to. A client that waits for a
// 100-continue gets it first, when the body is not all in yet, and the
// Expect field goes, as HAProxy does before it waits for a body.
func (hc *hconn) readReqBody(c net.Conn, cbuf *http1.Buffer, hlen int, atLeast int64, to time.Duration) (int64, error) {
	req := &hc.req
	if req.Flags&http1.FlagExpect100 != 0 {
		var b http1.Body
		b.Init(req)
		if _, done, err := http1.Complete(cbuf.Bytes(), hlen, &b); !done && err == nil && cbuf.Len() < bodyLimit(cbuf, req) {
			c.Write([]byte("HTTP/1.1 100 Continue\r\n\r\n"))
		}
		req.Del("expect")
		req.Flags &^= http1.FlagExpect100
	}
	hc.dl.armRead(c, time.Now(), to)
	return readMoreBody(c, cbuf, req, hlen, atLeast)
}

// bodyWait is what an http-response wait-for-body reads: the server
// connection of the response whose head is the hlen first bytes of its
// buffer; sc nil outside http-response rules.
type bodyWait struct {
	sc       *srvConn
	hlen     int
	size     int64 // the head's size as HAProxy counts it
	data     int64 // body bytes read when the wait ran out
	timedOut bool
}

// waitRespBody runs an http-response wait-for-body; it returns false
// when the wait ran out.
func (hc *hconn) waitRespBody(r *httpRule) bool {
	bw := &hc.bw
	resp := &hc.resp
	if bw.sc == nil || bodyless(resp) {
		return true
	}
	be := hc.si.be
	sc := bw.sc
	sc.dl.armBoth(sc, time.Now(), waitTime(r.wait.time, hc.serverTimeout(be)))
	data, err := readMoreBody(sc, sc.buf, resp, bw.hlen, r.wait.atLeast)
	sc.dl.armBoth(sc, time.Now(), hc.serverTimeout(be))
	if err != nil && isTimeout(err) {
		bw.timedOut, bw.data = true, data
		return false
	}
	hc.ss.resBody, hc.ss.resBodyOK = decodeBody(hc.ss.resBody[:0], sc.buf.Bytes()[bw.hlen:], resp), true
	return true
}

// respWaitTimedOut ends an exchange whose http-response wait-for-body ran
// out: the client has a 504 and the server connection is closed, as in
// HAProxy, which logs no Tr but counts what came of the response in the
// bytes out.
func (proc *Process) respWaitTimedOut(fe *proxy, c net.Conn, cbuf *http1.Buffer, hc *hconn, si *streamInfo) (keep bool) {
	si.status, si.term = 504, [2]byte{'s', 'R'}
	si.gotResp = false
	si.bytesOut += hc.bw.size + hc.bw.data
	return proc.errorReply(fe, c, cbuf, hc, si, 504, hc.reqPending, hc.reqBody.Done())
}

// hasTR says whether the log has a TR: the request head was read and
// its rules did not abort it.
func (si *streamInfo) hasTR() bool { return len(si.reqLine) > 0 && si.trq >= 0 }

// errWaitBody is an http-response wait-for-body that ran out.
var errWaitBody = errors.New("core: wait-for-body timed out on the response")

// badRuleRequest answers 400 to a request a rule found invalid (a strict
// normalize-uri), closing, and logs it, as HAProxy's rules do with a
// request they refuse.
func (proc *Process) badRuleRequest(px *proxy, c net.Conn, si *streamInfo) {
	si.fe.FE.Ereq.Add(1)
	si.status, si.term = 400, [2]byte{'P', 'R'}
	si.trq = -1
	proc.replyError(px, c, 400, http1.ConnClose, si)
}
