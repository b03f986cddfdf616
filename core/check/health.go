package check

import (
	"context"
	"crypto/tls"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// OpState is a server's operational state, numbered as srv_op_state in
// `show servers state`.
type OpState int

const (
	OpStopped  OpState = 0
	OpStarting OpState = 1 // slowstart ramp-up
	OpRunning  OpState = 2
	OpStopping OpState = 3 // NOLB
)

// StateFlags are a check's state bits, as HAProxy's CHK_ST_* (the low bits
// are the srv_check_state / srv_agent_state columns).
type StateFlags uint16

const (
	StInProgress StateFlags = 0x01
	StConfigured StateFlags = 0x02
	StEnabled    StateFlags = 0x04
	StPaused     StateFlags = 0x08
	StAgent      StateFlags = 0x10
)

// Observe is the "observe" server keyword.
type Observe uint8

const (
	ObserveNone Observe = iota
	ObserveLayer4
	ObserveLayer7
)

// OnError is the "on-error" server keyword.
type OnError uint8

const (
	OnErrorFastInter   OnError = 1
	OnErrorFailCheck   OnError = 2 // default
	OnErrorSuddenDeath OnError = 3
	OnErrorMarkDown    OnError = 4
)

// Event is what core observed on live traffic, for "observe".
type Event uint8

const (
	EventL4OK            Event = iota + 1 // connection established
	EventL4Err                            // connection failed
	EventHTTPOK                           // correct HTTP response
	EventHTTPStatus                       // 5xx response (except 501/505)
	EventHTTPHdrRsp                       // invalid response headers
	EventHTTPRsp                          // invalid response
	EventHTTPReadError                    // read error
	EventHTTPReadTimeout                  // read timeout
	EventHTTPBrokenPipe                   // server closed early
)

var eventTable = map[Event]struct {
	desc string
	lr   [2]uint8 // per observe layer4/layer7: 0 ignore, 1 error, 2 ok
}{
	EventL4OK:            {"L4 successful connection", [2]uint8{2, 0}},
	EventL4Err:           {"L4 unsuccessful connection", [2]uint8{1, 1}},
	EventHTTPOK:          {"Correct http response", [2]uint8{0, 2}},
	EventHTTPStatus:      {"Wrong http response", [2]uint8{0, 1}},
	EventHTTPHdrRsp:      {"Invalid http response (headers)", [2]uint8{0, 1}},
	EventHTTPRsp:         {"Invalid http response", [2]uint8{0, 1}},
	EventHTTPReadError:   {"Read error (http)", [2]uint8{0, 1}},
	EventHTTPReadTimeout: {"Read timeout (http)", [2]uint8{0, 1}},
	EventHTTPBrokenPipe:  {"Close from server (http)", [2]uint8{0, 1}},
}

// Defaults of HAProxy 2.6.
const (
	DefaultInter      = 2000 * time.Millisecond
	DefaultRise       = 2
	DefaultFall       = 3
	DefaultAgentRise  = 1
	DefaultAgentFall  = 1
	DefaultErrorLimit = 10
)

// Settings configure one check (health or agent). Zero values take
// HAProxy's defaults in NewServer.
type Settings struct {
	Rules     *Rules
	Inter     time.Duration // inter / agent-inter
	FastInter time.Duration // 0: use Inter
	DownInter time.Duration // 0: use Inter
	Rise      int
	Fall      int
	Addr      string // "addr" / agent-addr: "" uses the server address
	Port      int    // "port" / agent-port: 0 uses the server port
	SSL       bool
	SNI       string
	ALPN      []string
	SendProxy bool
	TLS       *tls.Config
	AgentSend string // agent-send
	// Socks4 and ViaSocks4 are the server's "socks4" proxy and its
	// check-via-socks4; HAProxy sends the agent check through the proxy
	// too when check-via-socks4 is set.
	Socks4    string
	ViaSocks4 bool
}

// Verdict is what a finished probe asks of the server's state. Core still
// ignores Up and Stopping while the server is in maintenance or tracks a
// stopped server, as HAProxy does.
type Verdict uint8

const (
	VerdictNone     Verdict = iota
	VerdictDown             // srv_set_stopped
	VerdictUp               // srv_set_running (STARTING with slowstart)
	VerdictStopping         // srv_set_stopping (NOLB)
)

// Report is delivered to the Reporter after every probe and after an
// observe-triggered failure.
type Report struct {
	Server  *Server
	Agent   bool
	Outcome Outcome
	// Health, Rise and Fall after the update.
	Health, Rise, Fall int
	// Logged is true when "option log-health-checks" prints a line
	// (CheckLogText): the status changed or the health counter moved.
	Logged bool
	// FailedCheck counts in the chkfail column.
	FailedCheck bool
	// HANA is set for observe-triggered results (hanafail column).
	HANA    bool
	Verdict Verdict
}

// Reporter receives check results; core.Server implements it.
//
// Concurrency: probe results come from the server's check goroutines (the
// health and the agent goroutine may report at the same time), and
// observe-triggered results from whatever goroutine called Server.Observe.
// CheckResult must therefore be safe for concurrent use and should not
// block for long: the next probe of that check waits for it.
type Reporter interface {
	CheckResult(r Report)
}

// AgentApplier may be implemented by a Reporter: it applies the admin state
// (ready/drain/maint), weight and maxconn an agent asked for, before the
// agent's health result is reported, and returns the first warning produced
// by the weight or maxconn parser ("" if none).
type AgentApplier interface {
	ApplyAgent(srv *Server, r *AgentReply) (warning string)
}

// StateHeaderer may be implemented by a Reporter to supply the value of
// X-Haproxy-Server-State for "http-check send-state" (see StateHeader).
type StateHeaderer interface {
	CheckStateHeader(srv *Server) string
}

// Check is one check of a server: the health check or the agent check.
type Check struct {
	srv   *Server
	agent bool
	wake  chan struct{} // pokes the probing goroutine to re-read its timer

	// srv.mu guards following fields
	set      Settings
	state    StateFlags
	health   int
	status   Status
	code     int
	desc     string
	duration time.Duration
	next     time.Time // time of the next probe
}

// CheckState is a snapshot of a check for stats and `show servers state`.
type CheckState struct {
	State              StateFlags
	Status             Status
	Code               int
	Desc               string
	Duration           time.Duration // -1 after an observe failure
	Health, Rise, Fall int
	Inter              time.Duration
	Addr               string
	Port               int
	AgentSend          string
}

// Shown reports whether stats print this check's columns: enabled and not
// paused by maintenance.
func (s CheckState) Shown() bool { return s.State&(StEnabled|StPaused) == StEnabled }

// Server holds the checks of one server and its observe settings.
type Server struct {
	Backend, Name string
	Health        *Check // nil without "check"
	Agent         *Check // nil without "agent-check"
	reporter      Reporter
	timeouts      Timeouts

	mu          sync.Mutex // guards following fields and the checks' state
	addr        string
	port        int
	op          OpState
	observe     Observe
	errorLimit  int
	onError     OnError
	consecutive int
}

// ServerConfig describes a server's checks, after configuration
// validation (HAProxy initialises checks only then).
type ServerConfig struct {
	Backend, Name string
	Addr          string // server address, no port
	Port          int    // service port
	Timeouts      Timeouts
	Health        *Settings // nil: no "check"
	Agent         *Settings // nil: no "agent-check"
	Observe       Observe
	ErrorLimit    int     // 0: 10
	OnError       OnError // 0: fail-check
	// Disabled is the "disabled" keyword: the server starts in
	// maintenance, its health at 0 and its health check paused.
	Disabled bool
	// Down starts the server stopped (e.g. from a state file).
	Down bool
}

// NewServer builds the checks of a server. Probes start with a Scheduler.
func NewServer(cfg ServerConfig, rep Reporter) *Server {
	s := &Server{
		Backend: cfg.Backend, Name: cfg.Name, reporter: rep, timeouts: cfg.Timeouts,
		addr: cfg.Addr, port: cfg.Port, op: OpRunning,
		observe: cfg.Observe, errorLimit: cfg.ErrorLimit, onError: cfg.OnError,
	}
	if s.errorLimit <= 0 {
		s.errorLimit = DefaultErrorLimit
	}
	if s.onError == 0 {
		s.onError = OnErrorFailCheck
	}
	if cfg.Disabled || cfg.Down {
		s.op = OpStopped
	}
	if cfg.Health != nil {
		c := newCheck(s, *cfg.Health, false)
		if cfg.Disabled {
			c.state |= StPaused
			c.health = 0
		}
		s.Health = c
	}
	if cfg.Agent != nil {
		a := *cfg.Agent
		if a.Inter == 0 && cfg.Health != nil {
			a.Inter = cfg.Health.Inter
		}
		if a.Rules == nil {
			a.Rules = AgentRules(a.AgentSend)
		}
		s.Agent = newCheck(s, a, true)
	}
	return s
}

func newCheck(s *Server, set Settings, agent bool) *Check {
	if set.Inter <= 0 {
		set.Inter = DefaultInter
	}
	if set.Rise <= 0 {
		set.Rise = DefaultRise
		if agent {
			set.Rise = DefaultAgentRise
		}
	}
	if set.Fall <= 0 {
		set.Fall = DefaultFall
		if agent {
			set.Fall = DefaultAgentFall
		}
	}
	if set.Rules == nil {
		set.Rules = &Rules{Set: DefaultRuleset(), Flags: RulesShared}
	}
	c := &Check{srv: s, agent: agent, set: set, wake: make(chan struct{}, 1),
		state: StConfigured | StEnabled, status: StatusIni, health: set.Rise}
	if agent {
		c.state |= StAgent
	}
	return c
}

// IsAgent reports whether this is the agent check.
func (c *Check) IsAgent() bool { return c.agent }

// Snapshot returns the check's state for stats.
func (c *Check) Snapshot() CheckState {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	return CheckState{State: c.state, Status: c.status, Code: c.code, Desc: c.desc, Duration: c.duration,
		Health: c.health, Rise: c.set.Rise, Fall: c.set.Fall, Inter: c.set.Inter,
		Addr: c.set.Addr, Port: c.set.Port, AgentSend: c.set.AgentSend}
}

func (c *Check) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Enable and Disable are "enable|disable health|agent".
func (c *Check) Enable() {
	c.srv.mu.Lock()
	c.state |= StEnabled
	c.srv.mu.Unlock()
	c.poke()
}

func (c *Check) Disable() {
	c.srv.mu.Lock()
	c.state &^= StEnabled
	c.srv.mu.Unlock()
}

// EnterMaint pauses the health check while the server is in maintenance
// and empties its health, as HAProxy does.
func (s *Server) EnterMaint() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.Health; c != nil && c.state&StEnabled != 0 {
		c.state |= StPaused
		c.health = 0
	}
}

// LeaveMaint resumes the health check with its health at rise (up, one
// failure away from down) and a probe due at once. It reports whether the
// checks allow the server to run (health and agent at least at rise); core
// then sets the server STARTING/RUNNING, or leaves it stopped.
func (s *Server) LeaveMaint() bool {
	s.mu.Lock()
	c := s.Health
	if c != nil && c.state&StEnabled != 0 {
		c.state &^= StPaused
		c.health = c.set.Rise
		c.next = time.Now()
	}
	ok := true
	if c != nil && c.state&StEnabled != 0 && c.health < c.set.Rise {
		ok = false
	}
	if a := s.Agent; a != nil && a.state&StEnabled != 0 && a.health < a.set.Rise {
		ok = false
	}
	s.mu.Unlock()
	if c != nil {
		c.poke()
	}
	return ok
}

// SetAddr / SetPort / SetAgentSend / SetInter are "set server
// check-addr|check-port|agent-addr|agent-port|agent-send|agent-inter"; they
// apply to the next probe.
func (c *Check) SetAddr(addr string) {
	c.srv.mu.Lock()
	c.set.Addr = addr
	c.srv.mu.Unlock()
}

func (c *Check) SetPort(port int) {
	c.srv.mu.Lock()
	c.set.Port = port
	c.srv.mu.Unlock()
}

func (c *Check) SetAgentSend(s string) {
	c.srv.mu.Lock()
	c.set.AgentSend = s
	if c.agent {
		c.set.Rules = AgentRules(s)
	}
	c.srv.mu.Unlock()
}

func (c *Check) SetInter(d time.Duration) {
	if d <= 0 {
		return
	}
	c.srv.mu.Lock()
	c.set.Inter = d
	c.srv.mu.Unlock()
	c.poke()
}

// Health levels for ForceHealth ("set server health|agent up|stopping|down").
const (
	ForceUp = iota
	ForceStopping
	ForceDown
)

// ForceHealth sets the health counter as "set server <b>/<s> health|agent
// up|stopping|down" does: up and stopping fill it, down empties it. Core
// then changes the server state itself.
func (c *Check) ForceHealth(level int) {
	c.srv.mu.Lock()
	if level == ForceDown {
		c.health = 0
	} else {
		c.health = c.set.Rise + c.set.Fall - 1
	}
	c.srv.mu.Unlock()
}

// SetAddr records a server address/port change ("set server addr") for the
// next probes.
func (s *Server) SetAddr(addr string, port int) {
	s.mu.Lock()
	s.addr, s.port = addr, port
	s.mu.Unlock()
}

// SetOpState tells the checks the server's operational state, which picks
// downinter and decides whether an agent "up" may lift a stopping server.
func (s *Server) SetOpState(op OpState) {
	s.mu.Lock()
	s.op = op
	s.mu.Unlock()
}

// intervalLocked returns the delay to the next probe (HAProxy
// srv_getinter). c.srv.mu must be held.
func (c *Check) intervalLocked() time.Duration {
	if c.health == c.set.Rise+c.set.Fall-1 {
		return c.set.Inter
	}
	if c.srv.op == OpStopped && c.health == 0 {
		if c.set.DownInter > 0 {
			return c.set.DownInter
		}
		return c.set.Inter
	}
	if c.set.FastInter > 0 {
		return c.set.FastInter
	}
	return c.set.Inter
}

// Interval returns the delay before the next probe given the current health.
func (c *Check) Interval() time.Duration {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	return c.intervalLocked()
}

// applyLocked updates the status and the rise/fall counter from an
// outcome, as HAProxy's set_server_check_status. c.srv.mu must be held.
func (c *Check) applyLocked(o Outcome) Report {
	prev := c.status
	c.status, c.code, c.desc, c.duration = o.Status, o.Code, o.Desc, o.Duration
	if o.Status == StatusHANA {
		c.duration = -1
	}
	rep := Report{Server: c.srv, Agent: c.agent, Outcome: o}
	rep.Outcome.Duration = c.duration
	if c.agent && o.Agent != nil {
		// The agent sets the counter directly; the status below then
		// finds nothing left to move.
		if o.Agent.HealthUp() {
			c.health = c.set.Rise + c.set.Fall - 1
		} else if o.Agent.HealthDown() {
			c.health = 0
		}
	}
	moved := false
	switch o.Status.Result() {
	case ResultFailed:
		if (!c.agent || o.Status >= StatusL57Data) && c.health > 0 {
			rep.FailedCheck = true
			moved = true
			c.health--
			if c.health < c.set.Rise {
				c.health = 0
			}
		}
	case ResultPassed, ResultCondPass:
		if c.health < c.set.Rise+c.set.Fall-1 {
			moved = true
			c.health++
			if c.health >= c.set.Rise {
				c.health = c.set.Rise + c.set.Fall - 1
			}
		}
		c.srv.consecutive = 0
	}
	rep.Logged = o.Status.Result() != ResultNeutral && (o.Status != prev || moved)
	rep.Health, rep.Rise, rep.Fall = c.health, c.set.Rise, c.set.Fall
	rep.Verdict = c.verdictLocked(o.Status)
	return rep
}

// verdictLocked mirrors check_notify_failure/success/stopping.
// c.srv.mu must be held.
func (c *Check) verdictLocked(st Status) Verdict {
	s := c.srv
	okLocked := func() bool {
		if h := s.Health; h != nil && h.state&StEnabled != 0 && h.health < h.set.Rise {
			return false
		}
		if a := s.Agent; a != nil && a.state&StEnabled != 0 && a.health < a.set.Rise {
			return false
		}
		return true
	}
	switch st.Result() {
	case ResultFailed:
		if c.agent && st != StatusL7Sts {
			return VerdictNone
		}
		if c.health > 0 {
			return VerdictNone
		}
		return VerdictDown
	case ResultCondPass:
		if c.agent || !okLocked() {
			return VerdictNone
		}
		return VerdictStopping
	case ResultPassed:
		if !okLocked() {
			return VerdictNone
		}
		if c.agent && s.op == OpStopping {
			return VerdictNone
		}
		return VerdictUp
	}
	return VerdictNone
}

// Observe feeds a live-traffic event to "observe layer4|layer7". After
// error-limit consecutive errors it applies on-error: fastinter only
// brings the next probe forward; fail-check, sudden-death and mark-down
// also report a HANA failure. It returns the report delivered, if any.
func (s *Server) Observe(ev Event) *Report {
	ent, ok := eventTable[ev]
	if !ok {
		return nil
	}
	s.mu.Lock()
	if s.observe == ObserveNone || s.Health == nil {
		s.mu.Unlock()
		return nil
	}
	switch ent.lr[s.observe-1] {
	case 2:
		s.consecutive = 0
		s.mu.Unlock()
		return nil
	case 0:
		s.mu.Unlock()
		return nil
	}
	s.consecutive++
	if s.consecutive < s.errorLimit {
		s.mu.Unlock()
		return nil
	}
	c := s.Health
	desc := fmt.Sprintf("Detected %d consecutive errors, last one was: %s", s.consecutive, ent.desc)
	var rep *Report
	switch s.onError {
	case OnErrorSuddenDeath:
		if c.health > c.set.Rise {
			c.health = c.set.Rise + 1
		}
		r := c.applyLocked(Outcome{Status: StatusHANA, Desc: desc, Duration: -1})
		rep = &r
	case OnErrorFailCheck:
		r := c.applyLocked(Outcome{Status: StatusHANA, Desc: desc, Duration: -1})
		rep = &r
	case OnErrorMarkDown:
		c.health = c.set.Rise
		r := c.applyLocked(Outcome{Status: StatusHANA, Desc: desc, Duration: -1})
		rep = &r
	}
	s.consecutive = 0
	if c.set.FastInter > 0 {
		if n := time.Now().Add(c.set.FastInter); n.Before(c.next) {
			c.next = n
		}
	}
	s.mu.Unlock()
	c.poke()
	if rep != nil {
		rep.HANA = true
		if s.reporter != nil {
			s.reporter.CheckResult(*rep)
		}
	}
	return rep
}

// SetObserve changes the observe settings at run time.
func (s *Server) SetObserve(o Observe, errorLimit int, onError OnError) {
	s.mu.Lock()
	s.observe = o
	if errorLimit > 0 {
		s.errorLimit = errorLimit
	}
	if onError != 0 {
		s.onError = onError
	}
	s.mu.Unlock()
}

// targetLocked builds the probe target from the current settings.
// c.srv.mu must be held.
func (c *Check) targetLocked() (*Rules, Target) {
	s := c.srv
	t := Target{Addr: s.addr, Port: s.port, CheckAddr: c.set.Addr, CheckPort: c.set.Port,
		SSL: c.set.SSL, SNI: c.set.SNI, ALPN: c.set.ALPN, SendProxy: c.set.SendProxy, TLS: c.set.TLS,
		Socks4: c.set.Socks4, ViaSocks4: c.set.ViaSocks4,
		ServerDown: s.op == OpStopped, Backend: s.Backend, Server: s.Name}
	return c.set.Rules, t
}

// probeOnce runs one probe now and reports it; it is what the scheduler
// calls at each tick. It returns false when the check is disabled or
// paused (nothing ran).
func (c *Check) probeOnce(ctx context.Context) bool {
	s := c.srv
	s.mu.Lock()
	if c.state&(StEnabled|StPaused) != StEnabled || c.state&StInProgress != 0 {
		s.mu.Unlock()
		return false
	}
	c.state |= StInProgress
	rules, t := c.targetLocked()
	inter := c.set.Inter
	s.mu.Unlock()

	if hs, ok := s.reporter.(StateHeaderer); ok && rules.SendState {
		t.StateHeader = hs.CheckStateHeader(s)
	}
	to := s.timeouts
	to.Inter = inter
	// The verdict is applied before the probe's connection closes, as
	// HAProxy does: a server (or an agent) that sees the close may rely on
	// the state having changed.
	concluded := false
	t.Conclude = func(o Outcome) {
		concluded = true
		c.conclude(ctx, o)
	}
	o := Run(ctx, rules, &t, to)
	if !concluded {
		c.conclude(ctx, o)
	}
	return true
}

// conclude applies a probe's outcome: the agent's reply, then the verdict,
// which the reporter hears.
func (c *Check) conclude(ctx context.Context, o Outcome) {
	s := c.srv
	if ctx.Err() != nil {
		// Stopped while probing: the result means nothing.
		s.mu.Lock()
		c.state &^= StInProgress
		s.mu.Unlock()
		return
	}

	if c.agent && o.Agent != nil {
		s.mu.Lock()
		enabled := c.state&StEnabled != 0
		s.mu.Unlock()
		if !enabled {
			// Disabled while the probe ran: ignore the reply.
			s.mu.Lock()
			c.state &^= StInProgress
			s.mu.Unlock()
			return
		}
		warn := ""
		if ap, ok := s.reporter.(AgentApplier); ok {
			warn = ap.ApplyAgent(s, o.Agent)
		}
		o.Status, o.Desc = AgentStatus(o.Agent, warn)
		if len(o.Desc) > descLen {
			o.Desc = o.Desc[:descLen]
		}
	}
	s.mu.Lock()
	c.state &^= StInProgress
	var prior *Report
	if o.Prior != nil {
		// The server's state follows the probe's last result only.
		r := c.applyLocked(*o.Prior)
		r.Verdict = VerdictNone
		prior = &r
	}
	rep := c.applyLocked(o)
	s.mu.Unlock()
	if s.reporter != nil {
		if prior != nil {
			s.reporter.CheckResult(*prior)
		}
		s.reporter.CheckResult(rep)
	}
}

// StatColumns returns the `show stat` columns of a check, empty where
// HAProxy prints nothing: check_status (or agent_status, "* " while a probe
// runs), check_code, check_duration (ms), check_desc and last_chk (or
// last_agt). Nothing is shown for a disabled or paused check.
func (s CheckState) StatColumns(agent bool) (status, code, duration, desc, last string) {
	if !s.Shown() {
		return
	}
	status = StatName(s.Status, s.State&StInProgress != 0)
	if s.Status.HasCode() {
		code = strconv.Itoa(s.Code)
	}
	if agent || s.Status >= StatusChecked {
		duration = strconv.FormatInt(s.Duration.Milliseconds(), 10)
	}
	return status, code, duration, s.Status.Desc(), s.Desc
}
