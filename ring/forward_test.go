package ring

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tcpSink is a TCP syslog receiver that keeps every byte it gets.
type tcpSink struct {
	ln    net.Listener
	mu    sync.Mutex // guards following fields
	data  bytes.Buffer
	conns []net.Conn
	wg    sync.WaitGroup
}

func newSink(t *testing.T, addr string) *tcpSink {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &tcpSink{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					s.mu.Lock()
					s.data.Write(buf[:n])
					s.mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return s
}

func (s *tcpSink) bytes() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data.String()
}

// close stops listening and resets every connection.
func (s *tcpSink) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *tcpSink) waitLen(t *testing.T, n int) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b := s.bytes()
		if len(b) >= n {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("sink got %d bytes, want %d: %q", len(b), n, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The bytes on the wire are those HAProxy 2.6 sent (ring.md §4.3).
func TestForwardWireBytes(t *testing.T) {
	meta := func(us int) *Meta {
		return &Meta{Facility: 16, Level: LevelInfo, Host: []byte("gw1"), Tag: []byte("haproxy"), PID: []byte("27703"),
			Time: time.Date(2026, 11, 29, 20, 53, 44, us*1000, time.UTC)}
	}
	cases := []struct {
		format Format
		proto  Proto
		us     int
		msgs   []string
		want   string
	}{
		{FormatRFC3164, ProtoLegacy, 129705, []string{"hello GET /one 200", "hello GET /one 200"},
			"<134>Nov 29 20:53:44 gw1 haproxy[27703]: hello GET /one 200\n<134>Nov 29 20:53:44 gw1 haproxy[27703]: hello GET /one 200\n"},
		{FormatRFC5424, ProtoLegacy, 129705, []string{"hello GET /one 200"},
			"<134>1 2026-11-29T20:53:44.129705+00:00 gw1 haproxy 27703 - - hello GET /one 200\n"},
		{FormatRFC5424, ProtoOctetCount, 129720, []string{"hello GET /one 200", "hello GET /one 200"},
			"80 <134>1 2026-11-29T20:53:44.129720+00:00 gw1 haproxy 27703 - - hello GET /one 200" +
				"80 <134>1 2026-11-29T20:53:44.129720+00:00 gw1 haproxy 27703 - - hello GET /one 200"},
		{FormatRFC3164, ProtoOctetCount, 0, []string{"hello GET /one 200"},
			"59 <134>Nov 29 20:53:44 gw1 haproxy[27703]: hello GET /one 200"},
		{FormatRaw, ProtoOctetCount, 0, []string{"hello GET /legacy-test-1 200", "hello GET /legacy-test-2 200", "hello GET /with%20space?q=1 200"},
			"28 hello GET /legacy-test-1 20028 hello GET /legacy-test-2 20031 hello GET /with%20space?q=1 200"},
	}
	for _, c := range cases {
		t.Run(c.format.String()+"/"+c.proto.String(), func(t *testing.T) {
			s := newSink(t, "127.0.0.1:0")
			defer s.close()
			r := New("cap", DefaultSize)
			r.Format = c.format
			r.Servers = []*Server{{Name: "cap", Addr: s.ln.Addr().String(), Proto: c.proto}}
			ctx, cancel := context.WithCancel(context.Background())
			defer func() { cancel(); r.Wait() }()
			r.Start(ctx)
			for _, m := range c.msgs {
				r.Log(meta(c.us), FormatUnspec, 1023, []byte(m))
			}
			if got := s.waitLen(t, len(c.want)); got != c.want {
				t.Fatalf("wire bytes\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// A server that goes away keeps its position: events written while it is
// down arrive in order once it is back, and drops are announced exactly.
func TestForwardReconnectBacklog(t *testing.T) {
	for _, proto := range []Proto{ProtoLegacy, ProtoOctetCount} {
		t.Run(proto.String(), func(t *testing.T) {
			s := newSink(t, "127.0.0.1:0")
			addr := s.ln.Addr().String()
			r := New("bk", 400)
			srv := &Server{Name: "s", Addr: addr, Proto: proto}
			r.Servers = []*Server{srv}
			ctx, cancel := context.WithCancel(context.Background())
			defer func() { cancel(); r.Wait() }()
			r.Start(ctx)
			waitFor(t, srv.Connected)
			r.Write([]byte("first"))
			s.waitLen(t, 6)
			waitFor(t, func() bool { return srv.Sent() == 1 })
			s.close()
			waitFor(t, func() bool { return !srv.Connected() })
			// 400 bytes hold 20 records of 1+18 bytes; the rest drop.
			stored := 0
			for i := 0; i < 30; i++ {
				if r.Write([]byte(fmt.Sprintf("backlog-event-%04d", i))) {
					stored++
				}
			}
			if stored != 21 || r.Dropped() != 9 {
				t.Fatalf("stored %d dropped %d", stored, r.Dropped())
			}
			s2 := newSink(t, addr)
			defer s2.close()
			frame := FrameLF
			if proto == ProtoOctetCount {
				frame = FrameOctet
			}
			var want []byte
			for i := 0; i < stored; i++ {
				want = frame(want, []byte(fmt.Sprintf("backlog-event-%04d", i)), nil)
			}
			// The backlog frees the ring as it is delivered; the next
			// event then finds room for the drop announcement.
			s2.waitLen(t, len(want))
			// The forwarder frees what it sent once its write returned,
			// which may be after the sink has read it all.
			waitFor(t, func() bool { return srv.Sent() == uint64(1+stored) })
			r.Write([]byte("after"))
			want = frame(want, []byte("9 events dropped"), nil)
			want = frame(want, []byte("after"), nil)
			if got := s2.waitLen(t, len(want)); got != string(want) {
				t.Fatalf("after reconnect\n got %q\nwant %q", got, want)
			}
			if srv.Connects() != 2 {
				t.Fatalf("connects = %d", srv.Connects())
			}
		})
	}
}

// Reconnection attempts are spaced by a second.
func TestForwardReconnectPace(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	r := New("p", 1024)
	srv := &Server{Name: "s", Addr: addr}
	r.Servers = []*Server{srv}
	ctx, cancel := context.WithCancel(context.Background())
	r.Start(ctx)
	time.Sleep(1500 * time.Millisecond)
	s := newSink(t, addr)
	defer s.close()
	r.Write([]byte("late"))
	s.waitLen(t, 5)
	cancel()
	r.Wait()
	// A server that never answered holds no position: the ring wrapped
	// freely and nothing was counted.
	if r.TotalDropped() != 0 {
		t.Fatalf("dropped %d", r.TotalDropped())
	}
}

// A server that stops reading is cut after timeout server and its
// in-flight bytes are lost, as in HAProxy; the rest follows on the next
// connection.
func TestForwardServerTimeout(t *testing.T) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	r := New("to", 8<<20)
	r.TimeoutServer = 200 * time.Millisecond
	srv := &Server{Name: "s", Addr: ln.Addr().String()}
	r.Servers = []*Server{srv}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); r.Wait() }()
	r.Start(ctx)
	first := <-accepted // never read from
	defer first.Close()
	line := strings.Repeat("z", 1000)
	for i := 0; i < 6000; i++ {
		r.Write([]byte(line))
	}
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("no reconnection after the write timeout")
	}
}

func BenchmarkForward(b *testing.B) {
	for _, proto := range []Proto{ProtoLegacy, ProtoOctetCount} {
		b.Run(proto.String(), func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			var got int64
			var mu sync.Mutex
			done := make(chan struct{})
			go func() {
				defer close(done)
				c, err := ln.Accept()
				if err != nil {
					return
				}
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					mu.Lock()
					got += int64(n)
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
			r := New("bench", 1<<20)
			r.Format = FormatRFC5424
			srv := &Server{Name: "s", Addr: ln.Addr().String(), Proto: proto}
			r.Servers = []*Server{srv}
			ctx, cancel := context.WithCancel(context.Background())
			r.Start(ctx)
			for !srv.Connected() {
				time.Sleep(time.Millisecond)
			}
			m := &Meta{Facility: 16, Level: LevelInfo, Tag: []byte("haproxy"), PID: []byte("4242")}
			msg := []byte(`127.0.0.1:41234 [29/Nov/2026:20:48:56.256] fe be/s1 0/0/0/1/1 200 120 - - ---- 1/1/0/0/0 0/0 "GET /index.html HTTP/1.1"`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// The writer never blocks; pace it on the forwarder so that
				// the measure is end to end, not the drop rate.
				for !r.Log(m, FormatUnspec, 1023, msg) {
					r.mu.Lock()
					r.pending, r.total = 0, 0
					r.mu.Unlock()
					time.Sleep(50 * time.Microsecond)
				}
			}
			for srv.Sent() < uint64(b.N) {
				time.Sleep(100 * time.Microsecond)
			}
			b.StopTimer()
			mu.Lock()
			b.SetBytes(got / int64(b.N))
			mu.Unlock()
			cancel()
			r.Wait()
			ln.Close()
			<-done
		})
	}
}
