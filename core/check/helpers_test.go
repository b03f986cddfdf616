package check

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// responder is a loopback TCP server running handle for each connection.
type responder struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	conn []net.Conn
}

func newResponder(t testing.TB, handle func(c net.Conn)) *responder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &responder{ln: ln}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.conn = append(r.conn, c)
			r.mu.Unlock()
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				defer c.Close()
				handle(c)
			}()
		}
	}()
	t.Cleanup(r.close)
	return r
}

func (r *responder) close() {
	r.ln.Close()
	r.mu.Lock()
	for _, c := range r.conn {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

func (r *responder) port() int { return r.ln.Addr().(*net.TCPAddr).Port }

func (r *responder) target() *Target {
	return &Target{Addr: "127.0.0.1", Port: r.port()}
}

// closedPort returns a loopback port with nothing listening.
func closedPort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return p
}

var shortTO = Timeouts{Inter: 2 * time.Second}

func run(t testing.TB, rules *Rules, tg *Target, to Timeouts) Outcome {
	t.Helper()
	return Run(context.Background(), rules, tg, to)
}

// backendRules builds a backend from config lines and finalizes it.
func backendRules(t testing.TB, lines ...[]string) *Rules {
	t.Helper()
	b := NewBackend("be", false)
	for _, l := range lines {
		var err error
		switch l[0] {
		case "option":
			err = b.Option(l)
		case "tcp-check":
			err = b.TCPCheck(l)
		case "http-check":
			err = b.HTTPCheck(l)
		}
		if err != nil {
			t.Fatalf("%v: %v", l, err)
		}
	}
	r, _, err := b.Finalize("backend")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func w(s ...string) []string { return s }

func itoa(n int) string { return strconv.Itoa(n) }

// readUntil reads from c until buf contains sep or an error.
func readSome(c net.Conn) []byte {
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	b := make([]byte, 4096)
	n, _ := c.Read(b)
	return b[:n]
}

func wantOutcome(t *testing.T, o Outcome, st Status, code int, desc string) {
	t.Helper()
	if o.Status != st || o.Code != code || o.Desc != desc {
		t.Fatalf("got %s code %d desc %q, want %s code %d desc %q", o.Status, o.Code, o.Desc, st, code, desc)
	}
}
