//go:build !linux

package ring

import (
	"net"
	"net/netip"
)

// batchReader needs recvmmsg; elsewhere ServePacket reads one datagram
// at a time.
type batchReader struct{}

func newBatchReader(*net.UDPConn) *batchReader { return nil }

func (*batchReader) read() (int, error) { return 0, nil }

func (*batchReader) msg(int) ([]byte, netip.Addr) { return nil, netip.Addr{} }
