package stream

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// tcpState is the TCP state of c's socket (tcpi_state, the first byte of
// struct tcp_info).
func tcpState(t *testing.T, c *net.TCPConn) byte {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info [256]byte
	var e syscall.Errno
	rc.Control(func(fd uintptr) {
		n := uint32(len(info))
		_, _, e = syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO, uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&n)), 0)
	})
	if e != 0 {
		t.Fatal(e)
	}
	return info[0]
}

// tcpCloseWait is TCP_CLOSE_WAIT: the peer's FIN has been received.
const tcpCloseWait = 8

// sessionPair returns the accepted side of a loopback connection on
// which the peer has written data and then shut down its sending side,
// once both have arrived.
func sessionPair(t *testing.T, data string) *net.TCPConn {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.Close() })
	if _, err := cl.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	cl.(*net.TCPConn).CloseWrite()
	tc := sc.(*net.TCPConn)
	for tcpState(t, tc) != tcpCloseWait {
		time.Sleep(time.Millisecond)
	}
	return tc
}

// A session read that takes the data a FIN came with must not then wait
// for readiness the FIN already gave: the next read reports the close.
// The deadline only bounds a read that would otherwise wait for ever.
func TestSessionReadSeesFINThatCameWithData(t *testing.T) {
	for _, bufLen := range []int{64, 5} {
		tc := sessionPair(t, "GET / HT")
		tc.SetReadDeadline(time.Now().Add(10 * time.Second))
		rc := &rawConn{Conn: tc}
		if !rc.io.initRaw(tc) {
			t.Fatal("no raw access to a TCP socket")
		}
		var got []byte
		var end error
		rc.io.runSession(func() bool {
			buf := make([]byte, bufLen)
			for {
				n, err := rc.Read(buf)
				got = append(got, buf[:n]...)
				if err != nil {
					end = err
					return false
				}
			}
		})
		if string(got) != "GET / HT" || !errors.Is(end, io.EOF) {
			t.Errorf("buffer %d: read %q, then %v; want the data, then EOF", bufLen, got, end)
		}
	}
}

// Without TCP_INQ's count (an older kernel), a read that returned data is
// followed by another, so the FIN is still seen.
func TestSessionReadSeesFINWithoutInq(t *testing.T) {
	tc := sessionPair(t, "GET / HT")
	tc.SetReadDeadline(time.Now().Add(10 * time.Second))
	rc := &rawConn{Conn: tc}
	rc.io.initRaw(tc)
	var got []byte
	var end error
	rc.io.runSession(func() bool {
		rc.io.sess.inq = false
		buf := make([]byte, 64)
		for {
			n, err := rc.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				end = err
				return false
			}
		}
	})
	if string(got) != "GET / HT" || !errors.Is(end, io.EOF) {
		t.Errorf("read %q, then %v; want the data, then EOF", got, end)
	}
}
