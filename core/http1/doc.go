// Package http1 is goha's HTTP/1.x message layer: it parses request and
// response heads in place, follows body framing, rebuilds heads that must
// change, and holds HAProxy's error replies. It owns bytes, not sockets:
// core's stream decides where the bytes go.
//
// # Design
//
// Every type here is a plain state machine over byte slices owned by one
// connection; nothing reads from or writes to the network except the two
// goroutine-transport helpers Buffer.Fill and Forward, and Rewriter.WriteTo,
// which take an io.Reader or io.Writer. An epoll transport uses the same
// types with its own reads and writes:
//
//	Buffer   read buffer: Free/Commit (event loop) or Fill (goroutine)
//	Head     ParseRequest/ParseResponse over Buffer.Bytes(), in place,
//	         resumable when the head is incomplete; fields are offsets
//	         into the buffer, so a parsed head allocates nothing
//	Body     Scan(p) says how much of p belongs to the body and whether
//	         it ends there; validates chunked framing as bytes pass
//	Rewriter rebuilds a head into a scratch buffer (deleted fields,
//	         added fields, X-Forwarded-For, Connection); Buffers gives
//	         head+body as a net.Buffers kept inside it, for one writev
//	Reply    HAProxy's error messages, prebuilt for each connection mode
//
// # A request on the goroutine transport
//
//	n, err := req.ParseRequest(cbuf.Bytes())   // until n > 0 (Fill between)
//	if err != nil { write RawError(err.(*http1.Error).Status()); close }
//	// routing: req.Method, req.Path(), req.Host(), req.Index("x-foo", 0) ...
//	body.Init(&req)
//	m, done, err := http1.Complete(cbuf.Bytes(), n, &body)
//	rw.Reset(); rw.SetConnection(&req, mode); rw.AddForwardedFor("", ip)
//	rw.WriteTo(server, &req, cbuf.Bytes()[n:m])  // one write or one writev
//	if !done { cbuf.Discard(m); http1.Forward(server, cbuf, client, &body) }
//	// read the response head into sbuf the same way, with
//	// resp.ParseResponse(sbuf.Bytes(), req.Method); skip IsInterim heads
//	// after forwarding them; BodyTunnel after 101 means copy both ways.
//
// Keep the request bytes in the client buffer (Discard them) only once the
// response head has arrived, so that a request sent on a stale pooled
// connection can be retried.
//
// Heads and bodies follow HAProxy 2.6's rules; docs/http.md lists them and
// the differences.
package http1
