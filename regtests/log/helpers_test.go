//go:build regtest

package log

import (
	"net"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

// logSink is a UDP socket a proxy's `log <addr>` lines go to.
type logSink struct {
	pc  net.PacketConn
	buf []byte
}

func newLogSink(t *testing.T) *logSink {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return &logSink{pc: pc, buf: make([]byte, 65536)}
}

// Addr is the address to put in a `log` line.
func (s *logSink) Addr() string { return s.pc.LocalAddr().String() }

// Line waits up to 5 s for the next line; ok is false if none came.
func (s *logSink) Line() (line string, ok bool) {
	s.pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, err := s.pc.ReadFrom(s.buf)
	if err != nil {
		return "", false
	}
	return strings.TrimRight(string(s.buf[:n]), "\n"), true
}

// showStat reads show stat from sock into rows keyed "proxy/server".
func showStat(t *testing.T, sock string) map[string]map[string]string {
	t.Helper()
	return harness.ParseStat(harness.MustSocket(t, sock, "show stat"))
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
