package core

import (
	"net"
	"sync"
	"time"

	"goha/core/http1"
)

// ErrorCapture is the last invalid message a proxy saw in one direction,
// as `show errors` reports it.
type ErrorCapture struct {
	When     time.Time
	Proxy    *Proxy
	Server   *Server // responses only
	Client   net.Addr
	Response bool
	Offset   int
	Kind     string
	Data     []byte // the start of the message, at most 16 KB
	EventID  int
}

// captures keeps the last error per proxy and direction; capMu guards it.
var (
	capMu    sync.Mutex
	captures = map[*Proxy]*[2]*ErrorCapture{}
	capSeq   int
)

func (proc *Process) recordError(px *Proxy, srv *Server, data []byte, he *http1.Error, client net.Addr) {
	if px == nil {
		return
	}
	c := &ErrorCapture{When: time.Now(), Proxy: px, Server: srv, Client: client}
	if he != nil {
		c.Offset, c.Response, c.Kind = he.Offset, he.Response, he.Kind.String()
	}
	n := len(data)
	if n > 16384 {
		n = 16384
	}
	c.Data = append([]byte(nil), data[:n]...)
	capMu.Lock()
	capSeq++
	c.EventID = capSeq
	slot := captures[px]
	if slot == nil {
		slot = &[2]*ErrorCapture{}
		captures[px] = slot
	}
	i := 0
	if c.Response {
		i = 1
	}
	slot[i] = c
	capMu.Unlock()
}

// ErrorCaptures returns the captured errors of every proxy, requests first.
func (proc *Process) ErrorCaptures() []*ErrorCapture {
	capMu.Lock()
	defer capMu.Unlock()
	var out []*ErrorCapture
	for _, p := range proc.Conf.Proxies {
		if s := captures[p]; s != nil {
			for _, c := range s {
				if c != nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}
