package core

import (
	"goha/core/freq"
	"sync/atomic"
	"time"
)

// Counters are the traffic counters `show stat` reports for a frontend,
// backend, server or listener. Every field is updated with atomics from the
// data path, so no lock is taken per request; readers get a consistent-enough
// snapshot field by field, as HAProxy's readers do.
type Counters struct {
	Scur, Smax, Stot         atomic.Int64 // current, max and total sessions
	Bin, Bout                atomic.Int64 // bytes in (from clients) and out
	H1BytesIn, H1BytesOut    atomic.Int64 // HTTP/1 bytes on the wire: a frontend's from/to clients, a backend's from/to servers
	H1SplicedBytesIn         atomic.Int64 // the part of H1BytesIn spliced (kernel-side)
	H1SplicedBytesOut        atomic.Int64 // the part of H1BytesOut spliced
	H1OpenStreams            atomic.Int64 // a frontend's requests under way, from head to end
	Dreq, Dresp              atomic.Int64 // denied requests and responses
	Ereq, Econ, Eresp        atomic.Int64 // request, connection and response errors
	Wretr, Wredis            atomic.Int64 // retries and redispatches
	Hrsp                     [6]atomic.Int64
	ReqTot                   atomic.Int64
	CliAbrt, SrvAbrt         atomic.Int64
	Connect, Reuse           atomic.Int64 // new server connections, reused ones
	LbTot                    atomic.Int64 // times this server was picked
	Qcur, Qmax               atomic.Int64
	Intercepted              atomic.Int64
	CacheLookups, CacheHits  atomic.Int64 // cache-use rules run, and those a cache answered
	Dcon, Dses, Wrew, Eint   atomic.Int64
	LastSess                 atomic.Int64 // unix seconds of the last session, 0 = never
	SessRate, ReqRate, ConnR freq.Ctr
	SessRateMax, ReqRateMax  atomic.Int64
	ConnRateMax              atomic.Int64
	ConnTot                  atomic.Int64
	Qtime, Ctime             freq.SWRate // milliseconds, averaged over the last 1024 samples
	Rtime, Ttime             freq.SWRate
	QtimeMax, CtimeMax       atomic.Int64
	RtimeMax, TtimeMax       atomic.Int64

	// HTTP compression: payload bytes into the compressor and out of it,
	// bytes that passed it by (identity), responses compressed.
	CompIn, CompOut, CompByp, CompRsp atomic.Int64
}

// HrspClass maps an HTTP status to its hrsp_* slot (0..4 for 1xx..5xx, 5 other).
func HrspClass(status int) int {
	if status >= 100 && status < 600 {
		return status/100 - 1
	}
	return 5
}

// SessionStart counts one new session and tracks the current maximum and rate.
func (c *Counters) SessionStart(now time.Time) {
	cur := c.Scur.Add(1)
	StoreMax(&c.Smax, cur)
	c.Stot.Add(1)
	r := c.SessRate.Add(now, 1)
	StoreMax(&c.SessRateMax, r)
	c.LastSess.Store(now.Unix())
}

// SessionEnd releases a session counted by SessionStart.
func (c *Counters) SessionEnd() { c.Scur.Add(-1) }

// Request counts one request and its rate.
func (c *Counters) Request(now time.Time) {
	c.ReqTot.Add(1)
	StoreMax(&c.ReqRateMax, c.ReqRate.Add(now, 1))
}

// Conn counts one accepted connection (frontends) and its rate.
func (c *Counters) Conn(now time.Time) {
	c.ConnTot.Add(1)
	StoreMax(&c.ConnRateMax, c.ConnR.Add(now, 1))
}

// Clear resets the maxima, as `clear counters` does; ClearAll resets
// everything, as `clear counters all` does.
func (c *Counters) Clear() {
	c.Smax.Store(c.Scur.Load())
	c.Qmax.Store(c.Qcur.Load())
	c.SessRateMax.Store(0)
	c.ReqRateMax.Store(0)
	c.ConnRateMax.Store(0)
	c.QtimeMax.Store(0)
	c.CtimeMax.Store(0)
	c.RtimeMax.Store(0)
	c.TtimeMax.Store(0)
}

func (c *Counters) ClearAll() {
	scur, qcur, h1s := c.Scur.Load(), c.Qcur.Load(), c.H1OpenStreams.Load()
	*c = Counters{}
	c.Scur.Store(scur)
	c.Qcur.Store(qcur)
	c.H1OpenStreams.Store(h1s)
}

func StoreMax(m *atomic.Int64, v int64) {
	for {
		old := m.Load()
		if v <= old || m.CompareAndSwap(old, v) {
			return
		}
	}
}
