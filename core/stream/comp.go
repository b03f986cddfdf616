package stream

import (
	"errors"
	"io"
	"net"
	"strconv"
	"time"

	"goha/core"
	"goha/core/comp"
	"goha/core/freq"
	"goha/core/http1"
)

// compState is an exchange's HTTP compression, as HAProxy 2.6's
// compression filter runs it: the request selects an algorithm
// (compRequest), the response head decides whether it applies
// (compResponse, before the response rules, so that res.comp sees it),
// then relayCompressed sends the response re-encoded and chunked.
type compState struct {
	algo   comp.Algo
	chosen bool // the request selected algo
	active bool // the response is being compressed
	// z and out are scratch space kept between exchanges: the encoder's
	// output, and the chunks built around it.
	z, out, trailers []byte
}

// compRequest selects the exchange's algorithm from its request, once the
// request rules have run and the backend is known, and removes
// Accept-Encoding under compression offload.
func (hc *hconn) compRequest(fe, be *proxy, req *http1.Head) {
	hc.comp.chosen, hc.comp.active = false, false
	hc.ss.comp = &hc.comp
	if fe.Comp == nil && be.Comp == nil {
		return
	}
	hc.compSelect(fe, be, req)
}

func (hc *hconn) compSelect(fe, be *proxy, req *http1.Head) {
	if ua, ok := req.Get("user-agent"); ok && comp.BadUserAgent(ua) {
		return
	}
	algos := compAlgos(fe, be)
	var ch comp.Choice
	for i := req.Index("accept-encoding", 0); i >= 0 && len(algos) > 0; i = req.Index("accept-encoding", i+1) {
		ch.Field(req.Value(i), algos)
	}
	if ch.Found {
		hc.comp.algo, hc.comp.chosen = ch.Algo, true
		if (be.Comp != nil && be.Comp.Offload) || (fe.Comp != nil && fe.Comp.Offload) {
			req.Del("accept-encoding")
		}
		return
	}
	// identity needs no Accept-Encoding.
	for _, a := range algos {
		if a == comp.Identity {
			hc.comp.algo, hc.comp.chosen = a, true
			return
		}
	}
}

// compAlgos and compTypes are the backend's lists when it has some, else
// the frontend's.
func compAlgos(fe, be *proxy) []comp.Algo {
	if be.Comp != nil && len(be.Comp.Algos) > 0 {
		return be.Comp.Algos
	}
	if fe.Comp != nil {
		return fe.Comp.Algos
	}
	return nil
}

func compTypes(fe, be *proxy) []string {
	if be.Comp != nil && len(be.Comp.Types) > 0 {
		return be.Comp.Types
	}
	if fe.Comp != nil {
		return fe.Comp.Types
	}
	return nil
}

// compResponse decides whether the response is compressed: an algorithm
// was selected, both messages are HTTP/1.1, the request is no HEAD, the
// status is 200 to 203, the body has a known length and is not empty, and the server did
// not encode it, forbid it (no-transform), send a malformed or several
// ETags, or a Content-Type outside the list.
func (hc *hconn) compResponse(proc *Process, fe, be *proxy, req, resp *http1.Head) {
	if !hc.comp.chosen {
		return
	}
	hc.comp.active = compApplies(req, resp, compTypes(fe, be))
	// The rate limit set on the stats socket (set rate-limit
	// http-compression global), in kB/s of input.
	if lim := proc.Conf.RateLimit(core.RateCompression); hc.comp.active && lim > 0 && compRate.in.Rate(time.Now()) > int64(lim)*1024 {
		hc.comp.active = false
	}
}

func compApplies(req, resp *http1.Head, types []string) bool {
	if resp.Flags&http1.FlagVer11 == 0 || req.Flags&http1.FlagVer11 == 0 {
		return false
	}
	if req.Method == http1.MethodHEAD || req.Method == http1.MethodCONNECT {
		return false
	}
	if st := resp.Status; st < 200 || st > 203 {
		return false
	}
	// A body of known length; an empty one (Content-Length: 0) is left
	// as it is, as HAProxy leaves a bodiless message.
	if resp.Body != http1.BodyLength && resp.Body != http1.BodyChunked {
		return false
	}
	if resp.Index("content-encoding", 0) >= 0 {
		return false
	}
	for i := resp.Index("cache-control", 0); i >= 0; i = resp.Index("cache-control", i+1) {
		if comp.NoTransform(resp.Value(i)) {
			return false
		}
	}
	if i := resp.Index("etag", 0); i >= 0 {
		if comp.ETagKind(resp.Value(i)) == comp.ETagInvalid || resp.Index("etag", i+1) >= 0 {
			return false
		}
	}
	ct, has := resp.Get("content-type")
	return comp.TypeAllowed(ct, has, types)
}

// compHead rewrites the response head for its new encoding: the
// Content-Encoding (none for identity), chunked framing in place of a
// Content-Length, a weak ETag, and Vary.
func (hc *hconn) compHead(resp *http1.Head) {
	rw := &hc.rwResp
	if i := resp.Index("etag", 0); i >= 0 {
		if v := resp.Value(i); comp.ETagKind(v) == comp.ETagStrong {
			hc.comp.z = comp.WeakETag(hc.comp.z[:0], v)
			resp.ReplaceValue(i, hc.comp.z)
		}
	}
	if resp.Flags&http1.FlagContentLength != 0 {
		resp.Del("content-length")
	}
	// In the order HAProxy 2.6 sends them.
	if resp.Body != http1.BodyChunked {
		rw.AddString("Transfer-Encoding", "chunked")
	}
	rw.AddString("Vary", "Accept-Encoding")
	if hc.comp.algo != comp.Identity {
		rw.AddString("Content-Encoding", hc.comp.algo.Coding())
	}
}

// relayCompressed sends the response whose head the rules have passed,
// its body compressed as it arrives: each read from the server goes out
// as one chunk, flushed to a byte boundary, as HAProxy passes each
// buffer on. It returns as relayResponse does.
func (proc *Process) relayCompressed(fe, be *proxy, srv *server, sc *srvConn, c net.Conn, hc *hconn, req, resp *http1.Head, si *streamInfo, clientKeep bool, hlen int, respSize int64) (int, bool, error) {
	cs := &hc.comp
	sbuf := sc.buf
	keepClient := clientKeep && http1.KeepClient(req, resp) && hc.reqBody.Done() && !proc.stoppingNow()
	si.keepClient = keepClient
	hc.rwResp.SetConnection(resp, http1.ConnForResponse(resp, req, keepClient))
	hc.compHead(resp)
	hc.rsBody.Init(resp)
	enc := comp.Get(cs.algo, proc.Conf.Global.CompMaxLevel)
	defer comp.Put(enc)
	out := append(cs.out[:0], hc.rwResp.Head(resp)...)
	cs.trailers = cs.trailers[:0]
	sbuf.Discard(hlen)
	var sent int64
	defer func() {
		cs.out = out[:0]
		compCount(fe, be, cs.algo, hc.rsBody.Data, sent)
		if !si.logged {
			// HAProxy counts a response's bytes as they come from the
			// server, before the compression.
			si.bytesOut += respSize + hc.rsBody.Data
		}
	}()
	first, streamed := true, false
	defer func() {
		if streamed {
			hc.dl.write.arm(c.SetWriteDeadline, time.Time{}, 0)
		}
	}()
	for {
		n, err := compFeed(&hc.rsBody, sbuf.Bytes(), enc, &cs.trailers)
		// The cache filter comes before compression: it keeps the
		// body as the server sent it.
		hc.cacheBody(sbuf.Bytes()[:n])
		sbuf.Discard(n)
		if err != nil {
			return resp.Status, false, errHeadersSent
		}
		done := hc.rsBody.Done()
		z := cs.z[:0]
		if done {
			z = enc.Close(z)
		} else if n > 0 {
			z = enc.Flush(z)
		}
		cs.z = z
		sent += int64(len(z))
		out = appendChunk(out, z)
		if done {
			if len(cs.trailers) == 0 {
				cs.trailers = append(cs.trailers, "\r\n"...)
			}
			out = append(out, "0\r\n"...)
			out = append(out, cs.trailers...)
			if first {
				// The whole response goes out in one write: counted,
				// logged and stored first, as relayResponse does.
				si.bytesOut += respSize + hc.rsBody.Data
				compDone(fe, be)
				proc.exchangeDone(fe, be, srv, hc, time.Now())
				hc.cacheDone()
			}
		}
		if len(out) > 0 {
			if first && !done {
				// A streamed body can block on a client that does not
				// read: its writes get the client timeout.
				hc.cliIO = activeConn{c: c, dl: &hc.dl.write, to: fe.Timeouts.Client, kind: armWrite}
				streamed = true
			}
			var w io.Writer = c
			if !done || !first {
				w = &hc.cliIO
			}
			if _, err := w.Write(out); err != nil {
				var oe *net.OpError
				if errors.As(err, &oe) && oe.Timeout() {
					return resp.Status, false, errClientTimeout
				}
				return resp.Status, false, errClientGone
			}
			out = out[:0]
		}
		if done {
			break
		}
		if first {
			first = false
			hc.takeBytes(sc)
			hc.ent.setPhase(PhaseBody, si.accept.Add(si.tr))
			hc.srvIO = activeConn{c: sc, dl: &sc.dl.both, to: hc.serverTimeout(be), kind: armBoth}
		}
		if _, err := sbuf.Fill(&hc.srvIO); err != nil {
			if err == io.EOF {
				err = hc.rsBody.EOF()
				if err == nil {
					continue
				}
			}
			if isTimeout(err) {
				return resp.Status, false, errBodyTimeout
			}
			return resp.Status, false, errHeadersSent
		}
	}
	if !first {
		compDone(fe, be)
	}
	hc.cacheDone()
	keepSrv := resp.KeepAlive() && sbuf.Len() == 0 && req.Flags&http1.FlagCloseServer == 0 && fe.ConnMode == core.HTTPKeepAlive && be.ConnMode == core.HTTPKeepAlive && hc.reqBody.Done()
	return resp.Status, keepSrv, nil
}

// compFeed passes the payload in p to enc and keeps a chunked body's
// trailer part, framing aside. It returns how many bytes of p the body
// took.
func compFeed(b *http1.Body, p []byte, enc *comp.Encoder, trailers *[]byte) (int, error) {
	used := 0
	for used < len(p) && !b.Done() {
		if b.NeedCR() {
			b.WroteCR()
			if b.InTrailers() {
				*trailers = append(*trailers, '\r')
			}
		}
		rest := p[used:]
		if left := b.DataLeft(); left != 0 {
			k := len(rest)
			if left > 0 && int64(k) > left {
				k = int(left)
			}
			n, _, err := b.Scan(rest[:k])
			enc.Write(rest[:n])
			used += n
			if err != nil {
				return used, err
			}
			continue
		}
		tr := b.InTrailers()
		n, _, err := b.Scan(rest[:1])
		if err != nil {
			return used, err
		}
		if tr {
			*trailers = append(*trailers, rest[:n]...)
		}
		used += n
	}
	return used, nil
}

// appendChunk frames z as one chunk; nothing for an empty z, which would
// end the body.
func appendChunk(out, z []byte) []byte {
	if len(z) == 0 {
		return out
	}
	out = strconv.AppendInt(out, int64(len(z)), 16)
	out = append(out, "\r\n"...)
	out = append(out, z...)
	return append(out, "\r\n"...)
}

// compCount adds a response's bytes to the compression counters:
// through the compressor, or past it for identity, which HAProxy counts
// as bypassing it.
func compCount(fe, be *proxy, algo comp.Algo, in, out int64) {
	if algo == comp.Identity {
		fe.FE.CompByp.Add(in)
		be.BE.CompByp.Add(in)
		return
	}
	compRate.add(in, out)
	fe.FE.CompIn.Add(in)
	fe.FE.CompOut.Add(out)
	be.BE.CompIn.Add(in)
	be.BE.CompOut.Add(out)
}

// compDone counts a compressed response, once its body has ended.
func compDone(fe, be *proxy) {
	fe.FE.CompRsp.Add(1)
	be.BE.CompRsp.Add(1)
}

// compRate is the process's compression rate: payload bytes into the
// compressor and compressed bytes out of it, per second (show info's
// CompressBpsIn and CompressBpsOut; the http-compression rate limit
// reads the input's).
var compRate compRates

type compRates struct{ in, out freq.Ctr }

func (r *compRates) add(in, out int64) {
	now := time.Now()
	r.in.Add(now, in)
	r.out.Add(now, out)
}

// CompressBps is the compression rate, in and out, in bytes per second.
func CompressBps(now time.Time) (in, out int64) {
	return compRate.in.Rate(now), compRate.out.Rate(now)
}

// ResComp is res.comp and res.comp_algo.
func (ss *sampleStream) ResComp() (string, bool) {
	if ss.comp == nil || !ss.comp.active {
		return "", false
	}
	return ss.comp.algo.Name(), true
}

// compReply sends a response whose body is all in memory (a cache hit)
// compressed, as relayCompressed sends a server's: HAProxy's cache keeps
// responses as the server sent them and the compression filter after it
// encodes each hit for its request. It returns the write's error.
func (proc *Process) compReply(fe, be *proxy, c net.Conn, hc *hconn, resp *http1.Head, body []byte) error {
	cs := &hc.comp
	hc.compHead(resp)
	var b http1.Body
	b.Init(resp)
	enc := comp.Get(cs.algo, proc.Conf.Global.CompMaxLevel)
	defer comp.Put(enc)
	cs.trailers = cs.trailers[:0]
	if _, err := compFeed(&b, body, enc, &cs.trailers); err != nil || !b.Done() {
		return errHeadersSent
	}
	cs.z = enc.Close(cs.z[:0])
	out := append(cs.out[:0], hc.rwResp.Head(resp)...)
	out = appendChunk(out, cs.z)
	if len(cs.trailers) == 0 {
		cs.trailers = append(cs.trailers, "\r\n"...)
	}
	out = append(out, "0\r\n"...)
	out = append(out, cs.trailers...)
	cs.out = out[:0]
	compCount(fe, be, cs.algo, b.Data, int64(len(cs.z)))
	compDone(fe, be)
	_, err := c.Write(out)
	return err
}
