package core

import (
	"context"
	"goha/core/check"
	"goha/core/pool"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Version is goha's version, in the place where HAProxy prints its own.
var (
	Version     = "2.6.12-goha"
	ReleaseDate = "2026/11/29"
)

// Process is a running configuration: the proxies serving traffic and the
// state the runtime API reads and changes.
type Process struct {
	Conf    *Config
	Start   time.Time
	PID     int
	Threads int

	// stopping is closed when a soft stop begins.
	stopOnce sync.Once
	stopping chan struct{}

	// LogOut receives access logs and alerts in debug mode (-d); nil
	// discards them.
	LogOut io.Writer
	logMu  sync.Mutex // serialises writes to LogOut
	// LogSink, when set, receives every access log message (without a
	// trailing newline) with its frontend; the logging layer formats and
	// routes it. It must not keep the slice.
	LogSink func(fe *Proxy, msg []byte)

	pools     *pool.Set[*srvConn]
	lmu       sync.Mutex // guards listeners
	listeners []*listener
	active    sync.WaitGroup // accept loops
	streams   sync.WaitGroup // client connections being served
	curConns  atomic.Int64
	globalMax atomic.Int64
	// global counts every accepted connection, stats-socket ones
	// included, for show info's CumConns and rate maxima; its ReqTot
	// counts the stats-socket streams only (the HTTP requests are the
	// frontends', summed when read, which keeps them off a line every
	// thread would write per request).
	global       Counters
	connFreed    chan struct{}
	softStopping atomic.Bool
	checks       *check.Scheduler
	checksMu     sync.Mutex      // guards checks, which add server may create
	accepted     []atomic.Uint32 // per thread: connections accepted, show activity's accepted
	idle         *parker         // idle keep-alive connections; nil if epoll is unavailable
	ctxOnce      sync.Once
	ctx          context.Context

	// hooks run by Stop, in reverse order of registration (listeners first).
	mu      sync.Mutex // guards closers
	closers []func()
}

// NewProcess prepares a process for cfg. Nothing listens yet.
func NewProcess(cfg *Config) *Process {
	n := cfg.Global.NbThread
	if n <= 0 {
		n = defaultThreads()
	}
	return &Process{Conf: cfg, Start: time.Now(), PID: os.Getpid(), Threads: n, stopping: make(chan struct{}), connFreed: make(chan struct{}, 1),
		accepted: make([]atomic.Uint32, n)}
}

// CountAdminConn counts a stats-socket connection among the process's
// connections and streams, as HAProxy counts its CLI's: show info's
// CumConns and CumReq include them.
func (p *Process) CountAdminConn() {
	now := time.Now()
	p.global.Conn(now)
	p.global.SessionStart(now)
	p.global.Request(now)
	p.global.SessionEnd()
}

// GlobalCounters returns the process-wide counters (see the field's
// comment).
func (p *Process) GlobalCounters() *Counters { return &p.global }

// OnStop registers fn to run when the process stops.
func (p *Process) OnStop(fn func()) {
	p.mu.Lock()
	p.closers = append(p.closers, fn)
	p.mu.Unlock()
}

// Stopping is closed when a soft or hard stop begins.
func (p *Process) Stopping() <-chan struct{} { return p.stopping }

// Stop runs the stop hooks once.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		close(p.stopping)
		p.mu.Lock()
		cl := p.closers
		p.closers = nil
		p.mu.Unlock()
		for i := len(cl) - 1; i >= 0; i-- {
			cl[i]()
		}
	})
}

// Uptime is how long the process has run.
func (p *Process) Uptime() time.Duration { return time.Since(p.Start) }

// eventOut receives server state changes and other events HAProxy prints
// on its standard error; set by the daemon.
var eventOut io.Writer

// SetEventOutput sets where server state changes are printed.
func SetEventOutput(w io.Writer) { eventOut = w }

func pidNow() int { return os.Getpid() }
