package stream

import (
	"bytes"
	"fmt"
	"goha/core"
	"net"
	"strconv"
	"testing"
	"time"

	"goha/core/config"
	"goha/core/diag"
)

// smuggleSeeds are request-smuggling vectors: framing conflicts (CL.TE,
// TE.CL, duplicate lengths, Transfer-Encoding spellings), chunk-size and
// extension edge cases, bodiless methods and responses followed by a
// pipelined request, line-ending and control-byte oddities, oversized
// parts. Each hides, where it can, a request for /admin that a proxy
// framing the bytes differently from the origin would pass unchecked.
var smuggleSeeds = []string{
	// Plain traffic.
	"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /a1 HTTP/1.1\r\nHost: a\r\n\r\nGET /a2 HTTP/1.1\r\nHost: a\r\n\r\n\n~~\nGET /b1 HTTP/1.1\r\nHost: b\r\n\r\n",
	"POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET http://a/admin HTTP/1.1\r\nHost: a\r\n\r\n",
	// CL.TE and TE.CL.
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n2c\r\nGET /admin HTTP/1.1\r\nHost: a\r\nX: 1234567\r\n\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 35\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nX: y\r\n\r\n",
	// Duplicate and odd Content-Length.
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 37\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\nhelloGET /x HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\nhelloGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x5\r\n\r\nhelloGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length : 5\r\n\r\nhelloGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\nhello",
	// Transfer-Encoding spellings.
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\nContent-Length: 5\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\tchunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: CHUNKED\r\n\r\n0\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\n Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nX: y\r\n\tTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	// Chunk sizes and extensions.
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=\"a\r\nb\"\r\nhello\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0000000000000000000005\r\nhello\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff1\r\nhello\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nhello\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Trailer: 1\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n",
	// Bodiless requests and responses, then a pipelined request.
	"HEAD / HTTP/1.1\r\nHost: a\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 37\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello",
	"GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	// CONNECT, HTTP/1.0.
	"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nContent-Length: 37\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\n\r\nGET /x HTTP/1.0\r\n\r\n",
	// Line endings, control bytes, request-line oddities.
	"GET / HTTP/1.1\nHost: a\n\nGET /x HTTP/1.1\nHost: a\n\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\n0\n\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\r\n\r\nhelloGET /admin HTTP/1.1\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\nContent-Length: 5\r\n\r\nhello",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5,\r\n\r\nhelloGET /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /admin?x HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET  /admin HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /x HTTP/1.1 \r\nHost: a\r\n\r\n",
	"GET /x HTTP/2.0\r\nHost: a\r\n\r\n",
	// Oversized parts.
	"GET /" + string(bytes.Repeat([]byte("a"), 20000)) + " HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX: " + string(bytes.Repeat([]byte("b"), 17000)) + "\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 40000\r\n\r\n" + string(bytes.Repeat([]byte("c"), 40000)) + "GET /x HTTP/1.1\r\nHost: a\r\n\r\n",
}

// startSmuggleProxy runs goha in-process with smuggleRules in front of
// origin and returns its address.
func startSmuggleProxy(t testing.TB, origin string) (string, *Process) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	d := &diag.Collector{}
	bind := "fd@" + strconv.Itoa(int(f.Fd()))
	secs := config.Parse("smuggle.cfg", []byte(fmt.Sprintf(smuggleRules, bind, origin)), config.Options{}, d)
	cfg := core.Build(secs, d)
	if d.HasAlert() {
		f.Close()
		t.Fatalf("%v", d.All())
	}
	cfg.Global.NbThread = 1
	proc := New(cfg)
	if err := proc.Run(); err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		proc.Stop()
		f.Close()
	})
	return proc.Listeners(cfg.FindProxy("fe", core.CapFE))[0].String(), proc
}

// settleSmuggle waits until proc serves no client connection. Processes
// come and go by the thousand in a fuzz worker, and a port an origin
// listened on is soon another's: a stream still running after its
// iteration could reach the next one's origin.
func settleSmuggle(t testing.TB, proc *Process) {
	// curConns rather than streams: a WaitGroup may not be waited on
	// while the accept loop can still add to it.
	for end := time.Now().Add(smuggleDeadline); proc.curConns.Load() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Errorf("a stream is still running after its clients have gone")
			return
		}
	}
}

// FuzzSmuggle sends a fuzzed request stream through goha from two clients
// and checks the smuggling invariants (see smuggleRules).
func FuzzSmuggle(f *testing.F) {
	for _, s := range smuggleSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<17 {
			t.Skip("larger than any buffer the proxy would hold")
		}
		a, b := smuggleSplit(data)
		o := newSmuggleOrigin(t)
		defer o.close()
		addr, proc := startSmuggleProxy(t, o.addr())
		runSmuggle(t, addr, o, a, b, func() { settleSmuggle(t, proc) })
	})
}
