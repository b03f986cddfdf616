package stream

import (
	"bytes"
	"goha/core"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"goha/core/config"
	"goha/core/diag"
)

// rawBackend answers every request with a fixed response, reading requests
// with one buffer per connection and allocating nothing per request.
func rawBackend(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nhello, world\n")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 16384)
				n := 0
				for {
					m, err := c.Read(buf[n:])
					if err != nil {
						return
					}
					n += m
					for {
						i := bytes.Index(buf[:n], []byte("\r\n\r\n"))
						if i < 0 {
							break
						}
						c.Write(resp)
						copy(buf, buf[i+4:n])
						n -= i + 4
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// benchProxy runs a process with nbthread threads, one frontend and one
// server (rawBackend), and returns the frontend's address.
func benchProxy(b *testing.B, nbthread int) string {
	return benchProxyWith(b, nbthread, "")
}

// benchProxyWith is benchProxy with lines added to the frontend.
func benchProxyWith(b *testing.B, nbthread int, feLines string) string {
	be := rawBackend(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	f, _ := ln.(*net.TCPListener).File()
	ln.Close()
	b.Cleanup(func() { f.Close() })
	cfgText := `
global
    nbthread ` + strconv.Itoa(nbthread) + `
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    http-reuse always
frontend fe
    bind fd@` + strconv.Itoa(int(f.Fd())) + `
` + feLines + `
    default_backend be
backend be
    server s1 ` + be + `
`
	d := &diag.Collector{}
	secs := config.Parse("bench.cfg", []byte(cfgText), config.Options{}, d)
	cfg := core.Build(secs, d)
	if d.HasAlert() {
		b.Fatalf("%v", d.All())
	}
	proc := New(cfg)
	proc.Prepare(d)
	if d.HasAlert() {
		b.Fatalf("%v", d.All())
	}
	if err := proc.Run(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(proc.Stop)
	return proc.Listeners(cfg.FindProxy("fe", core.CapFE))[0].String()
}

var (
	benchReq     = []byte("GET / HTTP/1.1\r\nHost: bench\r\nUser-Agent: wrk\r\n\r\n")
	benchRespLen = len("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nhello, world\n")
)

// benchRoundTrip sends one request on c and reads its response.
func benchRoundTrip(c net.Conn, buf []byte) error {
	if _, err := c.Write(benchReq); err != nil {
		return err
	}
	_, err := io.ReadAtLeast(c, buf, benchRespLen)
	return err
}

// BenchmarkProxyKeepAlive measures one keep-alive request through the
// whole HTTP path (accept, parse, route, pick, pooled server connection,
// response relay) in-process; allocs/op counts every allocation of the
// process per request, client and backend included (they allocate none).
func BenchmarkProxyKeepAlive(b *testing.B) {
	c, err := net.Dial("tcp", benchProxy(b, 1))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 4096)
	for i := 0; i < 100; i++ {
		if err := benchRoundTrip(c, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := benchRoundTrip(c, buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProxyKeepAliveParallel is BenchmarkProxyKeepAlive with two
// threads and one client connection per benchmark goroutine, so that the
// threads update the same proxy and server counters at the same time.
func BenchmarkProxyKeepAliveParallel(b *testing.B) {
	addr := benchProxy(b, 2)
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		buf := make([]byte, 4096)
		for pb.Next() {
			if err := benchRoundTrip(c, buf); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRuleChain is BenchmarkProxyKeepAlive through a frontend with a
// chain of ten rules of the kinds real configurations have: ACLs on path
// and host, a map lookup into a variable, a condition on it, header
// rewrites with expressions.
func BenchmarkRuleChain(b *testing.B) {
	mapFile := filepath.Join(b.TempDir(), "routes.map")
	if err := os.WriteFile(mapFile, []byte("bench be1\nother be2\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	addr := benchProxyWith(b, 1, `
    acl is_api path_beg /api
    acl host_ok hdr(host) -i bench other
    acl is_static path_end .css .js .png
    http-request deny if !host_ok
    http-request set-var(txn.route) hdr(host),lower,map_str(`+mapFile+`,none)
    http-request return status 404 if { var(txn.route) -m str none }
    http-request set-header x-route %[var(txn.route)]
    http-request set-header x-client %[src],%[path]
    http-request add-header x-api 1 if is_api
    http-request del-header x-debug if !is_api
    http-request set-var(txn.static) bool(1) if is_static
    http-response set-header x-static yes if { var(txn.static) -m bool }
    use_backend be if host_ok`)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 4096)
	for i := 0; i < 100; i++ {
		if err := benchRoundTrip(c, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := benchRoundTrip(c, buf); err != nil {
			b.Fatal(err)
		}
	}
}
