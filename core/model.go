package core

import (
	"context"
	"crypto/tls"
	"goha/core/cache"
	"goha/core/certstore"
	"goha/core/config"
	"goha/core/sample"
	"goha/core/stick"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"goha/core/check"
	"goha/core/diag"
	"goha/ring"
)

// Mode is a proxy's mode.
type Mode int

const (
	ModeTCP Mode = iota
	ModeHTTP
)

func (m Mode) String() string {
	if m == ModeHTTP {
		return "http"
	}
	return "tcp"
}

// Cap says which sides a proxy has.
type Cap int

const (
	CapFE Cap = 1 << iota
	CapBE
	CapDefaults
)

// Timeouts of a proxy, zero when unset.
type Timeouts struct {
	Connect, Client, Server, HTTPRequest, HTTPKeepAlive, Queue, Tunnel,
	ClientFin, ServerFin, Check, Tarpit time.Duration
}

// HTTPConnMode is how a proxy handles keep-alive (option http-keep-alive,
// httpclose, http-server-close).
type HTTPConnMode int

const (
	HTTPKeepAlive HTTPConnMode = iota
	HTTPServerClose
	HTTPClose
)

// Bind is one `bind` line: an address (or several, for port ranges) and its
// settings. The data path opens one listener per address per thread.
type Bind struct {
	Pos     diag.Pos
	Addr    string   // as written
	Addrs   []string // resolved network addresses: "tcp4:127.0.0.1:80", "unix:/p", "fd:3"
	Name    string
	MaxConn int
	Backlog int
	Args    []string    // remaining keywords, for features that read them (ssl, ...)
	tls     *tls.Config // `ssl` binds; built by checkTLS
	// certs are where the bind's certificates, CA files and CRLs come
	// from, and how it verifies client certificates.
	certs *bindCerts
	// Listener counters (listener rows of show stat, only with option socket-stats).
	Counters Counters
}

// ProxyConf is what configuration says about a proxy. It is a plain value so
// that defaults sections can be copied into the proxies that follow them.
type ProxyConf struct {
	Mode             Mode
	MaxConn          int
	FullConn         int
	Backlog          int
	Timeouts         Timeouts
	Retries          int
	Redispatch       bool
	ForwardFor       bool
	ForwardForExcept netip.Prefix // no header for a client in it
	ForwardForIfNone bool         // no header when the request has one
	ForwardForHeader string
	OriginalTo       bool         // option originalto: the address the client reached
	OriginalToExcept netip.Prefix // no header for a destination in it
	OriginalToHeader string
	// option splice-request, splice-response, splice-auto: move body and
	// tunnel bytes kernel-side (splice(2) through a pipe) where both
	// sockets allow it. A stream splices when its frontend or its
	// backend asks.
	SpliceRequest, SpliceResponse, SpliceAuto bool
	ConnMode                                  HTTPConnMode
	AllBackups                                bool
	Persist                                   bool
	DontLogNull                               bool
	LogSeparateErr                            bool
	HTTPLog                                   bool
	HTTPLogCLF                                bool
	TCPLog                                    bool
	LogFormat                                 string
	UniqueID                                  UniqueID
	LogTag                                    string
	LogGlobal                                 bool
	NoLog                                     bool
	Logs                                      []LineDef // `log` lines' words after the keyword
	SocketStats                               bool
	HTTPReuse                                 string     // never|safe|aggressive|always
	Balance                                   []string   // words after `balance`, e.g. {"roundrobin"} or {"hdr(host)"}
	BalanceSet                                bool       // a balance line (here or in defaults): dispatch and transparent do not apply
	Transparent                               bool       // option transparent
	AbortOnClose                              bool       // option abortonclose
	HashType                                  []string   // words after `hash-type`
	Cookie                                    []string   // words after `cookie`
	Errors                                    []ErrorDef // error page lines, in order (errors_kw.go)
	DefaultServer                             ServerConf
	CheckRules                                []LineDef // option/tcp-check/http-check lines, in order, for core/check
	Description                               string
	Stats                                     *StatsConf // the statistics page (stats.go); nil for none
	LogHealthChecks                           bool
	InspectDelay                              time.Duration // tcp-request inspect-delay
	ResInspectDelay                           time.Duration // tcp-response inspect-delay
	BufferRequest                             bool          // option http-buffer-request
	// RestrictHdrNames is option http-restrict-req-hdr-names: 0
	// (preserve), RestrictDelete or RestrictReject.
	RestrictHdrNames byte

	// CookiePersist is the `cookie` line read; nil without one.
	CookiePersist *CookieConf
	// Comp is what the `compression` lines set; nil without any.
	Comp *Compression
}

// Proxy is a frontend, a backend, a listen section (both) or a defaults
// section (neither; used only as a template).
type Proxy struct {
	ProxyConf
	Name     string
	ID       int
	ForcedID bool
	Pos      diag.Pos
	Cap      Cap
	Disabled bool

	Routing

	Binds          []*Bind
	DefaultBackend string
	DefBE          *Proxy        // resolved DefaultBackend
	Dispatch       *ServerAddr   // `dispatch` address; nil when unset or ignored
	StickTable     *stick.Config // the proxy's stick-table; nil: none
	StickRules     []StickRuleDef
	UseBackends    []*UseBackend
	ACLs           []*ACLDef
	HTTPReqRules   []LineDef
	HTTPRespRules  []LineDef
	// CacheFilters are the caches the proxy uses, in declaration order;
	// filterOrder the proxy's filters as declared, for the order checks.
	CacheFilters   []CacheFilter
	filterOrder    []string
	HTTPAfterRules []LineDef // http-after-response
	// ReqCaps and RspCaps are a frontend's capture slots, in the order
	// they were declared (their ids).
	ReqCaps, RspCaps []CaptureSlot
	// TCPReqRules are the tcp-request connection, session and content
	// rules, in order.
	TCPReqRules []TCPRuleDef
	// TCPRespRules are the tcp-response content rules, in order.
	TCPRespRules []TCPRuleDef

	// loggers are the proxy's log targets (its own, and the global ones
	// with `log global`), opened when the process starts; logMeta is the
	// syslog header fields of its messages.
	loggers ring.Loggers
	logMeta ring.Meta
	// LogFmt is the frontend's log-format line (or option httplog clf,
	// tcplog with a format); nil when its lines use the httplog or tcplog
	// fast paths. The running process compiles it.
	LogFmt *LogFormatDef

	// The named ACLs declared so far, while the section is read: a
	// condition may only name the ACLs declared before it, as in HAProxy.
	aclsSoFar map[string][]*sample.Term

	Servers []*Server

	// Run-time state.
	FE, BE  Counters
	stopped atomic.Bool // frontend disabled (`disable frontend`) or soft-stopped
	// maxconn can be changed at run time (set maxconn frontend).
	liveMaxConn atomic.Int64

	// lbMu guards changes to the servers list at run time (add/del server);
	// readers take a snapshot with ServerList.
	lbMu       sync.Mutex
	srvList    atomic.Pointer[[]*Server]
	nextSID    int
	conf       *Config      // the configuration p belongs to, for its observer
	tmpl       *Proxy       // the defaults section this proxy was built from
	checkRules *check.Rules // built after validation
	adm        pxRuntimeState
}

// LogFormatDef is a log-format string and where it was given; the running
// process compiles it.
type LogFormatDef struct {
	Pos  diag.Pos
	Kind string // "log-format", "option httplog", "option tcplog", ...
	Src  string
}

// TCPRuleDef is a tcp-request rule: its stage (connection, session,
// content) and the words after it.
type TCPRuleDef struct {
	Pos   diag.Pos
	Stage string
	Words []string
}

// LineDef is a configuration line kept for a later compile step.
type LineDef struct {
	Pos   diag.Pos
	Words []string
}

// UseBackend is a `use_backend <name> [if|unless <cond>]` rule.
type UseBackend struct {
	Pos    diag.Pos
	Name   string
	Cond   []string // words after if/unless, including the if/unless word
	Target *Proxy
	// Dynamic: Name is a log-format string naming the backend per
	// request.
	Dynamic bool
}

// ACLDef is a named `acl <name> <criterion> [flags] [values]` line.
type ACLDef struct {
	Pos   diag.Pos
	Name  string
	Words []string
}

// FindServer returns the server named name, or nil.
func (p *Proxy) FindServer(name string) *Server {
	list := p.ServerList()
	for _, s := range list {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// ServerList is the current list of servers; it changes only with
// add/del server, by replacing the slice.
func (p *Proxy) ServerList() []*Server {
	if l := p.srvList.Load(); l != nil {
		return *l
	}
	return p.Servers
}

// IsFrontend and IsBackend say which rows `show stat` prints.
func (p *Proxy) IsFrontend() bool { return p.Cap&CapFE != 0 }
func (p *Proxy) IsBackend() bool  { return p.Cap&CapBE != 0 }

// ServerConf is what configuration (default-server, server, add server)
// says about a server. A plain value, copied from default-server.
type ServerConf struct {
	Weight         int
	Backup         bool
	Disabled       bool
	MaxConn        int
	MaxQueue       int
	MinConn        int
	Cookie         string
	Check          bool
	CheckSet       bool // check or no-check given explicitly
	Inter          time.Duration
	FastInter      time.Duration
	DownInter      time.Duration
	Rise, Fall     int
	CheckPort      int
	CheckAddr      string
	CheckSendProxy bool
	CheckViaSocks4 bool
	CheckSSL       bool
	CheckSNI       string
	CheckALPN      string // check-alpn's protocol list, comma-separated
	Agent          bool
	AgentInter     time.Duration
	AgentPort      int
	AgentAddr      string
	AgentSend      string
	Observe        string
	ErrorLimit     int
	OnError        string
	OnMarkedDown   string
	OnMarkedUp     string
	SlowStart      time.Duration
	Track          string
	InitAddr       string
	SendProxy      bool
	SendProxyV2    bool
	// PPv2Opts are proxy-v2-options: the TLVs a version 2 PROXY header
	// carries (PPv2*).
	PPv2Opts  uint16
	Resolvers string
	// Socks4 is the SOCKS4 proxy ("socks4" keyword) the server is reached
	// through, "ip:port"; "" for none.
	Socks4 string

	PoolLowConn    int
	PoolMaxConn    int
	PoolPurgeDelay time.Duration
	MaxReuse       int

	SSL     int // 0 default, 1 ssl, -1 no-ssl
	SSLArgs map[string]string
	// Unimplemented keywords seen (kept so that `-c` can warn once).
}

// Admin state bits, as `show servers state` prints them.
const (
	AdminFMaint    = 0x01 // forced maintenance (state maint, disable server)
	AdminIMaint    = 0x02 // inherited through track
	AdminCMaint    = 0x04 // `disabled` in the configuration
	AdminFDrain    = 0x08 // forced drain
	AdminIDrain    = 0x10 // inherited drain
	AdminRMaint    = 0x20 // resolution failed
	AdminHMaint    = 0x40 // fqdn changed
	AdminDrainMask = AdminFDrain | AdminIDrain
)

// Operational states, as `show servers state` prints them.
const (
	OpStopped  = 0
	OpStarting = 1
	OpRunning  = 2
	OpStopping = 3
)

// ServerAddr is where a server lives. It is replaced as a whole (atomically)
// by `set server addr`, and Gen changes with it so that pooled connections
// to the old address are never reused.
type ServerAddr struct {
	IP   netip.Addr // invalid when the server has no address (init-addr none, 0.0.0.0 kept as is)
	Port int        // 0 when unset; the client's port is used then
	Host string     // text form used by show servers state (srv_addr)
	Unix string     // unix socket path when the address is unix@
	Gen  uint64
}

// Server is one `server` line or a dynamic server added at run time.
type Server struct {
	ServerConf
	Proxy    *Proxy
	Name     string
	ID       int
	ForcedID bool
	Pos      diag.Pos
	FQDN     string
	IWeight  int  // initial weight from configuration
	Dynamic  bool // added with `add server`

	// mu serialises state changes made by the runtime API and checks. The
	// data path never takes it: it reads the atomics below.
	mu         sync.Mutex
	addr       atomic.Pointer[ServerAddr]
	uweight    atomic.Int32 // user weight 0..256
	admin      atomic.Uint32
	op         atomic.Uint32
	lastChange atomic.Int64 // unix seconds of the last state change
	maxconn    atomic.Int64
	served     atomic.Int64 // connections being served (for leastconn, maxconn, queues)

	tls *serverTLS // TLS to the server; nil until the process starts

	Counters Counters
	// Check state, as show stat / show servers state report it.
	Health      atomic.Int32
	CheckStatus atomic.Int32
	CheckResult atomic.Int32
	CheckState  atomic.Int32
	AgentState  atomic.Int32
	ChkFail     atomic.Int64
	ChkDown     atomic.Int64
	DownTime    atomic.Int64 // seconds spent down, before the current period

	admOnce sync.Once // fills adm from the configuration
	adm     srvRuntime
	// sslKept: no-ssl over a default-server ssl keeps the inherited
	// settings, which set server ssl may use. Set at creation only.
	sslKept bool
}

// Addr returns the server's current address.
func (s *Server) Addr() *ServerAddr { return s.addr.Load() }

// UWeight is the user weight (0..256); Weight in ServerConf is the
// configured one.
func (s *Server) UWeight() int { return int(s.uweight.Load()) }

// AdminState returns the admin bits.
func (s *Server) AdminState() uint32 { return s.admin.Load() }

// OpState returns the operational state.
func (s *Server) OpState() uint32 { return s.op.Load() }

// LastChange returns the unix second of the last state change.
func (s *Server) LastChange() int64 { return s.lastChange.Load() }

// MaxConnLive returns the maxconn in force (set maxconn server changes it).
func (s *Server) MaxConnLive() int { return int(s.maxconn.Load()) }

// Served is the number of connections the server is serving now.
func (s *Server) Served() int { return int(s.served.Load()) }

// Config is a loaded, validated configuration.
type Config struct {
	Global   Global
	Proxies  []*Proxy // frontends, backends and listens in declaration order
	Defaults map[string]*Proxy
	// Sections that a feature handles on its own (ring, log-forward, peers,
	// resolvers, userlist, ...), in order.
	Sections []*config.Section
	logging  *logState
	// Peers are the peers sections kept (those with a local peer).
	Peers []*PeersSection
	// HTTPErrors are the http-errors sections, by name.
	HTTPErrors map[string]*HTTPErrorsSection
	// Userlists are the userlist sections, in declaration order.
	Userlists []*Userlist
	// Programs are the program sections, in declaration order: what a
	// master starts next to its worker.
	Programs []*Program
	// Caches are the cache sections, in declaration order.
	Caches []*cache.Config

	// ParseAlerts counts the alerts raised while reading sections, before
	// validation (HAProxy then says "Error(s) found in configuration file").
	ParseAlerts int
	// ParseDiags is how many diagnostics reading the sections left in the
	// collector, before the checks that follow.
	ParseDiags int

	live     cfgRuntimeState          // limits changed at run time
	observer atomic.Pointer[Observer] // the running process, once one runs c
}

// FindProxy returns the proxy named name with one of the capabilities in
// cap, or nil.
func (c *Config) FindProxy(name string, cap Cap) *Proxy {
	for _, p := range c.Proxies {
		if p.Name == name && p.Cap&cap != 0 {
			return p
		}
	}
	return nil
}

// HasListener says whether anything would listen: a bind of an enabled
// frontend or a stats socket.
func (c *Config) HasListener() bool {
	if len(c.Global.StatsSockets) > 0 {
		return true
	}
	for _, p := range c.Proxies {
		if p.IsFrontend() && !p.Disabled && len(p.Binds) > 0 {
			return true
		}
	}
	return false
}

// FindProxyID returns the proxy whose id is id.
func (c *Config) FindProxyID(id int) *Proxy {
	for _, p := range c.Proxies {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// srvRuntime is the part of a server's run-time state that configuration
// does not have; check and agent targets live here so that the runtime API
// can change them while checks read them.
type srvRuntime struct {
	mu         sync.Mutex // guards following fields
	checkAddr  string
	checkPort  int
	agentAddr  string
	agentPort  int
	agentSend  string
	sslOn      int         // 1 ssl, 0 default, -1 no-ssl
	refs       int         // references that forbid del server (track, use-server)
	trackers   []*Server   // servers whose track names this one
	trackedSrv *Server     // the server this one tracks
	fresh      atomic.Bool // dynamic server unchanged since add server
}

// pxRuntimeState is what a proxy needs at run time beyond model.go.
type pxRuntimeState struct {
	mu         sync.Mutex   // serialises updateBackendState
	lastChange atomic.Int64 // unix second of the backend's last up/down change
	up         atomic.Bool
	chkDown    atomic.Int64 // up to down transitions
	downSince  atomic.Int64 // unix second it went down, 0 while up
	downTotal  atomic.Int64 // seconds spent down before downSince
	shut       atomic.Bool  // shutdown frontend: never accepts again
}

// cfgRuntimeState holds the process-wide limits changed at run time
// (set maxconn global, set rate-limit ... global); zero means "as
// configured".
type cfgRuntimeState struct {
	maxconn    atomic.Int64
	rateLimits [4]atomic.Int64 // RateConnections, RateSessions, RateSSLSessions, RateCompression
}

// Observer is told of every run-time change of the model, after the new
// state is visible, synchronously on the goroutine that made the change, so
// that the load balancer, the idle-connection pools and the checks have
// seen it before the operation returns. The running process implements it
// and installs itself on the configuration it runs; a configuration that
// nothing runs has no observer. Observers must not call back into the
// operation that told them.
type Observer interface {
	ServerChanged(s *Server, ev ServerEvent)
	ProxyChanged(p *Proxy, ev ProxyEvent)
}

// serverTLS holds the TLS configuration in force for a server; nil: plain.
type serverTLS struct {
	cfg atomic.Pointer[tls.Config]
	mu  sync.Mutex // guards used and store
	// used are the certificate store's paths the configuration uses,
	// released when it changes or the server is deleted.
	used  []string
	store *certstore.Store
}

// StatsSocket is one `stats socket` line of the global section.
type StatsSocket struct {
	Pos  diag.Pos
	Addr string   // path, ipv4@a:p, ipv6@[a]:p, fd@n, unix@path
	Args []string // bind parameters: level, mode, uid, gid, user, group, expose-fd, severity-output, maxconn
}

// Global is the merged content of every `global` section.
type Global struct {
	// SetVars are the global set-var and set-var-fmt lines, as their
	// words ("set-var", "proc.x", "<expr>"), run in order at start-up.
	SetVars         []LineDef
	NbThread        int
	MaxConn         int
	PidFile         string
	Daemon          bool
	UID, GID        int    // identity taken after binding; 0 keeps the current one
	CrtBase, CABase string // directories of relative crt and ca-file/crl-file paths
	// Certs holds the certificates, CA and CRL files and crt-lists that
	// binds and servers use; the runtime's ssl commands change it.
	Certs           *certstore.Store
	SSLServerVerify string // a server's verify when its line says none: "required" or "none"
	Chroot          string // directory the process roots itself in after binding
	MasterWorker    bool
	StatsSockets    []StatsSocket
	// StatsFrontend says a stats socket, timeout or maxconn line made
	// HAProxy's GLOBAL frontend, after which automatic proxy ids start
	// at 2 instead of 1.
	StatsFrontend                bool
	StatsTimeout                 time.Duration
	StatsMaxConn                 int
	Logs                         []LineDef
	LogTag                       string
	Hostname                     string
	SpreadChecks                 int
	BufSize                      int
	MaxRewrite                   int
	CompMaxLevel                 int // tune.comp.maxlevel
	ServerStateFile              string
	ServerStateBase              string
	LoadStateFrom                string // global|local|none, set in defaults/backends too
	SSLDefaultServerOptions      []string
	SSLDefaultServerCiphers      string
	SSLDefaultServerCiphersuites string
	SSLDefaultBindOptions        []string
	SSLDefaultBindCiphers        string
	Description                  string
	Node                         string
	UnixBind                     []string
	CPUMap                       []string
	HardStopAfter                time.Duration
	GraceTime                    time.Duration
	Quiet                        bool
	// ExposeExperimental is expose-experimental-directives, as far as the
	// configuration has been read: HAProxy checks it at each use.
	ExposeExperimental bool
	ZeroWarning        bool
	// Idle server connection pools: tune.idle-pool.shared off, and the
	// tune.pool-low-fd-ratio / tune.pool-high-fd-ratio percentages of the
	// descriptor limit (HAProxy's defaults: 20 and 25).
	IdlePoolNoShare bool
	PoolLowFDRatio  int
	PoolHighFDRatio int

	// NoExitOnFailure (master-worker no-exit-on-failure): a failing
	// program does not make the master stop everything.
	NoExitOnFailure bool
}

// PeersSection is a parsed `peers` section.
type PeersSection struct {
	Name      string
	LocalName string          // the local peer's name (-L, else the host name)
	Local     string          // the local peer's address, "" when none
	Peers     []PeerRef       // the remote peers
	Tables    []*stick.Config // its table lines, named <section>/<table>
	Disabled  bool
	LocalTLS  *tls.Config // the bind line's ssl; nil: plain TCP
	LocalPos  int         // how many remote peers come before the local one
}

// PeerRef is a remote peer of a peers section; Addr is "" for a server
// line without address.
type PeerRef struct {
	Name, Addr string
	TLS        *tls.Config // ssl on the peer's line (or default-server); nil: plain TCP
}

// logState is a configuration's logging machinery.
type logState struct {
	reg      *ring.Registry
	global   ring.Loggers
	forwards []*ring.LogForward
	cancel   context.CancelFunc
}

// ServerEvent says what changed on a server.
type ServerEvent int

const (
	SrvEvState            ServerEvent = iota + 1 // admin or operational state
	SrvEvWeight                                  // user weight
	SrvEvAddr                                    // address or port: idle connections must be flushed
	SrvEvMaxConn                                 // maxconn
	SrvEvCheck                                   // check or agent settings, or their enabling
	SrvEvAdded                                   // a dynamic server joined its backend (in maintenance)
	SrvEvDeleted                                 // the server left its backend: flush, stop checks
	SrvEvShutdownSessions                        // kill the server's streams
	SrvEvSSL                                     // ssl on/off
)

// ProxyEvent says what changed on a proxy.
type ProxyEvent int

const (
	PxEvMaxConn  ProxyEvent = iota + 1 // set maxconn frontend
	PxEvDisable                        // disable frontend: stop accepting
	PxEvEnable                         // enable frontend: accept again
	PxEvShutdown                       // shutdown frontend: close its listeners for good
)
