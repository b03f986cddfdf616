package stream

import (
	"goha/core"
	"net"
	"time"

	"goha/core/http1"
)

// ErrorCapture is the last invalid message a proxy saw in one direction,
// as `show errors` reports it.
type ErrorCapture struct {
	When     time.Time
	Proxy    *core.Proxy
	Server   *core.Server // responses only
	Client   net.Addr
	Response bool
	Offset   int
	Kind     string
	Data     []byte // the start of the message, at most 16 KB
	EventID  int
}

func (proc *Process) recordError(px *proxy, srv *server, data []byte, he *http1.Error, client net.Addr) {
	if px == nil {
		return
	}
	c := &ErrorCapture{When: time.Now(), Proxy: px.Proxy, Client: client}
	if srv != nil {
		c.Server = srv.Server
	}
	if he != nil {
		c.Offset, c.Response, c.Kind = he.Offset, he.Response, he.Kind.String()
	}
	n := len(data)
	if n > 16384 {
		n = 16384
	}
	c.Data = append([]byte(nil), data[:n]...)
	proc.capMu.Lock()
	proc.capSeq++
	c.EventID = proc.capSeq
	i := 0
	if c.Response {
		i = 1
	}
	px.errs[i] = c
	proc.capMu.Unlock()
}

// ErrorCaptures returns the captured errors of every proxy, requests first.
func (proc *Process) ErrorCaptures() []*ErrorCapture {
	proc.capMu.Lock()
	defer proc.capMu.Unlock()
	var out []*ErrorCapture
	for _, p := range proc.proxies {
		for _, c := range p.errs {
			if c != nil {
				out = append(out, c)
			}
		}
	}
	return out
}
