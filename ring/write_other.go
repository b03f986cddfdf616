//go:build !linux

package ring

import (
	"net"
	"time"
)

// rawWriter is Linux only; elsewhere the forwarder writes with net.Conn.
type rawWriter struct{}

func newRawWriter(net.Conn) *rawWriter { return nil }

func (*rawWriter) write([]byte, net.Conn, time.Duration) error { return nil }

// dgramSender is Linux only; elsewhere a logger writes with net.Conn.
type dgramSender struct{}

func newDgramSender(net.Conn) *dgramSender { return nil }

func (*dgramSender) send([]byte) error { return nil }
