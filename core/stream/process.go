package stream

import (
	"context"
	"goha/core"
	"goha/core/check"
	"goha/core/diag"
	"goha/core/http1"
	"goha/core/peers"
	"goha/core/pool"
	"goha/core/sample"
	"goha/core/stick"
	"goha/ring"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Process is a running configuration: the proxies serving traffic and the
// state the runtime API reads and changes.
type Process struct {
	Conf *core.Config
	// caches are the HTTP caches, made on first use.
	caches cacheSet
	// tables are the stick tables by name; made by New, read-only after.
	tables map[string]*stick.Table
	peers  []*peers.Peers // the running peers sections; set by Run
	// peersByName are the same by section name; set by Run, read-only after.
	peersByName map[string]*peers.Peers
	Start       time.Time
	PID         int
	Threads     int

	// stopping is closed when a soft stop begins.
	stopOnce sync.Once
	stopping chan struct{}

	// LogOut receives access logs and alerts in debug mode (-d); nil
	// discards them.
	LogOut io.Writer

	// env is what expressions compile against: the process's map files
	// (shared with the map commands of the stats socket) and variables
	// of scope proc.
	env      *sample.Env
	procVars *sample.ProcVars
	// ppv2 are the fetches proxy-v2-options' SSL sub-TLVs carry.
	ppv2 ppv2Fetches
	// httpErrs are the http-errors sections' pages, read by Prepare.
	httpErrs map[string]map[int]*http1.Reply
	logMu    sync.Mutex // serialises writes to LogOut
	// LogSink, when set, receives every access log message (without a
	// trailing newline) with its frontend; the logging layer formats and
	// routes it. It must not keep the slice.
	LogSink func(fe *core.Proxy, msg []byte)
	// StartupLogs holds what start-up printed, for show startup-logs; nil
	// when nothing kept it.
	StartupLogs *ring.Ring

	pools     *pool.Set[*srvConn]
	lmu       sync.Mutex // guards listeners, adopted, adoptedUsed, handedOver and held
	listeners []*listener
	// held are listeners whose accept loops wait for every bind of the
	// start-up to be open (see Run); nil when they start at once.
	held    []*listener
	holding bool
	// adopted are listening sockets taken from an old process (Adopt),
	// until a bind takes them; adoptedUsed counts those taken.
	adopted     []*os.File
	adoptedUsed int
	// handedOver is set once the listeners were exported to another
	// process: the UNIX socket files are that process's then.
	handedOver bool
	active     sync.WaitGroup // accept loops
	streams    sync.WaitGroup // client connections being served
	curConns   atomic.Int64
	// Bytes tcp streams sent by splicing (HTTP ones count in the h1
	// counters).
	splicedOut atomic.Int64
	// acceptResv counts accepts reserved by accept loops (see acquire);
	// bindResv is the same per bind, filled as listeners open (under lmu).
	acceptResv atomic.Int64
	bindResv   map[*core.Bind]*atomic.Int64
	globalMax  atomic.Int64
	// global counts every accepted connection, stats-socket ones
	// included, for show info's CumConns and rate maxima; its ReqTot
	// counts the stats-socket streams only (the HTTP requests are the
	// frontends', summed when read, which keeps them off a line every
	// thread would write per request).
	global       core.Counters
	connFreed    chan struct{}
	softStopping atomic.Bool
	checks       *check.Scheduler
	checksMu     sync.Mutex       // guards checks, which add server may create
	act          []threadActivity // per thread: show activity's counters
	idle         *parker          // idle keep-alive connections; nil if epoll is unavailable
	ctxOnce      sync.Once
	ctx          context.Context

	proxies  []*proxy                       // cfg.Proxies as served, in the same order
	byModel  map[*core.Proxy]*proxy         // an index of proxies, made by New and only read after
	reg      atomic.Pointer[streamRegistry] // the streams in flight, from Run on
	reqSeq   atomic.Uint64                  // numbers the log lines that print %rt
	capMu    sync.Mutex                     // guards capSeq and every proxy's errs
	capSeq   int
	prepared bool

	// hooks run by Stop, in reverse order of registration (listeners first).
	mu      sync.Mutex // guards closers
	closers []func()
}

// New makes a process for cfg. Nothing is compiled and nothing listens
// yet: Prepare, then Run.
func New(cfg *core.Config) *Process {
	n := cfg.Global.NbThread
	if n <= 0 {
		n = defaultThreads()
	}
	proc := &Process{Conf: cfg, Start: time.Now(), PID: os.Getpid(), Threads: n, stopping: make(chan struct{}), connFreed: make(chan struct{}, 1),
		act: make([]threadActivity, n), procVars: &sample.ProcVars{}}
	proc.env = &sample.Env{Maps: &sample.MapSet{}, Userlists: cfg.SampleUserlists(), Proc: proc.procVars, JWTKeys: &sample.JWTKeys{}, Servers: proc}
	proc.proxies = make([]*proxy, len(cfg.Proxies))
	proc.byModel = make(map[*core.Proxy]*proxy, len(cfg.Proxies))
	for i, p := range cfg.Proxies {
		proc.proxies[i] = &proxy{Proxy: p}
		proc.byModel[p] = proc.proxies[i]
	}
	for _, p := range proc.proxies {
		p.defBE = proc.proxyOf(p.DefBE)
	}
	proc.makeTables()
	return proc
}

// ReferenceServer marks a server an expression names, so that `del
// server` refuses it as HAProxy does.
func (proc *Process) ReferenceServer(backend, server string) {
	if _, s := proc.Conf.FindServerRef(backend, server); s != nil {
		s.Reference()
	}
}

// Prepare compiles what serving needs and the configuration only names:
// rules, conditions, error files and log formats. Problems go to d, at
// their lines, in HAProxy's words; the process must not run when d holds an
// alert. `goha -c` runs it too.
func (proc *Process) Prepare(d *diag.Collector) {
	proc.prepared = true
	proc.ppv2 = compilePPv2Fetches(proc.env)
	proc.setGlobalVars(d)
	proc.compileHTTP(d)
	proc.compileLogFormats(d)
	proc.compileUniqueIDs(d)
}

// proxyOf is the process's view of the model's proxy cp; nil for nil or a
// proxy the process does not serve.
func (proc *Process) proxyOf(cp *core.Proxy) *proxy {
	return proc.byModel[cp]
}

// serverOf is the process's view of the model's server cs, or nil.
func (proc *Process) serverOf(cs *core.Server) *server {
	if cs == nil {
		return nil
	}
	if p := proc.proxyOf(cs.Proxy); p != nil && p.rt != nil {
		return p.rt.find(cs)
	}
	return nil
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
func (p *Process) GlobalCounters() *core.Counters { return &p.global }

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

// proxy is a proxy as the running process serves it: the model, and what
// serving it takes that configuration does not say. The model's fields and
// methods are reached through the embedding; what is below belongs to the
// process and lives as long as it.
type proxy struct {
	*core.Proxy

	// Frontend side, compiled by Prepare.
	useBE      []useBackendRule
	useSrv     []useServerRule // use-server, backend side
	redirRules []*httpRule     // redirect lines, after the http-request rules
	monFail    []*sample.Cond  // monitor fail
	stats      *statsPage      // the statistics page; nil for none
	defBE      *proxy
	reqRules   []*httpRule
	respRules  []*httpRule
	afterRules []*httpRule  // http-after-response
	tcp        tcpRules     // tcp-request rules
	stickRules []*stickRule // stick on|match|store-*, backend side
	errReply   map[int]*http1.Reply
	errDyn     map[int]*httpRule // http-error pages built per request
	logFmt     *logFormat        // nil: the httplog or tcplog fast paths
	uidFmt     *logFormat        // unique-id-format; nil: none

	errs [2]*ErrorCapture // last request and response errors; Process.capMu guards them

	acceptResv atomic.Int64 // accepts reserved on the frontend's listeners (see acquire)

	rt *backendRT // backend side: nil for a frontend only, or before Run
}

// server is a server as the running process serves it.
type server struct {
	*core.Server
	be       *proxy
	idx      int                    // index in the backend's picker
	pool     *pool.Server[*srvConn] // idle connections; nil until Run
	sessions sessionSet             // client connections of the streams being served
	chk      *check.Server          // health and agent checks; nil when unchecked
	direct   core.DirectKind        // a dispatch or transparent backend's server
	sni      *sample.SampleExpr     // a request-dependent sni (connkey.go); nil otherwise
}
