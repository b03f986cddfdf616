package stream

import (
	"errors"
	"goha/core"
	"io"
	"net"
	"testing"
	"time"
)

// A tcp stream relays both ways, and a half-close goes through: the
// client's shutdown(SHUT_WR) reaches the server as an end of stream while
// the server can still answer, and the server's close then reaches the
// client as its end of stream.
func TestTCPRelayHalfClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	type seen struct {
		data []byte
		err  error
	}
	got := make(chan seen, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- seen{err: err}
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(unitWait))
		// The server speaks first, then reads to the end of stream.
		if _, err := io.WriteString(c, "hello\n"); err != nil {
			got <- seen{err: err}
			return
		}
		b, err := io.ReadAll(c)
		got <- seen{b, err}
		if err == nil {
			io.WriteString(c, "got "+string(b))
		}
	}()
	proc := unitProc(t, unitTCPConf+`
frontend fe
    bind @BIND@
    default_backend be
backend be
    server s1 `+ln.Addr().String()+`
`)
	c, err := net.Dial("tcp", unitFE(t, proc, "fe"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(unitWait))
	greet := make([]byte, 6)
	if _, err := io.ReadFull(c, greet); err != nil || string(greet) != "hello\n" {
		t.Fatalf("server to client: %q, %v", greet, err)
	}
	if _, err := io.WriteString(c, "ping"); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	s := <-got
	if s.err != nil || string(s.data) != "ping" {
		t.Fatalf("server read %q then %v; want \"ping\" then the end of stream", s.data, s.err)
	}
	rest, err := io.ReadAll(c)
	if err != nil || string(rest) != "got ping" {
		t.Fatalf("after the half-close the client read %q, %v; want \"got ping\" then the end of stream", rest, err)
	}
	be := proc.Conf.FindProxy("be", core.CapBE)
	waitFor(t, "the stream to end", func() bool { return be.BE.Scur.Load() == 0 && be.BE.Bin.Load() == 4 })
	if up, down := be.BE.Bin.Load(), be.BE.Bout.Load(); up != 4 || down != 6+8 {
		t.Errorf("backend bytes in/out = %d/%d, want 4/14", up, down)
	}
}

// The other way round: the server's shutdown(SHUT_WR) reaches the client
// as an end of stream while the client can still send, and what it sends
// then reaches the server.
func TestTCPRelayServerHalfClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(unitWait))
		io.WriteString(c, "bye")
		c.(*net.TCPConn).CloseWrite()
		b, err := io.ReadAll(c)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(b)
	}()
	proc := unitProc(t, unitTCPConf+`
frontend fe
    bind @BIND@
    default_backend be
backend be
    server s1 `+ln.Addr().String()+`
`)
	c, err := net.Dial("tcp", unitFE(t, proc, "fe"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(unitWait))
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "bye" {
		t.Fatalf("client read %q, %v; want \"bye\" then the end of stream", b, err)
	}
	if _, err := io.WriteString(c, "late words"); err != nil {
		t.Fatalf("writing after the server's half-close: %v", err)
	}
	c.(*net.TCPConn).CloseWrite()
	if s := <-got; s != "late words" {
		t.Fatalf("server read %q after its half-close, want \"late words\"", s)
	}
}

// A server that refuses connections is tried retries+1 times, then the
// client is closed without a byte.
func TestTCPRefusedServerClosesClient(t *testing.T) {
	// Port 1 (tcpmux) is closed on any machine that runs the tests: a
	// port drawn free could be another test's listener by then.
	proc := unitProc(t, unitTCPConf+`
frontend fe
    bind @BIND@
    default_backend be
backend be
    retries 1
    server s1 127.0.0.1:1
`)
	c := dialUnit(t, unitFE(t, proc, "fe"))
	c.send("hello")
	if err := c.closed(); err != nil {
		t.Fatalf("client after the server refused: %v", err)
	}
	be := proc.Conf.FindProxy("be", core.CapBE)
	s1 := be.FindServer("s1")
	if n := s1.Counters.Connect.Load(); n != 2 {
		t.Errorf("connection attempts = %d, want 2 (retries 1)", n)
	}
	if n := s1.Counters.Wretr.Load(); n != 1 {
		t.Errorf("retries counted = %d, want 1", n)
	}
	if n := be.BE.Econ.Load(); n != 1 {
		t.Errorf("backend connection errors = %d, want 1", n)
	}
}

// A client that sends several buffers' worth and closes at once has every
// byte delivered before the server sees the end of stream.
func TestTCPUploadThenCloseArrivesWhole(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(unitWait))
		b, err := io.ReadAll(c)
		if err != nil && !errors.Is(err, io.EOF) {
			got <- err.Error()
			return
		}
		got <- string(b)
	}()
	proc := unitProc(t, unitTCPConf+`
frontend fe
    bind @BIND@
    default_backend be
backend be
    server s1 `+ln.Addr().String()+`
`)
	c, err := net.Dial("tcp", unitFE(t, proc, "fe"))
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 100000)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	if _, err := c.Write(payload); err != nil {
		t.Fatal(err)
	}
	c.Close()
	select {
	case s := <-got:
		if s != string(payload) {
			t.Fatalf("server got %d bytes (%.40q), want the client's %d", len(s), s, len(payload))
		}
	case <-time.After(unitWait):
		t.Fatal("the server never saw the end of the client's stream")
	}
}
