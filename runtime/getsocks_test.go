package runtime

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"goha/core"
	"goha/core/stream"
)

// TestGetSocksRoundTrip serves _getsocks from a running process and takes
// its listening sockets with GetSockets: the sockets received are the
// same sockets (same addresses, still listening), with the bind's
// interface name.
func TestGetSocksRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A bare duplicate: the process's listener closes it once it has its
	// own copy, so no *os.File may own it.
	rc, err := tl.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil || derr != nil {
		t.Fatal(err, derr)
	}
	tl.Close()
	p := newProc(t, `
defaults
    mode http
    timeout client 5s
    timeout server 5s
    timeout connect 5s
frontend fe
    bind fd@`+strconv.Itoa(fd)+`
    bind `+filepath.Join(dir, "fe.sock")+`
    http-request return status 200
`)
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	srv := NewServer(p)
	defer srv.Close()
	exposed := filepath.Join(dir, "x.sock")
	if err := srv.Open(core.StatsSocket{Addr: exposed, Args: []string{"expose-fd", "listeners"}}); err != nil {
		t.Fatal(err)
	}
	hidden := filepath.Join(dir, "h.sock")
	if err := srv.Open(core.StatsSocket{Addr: hidden, Args: []string{"level", "admin"}}); err != nil {
		t.Fatal(err)
	}

	// Without expose-fd the session ends without a byte.
	if _, err := GetSockets(hidden); !errors.Is(err, ErrNoSockets) {
		t.Fatalf("GetSockets on a socket without expose-fd: %v", err)
	}

	socks, err := GetSockets(exposed)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, a := range p.Listeners(p.Conf.Proxies[0]) {
		want[a.String()] = true
	}
	got := map[string]bool{}
	for _, s := range socks {
		defer s.File.Close()
		fd := int(s.File.Fd())
		if on, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || on != 1 {
			t.Errorf("received socket is not listening (%v)", err)
		}
		ln, err := net.FileListener(s.File)
		if err != nil {
			t.Fatal(err)
		}
		got[ln.Addr().String()] = true
		ln.Close()
		if s.Interface != "" || s.Namespace != "" {
			t.Errorf("names %q %q for a bind without interface", s.Namespace, s.Interface)
		}
	}
	for a := range want {
		if !got[a] {
			t.Errorf("listener %s was not handed over (got %v)", a, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestGetSocksMetaFormat pins the per-socket data HAProxy 2.6 reads: a
// length byte and the namespace, a length byte and the interface, then
// four zero bytes.
func TestGetSocksMetaFormat(t *testing.T) {
	a, b, err := socketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	socks := []stream.ListenerSocket{{File: f, Interface: "eth0"}, {File: f, Namespace: "ns1"}}
	done := make(chan error, 1)
	go func() { done <- sendSockets(a, a, socks) }()
	var n [4]byte
	if _, err := b.Read(n[:]); err != nil {
		t.Fatal(err)
	}
	if n != [4]byte{2, 0, 0, 0} {
		t.Fatalf("count % x", n)
	}
	buf := make([]byte, 256)
	oob := make([]byte, unix.CmsgSpace(8))
	nb, noob, _, _, err := b.ReadMsgUnix(buf, oob)
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte("\x00\x04eth0\x00\x00\x00\x00\x03ns1\x00\x00\x00\x00\x00"); !bytes.Equal(buf[:nb], want) {
		t.Fatalf("data %q, want %q", buf[:nb], want)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:noob])
	if err != nil || len(msgs) != 1 {
		t.Fatalf("control messages %v %v", msgs, err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 2 {
		t.Fatalf("rights %v %v", fds, err)
	}
	for _, fd := range fds {
		unix.Close(fd)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func socketPair() (*net.UnixConn, *net.UnixConn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, err
	}
	conn := func(fd int) (*net.UnixConn, error) {
		f := os.NewFile(uintptr(fd), "pair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			return nil, err
		}
		return c.(*net.UnixConn), nil
	}
	a, err := conn(fds[0])
	if err != nil {
		return nil, nil, err
	}
	b, err := conn(fds[1])
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, b, nil
}

func FuzzSocketMeta(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x00\x00\x00"), 1)
	f.Add([]byte("\x03ns1\x04eth0\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), 2)
	f.Add([]byte("\xff"), 1)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if n < 0 || n > 1000 {
			return
		}
		names, err := parseSocketMeta(b, n)
		if err != nil {
			return
		}
		if len(names) != n {
			t.Fatalf("%d names for %d sockets", len(names), n)
		}
		// The names written back read the same, and took no more bytes
		// than there were.
		var out []byte
		for _, nm := range names {
			out = appendName(out, nm[0])
			out = appendName(out, nm[1])
			out = append(out, 0, 0, 0, 0)
		}
		if len(out) > len(b) {
			t.Fatalf("%d bytes of names from %d", len(out), len(b))
		}
		again, err := parseSocketMeta(out, n)
		if err != nil || !slices.Equal(again, names) {
			t.Fatalf("names %q read back as %q (%v)", names, again, err)
		}
	})
}
