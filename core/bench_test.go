package core

import (
	"bytes"
	"io"
	"net"
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

// BenchmarkProxyKeepAlive measures one keep-alive request through the
// whole HTTP path (accept, parse, route, pick, pooled server connection,
// response relay) in-process; allocs/op counts every allocation of the
// process per request, client and backend included (they allocate none).
func BenchmarkProxyKeepAlive(b *testing.B) {
	be := rawBackend(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	f, _ := ln.(*net.TCPListener).File()
	ln.Close()
	defer f.Close()
	cfgText := `
global
    nbthread 1
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    http-reuse always
frontend fe
    bind fd@` + strconv.Itoa(int(f.Fd())) + `
    default_backend be
backend be
    server s1 ` + be + `
`
	d := &diag.Collector{}
	secs := config.Parse("bench.cfg", []byte(cfgText), config.Options{}, d)
	cfg := Build(secs, d)
	if d.HasAlert() {
		b.Fatalf("%v", d.All())
	}
	proc := NewProcess(cfg)
	if err := proc.Run(); err != nil {
		b.Fatal(err)
	}
	defer proc.Stop()
	addr := proc.Listeners(cfg.FindProxy("fe", CapFE))[0].String()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := []byte("GET / HTTP/1.1\r\nHost: bench\r\nUser-Agent: wrk\r\n\r\n")
	want := len("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nhello, world\n")
	buf := make([]byte, 4096)
	roundTrip := func() {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadAtLeast(c, buf, want); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 100; i++ {
		roundTrip()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		roundTrip()
	}
}

// BenchmarkProxyKeepAliveParallel is BenchmarkProxyKeepAlive with two
// threads and one client connection per benchmark goroutine, so that the
// threads update the same proxy and server counters at the same time.
func BenchmarkProxyKeepAliveParallel(b *testing.B) {
	be := rawBackend(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	f, _ := ln.(*net.TCPListener).File()
	ln.Close()
	defer f.Close()
	cfgText := `
global
    nbthread 2
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    http-reuse always
frontend fe
    bind fd@` + strconv.Itoa(int(f.Fd())) + `
    default_backend be
backend be
    server s1 ` + be + `
`
	d := &diag.Collector{}
	secs := config.Parse("bench.cfg", []byte(cfgText), config.Options{}, d)
	cfg := Build(secs, d)
	if d.HasAlert() {
		b.Fatalf("%v", d.All())
	}
	proc := NewProcess(cfg)
	if err := proc.Run(); err != nil {
		b.Fatal(err)
	}
	defer proc.Stop()
	addr := proc.Listeners(cfg.FindProxy("fe", CapFE))[0].String()
	req := []byte("GET / HTTP/1.1\r\nHost: bench\r\nUser-Agent: wrk\r\n\r\n")
	want := len("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nhello, world\n")
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
			if _, err := c.Write(req); err != nil {
				b.Error(err)
				return
			}
			if _, err := io.ReadAtLeast(c, buf, want); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
