//go:build !linux

package ring

import (
	"net"
	"sync/atomic"
)

// udpBatcher is Linux only (sendmmsg); elsewhere each line is sent alone.
type udpBatcher struct{}

func newUDPBatcher(net.Conn, *atomic.Uint64) *udpBatcher { return nil }

func (*udpBatcher) add([]byte) {}
func (*udpBatcher) flushNow()  {}
func (*udpBatcher) close()     {}
