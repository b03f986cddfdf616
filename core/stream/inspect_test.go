package stream

import (
	"io"
	"net"
	"testing"
	"time"

	"goha/core"
)

// inspectServer is a server that reports, for each connection, all it
// read up to the client's end of stream.
func inspectServer(t *testing.T) (addr string, got chan string, accepted chan struct{}) {
	got = make(chan string, 4)
	accepted = make(chan struct{}, 4)
	addr = tcpOrigin(t, func(c net.Conn) {
		accepted <- struct{}{}
		c.SetDeadline(time.Now().Add(unitWait))
		b, _ := io.ReadAll(c)
		got <- string(b)
	})
	return addr, got, accepted
}

func inspectProc(t *testing.T, delay, a, b string) *Process {
	return unitProc(t, unitTCPConf+`
frontend fe
    bind @BIND@
    tcp-request inspect-delay `+delay+`
    tcp-request content accept if { req.payload(0,4) -m str PING }
    use_backend b if { req.payload(0,4) -m str PING }
    default_backend a
backend a
    server s1 `+a+`
backend b
    server s1 `+b+`
`)
}

func dialFE(t *testing.T, proc *Process) *net.TCPConn {
	c, err := net.Dial("tcp", unitFE(t, proc, "fe"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(unitWait))
	return c.(*net.TCPConn)
}

func expectRead(t *testing.T, got chan string, want string) {
	t.Helper()
	select {
	case s := <-got:
		if s != want {
			t.Fatalf("server read %q, want %q", s, want)
		}
	case <-time.After(unitWait):
		t.Fatalf("server read nothing, want %q", want)
	}
}

// A client that sends its first bytes in pieces is routed once they are
// all there, and the server gets them first, unchanged.
func TestInspectWaitsForBytesInPieces(t *testing.T) {
	a, gotA, _ := inspectServer(t)
	b, gotB, _ := inspectServer(t)
	proc := inspectProc(t, "1h", a, b)
	c := dialFE(t, proc)
	for _, p := range []string{"P", "I", "N", "G", " more"} {
		if _, err := io.WriteString(c, p); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.CloseWrite()
	expectRead(t, gotB, "PING more")
	select {
	case s := <-gotA:
		t.Fatalf("backend a read %q", s)
	default:
	}
}

// A client slower than the delay: the rules run a last time on what is
// there, the stream goes to the default backend with those bytes first,
// and the rest follows.
func TestInspectDelayExpires(t *testing.T) {
	a, gotA, acceptedA := inspectServer(t)
	b, _, _ := inspectServer(t)
	proc := inspectProc(t, "50ms", a, b)
	c := dialFE(t, proc)
	io.WriteString(c, "PI")
	select {
	case <-acceptedA:
	case <-time.After(unitWait):
		t.Fatal("the stream never reached backend a")
	}
	io.WriteString(c, "NG")
	c.CloseWrite()
	expectRead(t, gotA, "PING")
}

// A client that closes before the rules decide ends the inspection at
// once: the rules run on what it sent.
func TestInspectClientClosesEarly(t *testing.T) {
	a, gotA, _ := inspectServer(t)
	b, _, _ := inspectServer(t)
	proc := inspectProc(t, "1h", a, b)
	c := dialFE(t, proc)
	io.WriteString(c, "PIN")
	c.CloseWrite()
	expectRead(t, gotA, "PIN")
}

// A client that sends nothing and closes reaches the default backend
// with nothing.
func TestInspectEmptyClient(t *testing.T) {
	a, gotA, _ := inspectServer(t)
	b, _, _ := inspectServer(t)
	proc := inspectProc(t, "1h", a, b)
	c := dialFE(t, proc)
	c.CloseWrite()
	expectRead(t, gotA, "")
}

// req.payload with a length of 0 reads all the client sent, which may
// grow: a condition on it waits for more bytes, as in HAProxy.
func TestInspectWholePayloadWaits(t *testing.T) {
	a, gotA, _ := inspectServer(t)
	b, gotB, _ := inspectServer(t)
	proc := unitProc(t, unitTCPConf+`
frontend fe
    bind @BIND@
    tcp-request inspect-delay 1h
    tcp-request content accept if { req.payload(0,0) -m str PING }
    use_backend b if { req.payload(0,0) -m str PING }
    default_backend a
backend a
    server s1 `+a+`
backend b
    server s1 `+b+`
`)
	c := dialFE(t, proc)
	for _, p := range []string{"PI", "NG"} {
		io.WriteString(c, p)
		time.Sleep(10 * time.Millisecond)
	}
	c.CloseWrite()
	expectRead(t, gotB, "PING")
	select {
	case s := <-gotA:
		t.Fatalf("backend a read %q", s)
	default:
	}
}

// pieceServer writes pieces to each connection, a little apart, then
// closes it.
func pieceServer(t *testing.T, pieces ...string) string {
	return tcpOrigin(t, func(c net.Conn) {
		for _, p := range pieces {
			if _, err := io.WriteString(c, p); err != nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func respInspectProc(t *testing.T, srv string) *Process {
	return unitProc(t, unitTCPConf+`
frontend fe
    bind @BIND@
    default_backend be
backend be
    tcp-response inspect-delay 1h
    tcp-response content reject if { res.payload(0,3) -m str BAD }
    tcp-response content accept if { res.len ge 4 }
    server s1 `+srv+`
`)
}

// The server's first bytes wait for the rules, then all reach the client.
func TestInspectResponseAccept(t *testing.T) {
	proc := respInspectProc(t, pieceServer(t, "GO", "OD", "!!"))
	c := dialFE(t, proc)
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "GOOD!!" {
		t.Fatalf("client read %q, %v; want \"GOOD!!\"", b, err)
	}
}

// A rejected response never reaches the client, and counts as denied.
func TestInspectResponseReject(t *testing.T) {
	proc := respInspectProc(t, pieceServer(t, "BA", "Dxx", "more"))
	c := dialFE(t, proc)
	b, _ := io.ReadAll(c)
	if len(b) != 0 {
		t.Fatalf("client read %q, want nothing", b)
	}
	be := proc.Conf.FindProxy("be", core.CapBE)
	waitFor(t, "the denied response to count", func() bool { return be.BE.Dresp.Load() == 1 })
	if n := proc.Conf.FindProxy("fe", core.CapFE).FE.Dresp.Load(); n != 1 {
		t.Fatalf("frontend dresp %d, want 1", n)
	}
}

// A server without a port takes the stream's destination port, which a
// session rule moved.
func TestSessionSetDstPort(t *testing.T) {
	echo := unitEcho(t)
	_, port, _ := net.SplitHostPort(echo)
	proc := unitProc(t, unitTCPConf+`
frontend fe
    bind @BIND@
    tcp-request session set-dst-port int(`+port+`)
    default_backend be
backend be
    server s1 127.0.0.1
`)
	c := dialFE(t, proc)
	io.WriteString(c, "ping")
	b := make([]byte, 4)
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "ping" {
		t.Fatalf("read %q, %v; want the echo", b, err)
	}
}
