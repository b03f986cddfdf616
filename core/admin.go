package core

// Run-time administration of servers and proxies: what the stats socket
// (and a state file at start) may change. Each operation updates the
// atomics the data path reads, then runs the registered hooks
// synchronously, so that the load balancer, the idle-connection pools and
// the checks have seen the change before the operation returns.

import (
	"errors"
	"fmt"
	"goha/core/check"
	"goha/core/config"
	"goha/ring"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"goha/core/diag"
)

// Errors of the administration operations; runtime maps them to HAProxy's
// replies.
var (
	ErrTrackingServer = errors.New("core: cannot change health on a tracking server")
	ErrNoAgent        = errors.New("core: agent checks are not enabled on this server")
	ErrNoCheck        = errors.New("core: health checks are not enabled on this server")
	ErrAgentNotConf   = errors.New("core: agent was not configured on this server")
	ErrCheckNotConf   = errors.New("core: health check was not configured on this server")
	ErrStaticWeight   = errors.New("core: static algorithm accepts only weights 0% and 100%")
	ErrWeightMissing  = errors.New("core: weight required")
	ErrWeightEmpty    = errors.New("core: empty weight string or preceded by garbage")
	ErrWeightNegative = errors.New("core: relative weight must be positive")
	ErrWeightRange    = errors.New("core: absolute weight must be between 0 and 256")
	ErrWeightTrailing = errors.New("core: trailing garbage in weight string")
	ErrServerExists   = errors.New("core: a server with the same name already exists in backend")
	ErrNotDynamicLB   = errors.New("core: backend does not use a dynamic load balancing algorithm")
	ErrNotInMaint     = errors.New("core: only servers in maintenance mode can be deleted")
	ErrServerBusy     = errors.New("core: server still has connections attached to it")
	ErrServerInUse    = errors.New("core: server is referenced by other configuration elements")
	ErrMuxNotUsable   = errors.New("MUX protocol is not usable for server.")
	ErrNoSSLContext   = errors.New("core: server has no ssl settings")
	ErrNoResolution   = errors.New("core: no resolution is configured")
	ErrAlreadyState   = errors.New("core: frontend already in the requested state")
)

// Admin states that take a server out of load balancing. CMaint alone does
// not: it only records that `disabled` was in the configuration, and stays
// set after `state ready` (HAProxy's SRV_ADMF_MAINT is FMAINT|IMAINT|RMAINT).
const AdminMaint = AdminFMaint | AdminIMaint | AdminRMaint

// Check and agent state bits, as `show servers state` prints them.
const (
	ChkStInProgress = 0x01
	ChkStConfigured = 0x02
	ChkStEnabled    = 0x04
	ChkStPaused     = 0x08
	ChkStAgent      = 0x10
)

// Check status codes (HAProxy's HCHK_STATUS_*), as show servers state prints them.
const (
	HChkUnknown = 0
	HChkIni     = 1
)

// SetObserver installs o as the observer of c's run-time changes (nil
// removes it).
func (c *Config) SetObserver(o Observer) {
	for _, p := range c.Proxies {
		p.conf = c // configurations built by hand have no back link yet
	}
	if o == nil {
		c.observer.Store(nil)
		return
	}
	c.observer.Store(&o)
}

func (c *Config) observing() Observer {
	if c == nil {
		return nil
	}
	if o := c.observer.Load(); o != nil {
		return *o
	}
	return nil
}

func fireServer(s *Server, ev ServerEvent) {
	if s.Proxy == nil {
		return
	}
	if o := s.Proxy.conf.observing(); o != nil {
		o.ServerChanged(s, ev)
	}
}

func fireProxy(p *Proxy, ev ProxyEvent) {
	if o := p.conf.observing(); o != nil {
		o.ProxyChanged(p, ev)
	}
}

func init() {
	registerPostCheck(func(b *builder) { InitRuntimeState(b.cfg) })
}

// InitRuntimeState sets the check and agent state bits, health and
// backend up/down bookkeeping from the configuration, as HAProxy starts
// them. Build calls it; it is exported for configurations built by hand.
func InitRuntimeState(c *Config) {
	for _, p := range c.Proxies {
		for _, s := range p.Servers {
			s.initRuntime()
			if s.Track == "" {
				continue
			}
			be, sv := p.Name, s.Track
			if i := strings.IndexByte(sv, '/'); i >= 0 {
				be, sv = sv[:i], sv[i+1:]
			}
			if _, t := c.FindServerRef(be, sv); t != nil && !tracksBack(t, s) {
				tr := t.rt()
				tr.mu.Lock()
				tr.trackers = append(tr.trackers, s)
				tr.mu.Unlock()
				r := s.rt()
				r.mu.Lock()
				r.trackedSrv = t
				r.mu.Unlock()
			}
		}
		if p.IsBackend() {
			pr := pxRuntime(p)
			pr.lastChange.Store(time.Now().Unix())
			pr.up.Store(backendUp(p))
		}
	}
}

// tracksBack reports whether linking s as a tracker of t would close a
// loop, which would make state propagation endless.
func tracksBack(t, s *Server) bool {
	for i := 0; t != nil && i < 1000; i++ {
		if t == s {
			return true
		}
		t = t.tracked()
	}
	return t != nil
}

func (s *Server) initRuntime() {
	var cs, as int32
	if s.Check {
		cs = ChkStConfigured | ChkStEnabled
	}
	if s.Agent {
		as = ChkStAgent | ChkStConfigured | ChkStEnabled
	}
	if s.admin.Load()&AdminCMaint != 0 {
		cs |= ChkStPaused
		if as != 0 {
			as |= ChkStPaused
		}
		s.Health.Store(0)
	}
	s.CheckState.Store(cs)
	s.AgentState.Store(as)
	if s.CheckStatus.Load() == HChkUnknown {
		s.CheckStatus.Store(HChkIni)
	}
}

// rt returns the server's run-time admin state, filled from its
// configuration on first use (the check and agent targets are those of the
// server line until the runtime API changes them).
func (s *Server) rt() *srvRuntime {
	s.admOnce.Do(func() {
		s.adm.checkAddr, s.adm.checkPort = s.CheckAddr, s.CheckPort
		s.adm.agentAddr, s.adm.agentPort, s.adm.agentSend = s.AgentAddr, s.AgentPort, s.AgentSend
		s.adm.sslOn = s.SSL
	})
	return &s.adm
}

func pxRuntime(p *Proxy) *pxRuntimeState { return &p.adm }

// CheckTarget is where health checks go now: the address and port given by
// `addr`/`port` or `set server check-addr|check-port`; empty and 0 mean the
// server's own.
func (s *Server) CheckTarget() (addr string, port int) {
	r := s.rt()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.checkAddr, r.checkPort
}

// AgentTarget is where agent checks go now, and what they send.
func (s *Server) AgentTarget() (addr string, port int, send string) {
	r := s.rt()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.agentAddr, r.agentPort, r.agentSend
}

// Targets returns CheckTarget, AgentTarget's address and port, and UseSSL
// under one lock, for dumps of many servers.
func (s *Server) Targets() (checkAddr string, checkPort int, agentAddr string, agentPort int, useSSL int) {
	r := s.rt()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.checkAddr, r.checkPort, r.agentAddr, r.agentPort, r.sslOn
}

// UseSSL is 1 when the server speaks TLS, -1 when no-ssl is explicit, 0 by
// default (show servers state's srv_use_ssl).
func (s *Server) UseSSL() int {
	r := s.rt()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sslOn
}

// Usable reports whether the load balancer may pick s, as HAProxy's
// srv_currently_usable: a non-zero weight, not in maintenance or drain, and
// running or starting.
func (s *Server) LBUsable() bool {
	if s.uweight.Load() == 0 {
		return false
	}
	if s.admin.Load()&(AdminMaint|AdminDrainMask) != 0 {
		return false
	}
	op := s.op.Load()
	return op == OpRunning || op == OpStarting
}

// EWeight is the effective weight the load balancer uses (the user weight;
// slow start is applied by the picker). A dynamic server that has not
// changed since `add server` reports 1, as HAProxy, which computes it only
// on the first change.
func (s *Server) EWeight() int {
	if s.Proxy != nil && s.Proxy.Direct() != DirectNone {
		// A backend that does not balance gives its servers no share.
		return 0
	}
	if s.Dynamic && s.rt().fresh.Load() {
		return 1
	}
	return int(s.uweight.Load())
}

func (s *Server) touch() { s.lastChange.Store(time.Now().Unix()) }

// stateChanged records a change of s's state and updates its backend's
// up/down bookkeeping before the hooks run.
func (s *Server) stateChanged(ev ServerEvent) {
	if s.Dynamic {
		s.rt().fresh.Store(false)
	}
	s.touch()
	if s.Proxy != nil {
		s.Proxy.updateBackendState()
	}
	fireServer(s, ev)
}

func backendUp(p *Proxy) bool {
	list := p.ServerList()
	if len(list) == 0 {
		return true
	}
	for _, s := range list {
		if s.LBUsable() {
			return true
		}
	}
	return false
}

func (p *Proxy) updateBackendState() {
	if !p.IsBackend() {
		return
	}
	pr := pxRuntime(p)
	pr.mu.Lock()
	defer pr.mu.Unlock()
	up := backendUp(p)
	if pr.up.Load() == up {
		return
	}
	now := time.Now().Unix()
	pr.up.Store(up)
	pr.lastChange.Store(now)
	if !up {
		pr.chkDown.Add(1)
		pr.downSince.Store(now)
	} else if ds := pr.downSince.Swap(0); ds != 0 {
		pr.downTotal.Add(now - ds)
	}
}

// BackendState returns a backend's status as show stat reports it: whether
// it is up, the unix second of its last change, how many times it went down
// and how many seconds it has spent down.
func (p *Proxy) BackendState() (up bool, lastChange, chkDown, downTime int64) {
	pr := pxRuntime(p)
	downTime = pr.downTotal.Load()
	if ds := pr.downSince.Load(); ds != 0 {
		downTime += time.Now().Unix() - ds
	}
	lc := pr.lastChange.Load()
	if lc == 0 {
		lc = time.Now().Unix()
	}
	return pr.up.Load(), lc, pr.chkDown.Load(), downTime
}

// SetReady leaves forced maintenance and drain (`set server state ready`,
// `enable server`). A checked server comes back running with health at
// rise, so that the first failed check takes it down again.
func (s *Server) SetReady() {
	s.clrAdminFlag(AdminFDrain)
	s.clrAdminFlag(AdminFMaint)
}

// SetDrain puts s in forced drain: it keeps its sessions and persistent
// clients but gets no new load-balanced traffic.
func (s *Server) SetDrain() {
	s.setAdminFlag(AdminFDrain)
	s.clrAdminFlag(AdminFMaint)
}

// SetMaint puts s in forced maintenance: stopped, checks paused. Hooks must
// flush its idle connections.
func (s *Server) SetMaint() {
	s.setAdminFlag(AdminFMaint)
	s.clrAdminFlag(AdminFDrain)
}

// SetForcedMaint sets or clears forced maintenance alone, leaving drain as
// it is (the stats page's disable and enable actions).
func (s *Server) SetForcedMaint(on bool) {
	if on {
		s.setAdminFlag(AdminFMaint)
	} else {
		s.clrAdminFlag(AdminFMaint)
	}
}

// SetForcedDrain sets or clears forced drain alone (the stats page's stop
// and start actions).
func (s *Server) SetForcedDrain(on bool) {
	if on {
		s.setAdminFlag(AdminFDrain)
	} else {
		s.clrAdminFlag(AdminFDrain)
	}
}

// inherited is the flag that servers tracking s get for a change of mode.
func inherited(mode uint32) uint32 {
	if mode&AdminMaint != 0 {
		return AdminIMaint
	}
	return AdminIDrain
}

// setAdminFlag sets mode on s and the inherited flag on every server that
// tracks it, recursively, as HAProxy's srv_set_admin_flag.
func (s *Server) setAdminFlag(mode uint32) {
	s.mu.Lock()
	old := s.admin.Load()
	wasDown := s.op.Load() == OpStopped
	n := old | mode
	s.admin.Store(n)
	if old&AdminMaint == 0 && n&AdminMaint != 0 {
		s.setOpLocked(OpStopped)
		s.Health.Store(0)
		if cs := s.CheckState.Load(); cs&ChkStEnabled != 0 {
			s.CheckState.Store(cs | ChkStPaused)
		}
	}
	s.mu.Unlock()
	if old == n {
		return
	}
	s.stateChanged(SrvEvState)
	// HAProxy pauses only the health check in maintenance, and reports the
	// forced changes on its standard error and logs.
	switch {
	case mode == AdminFMaint && old&AdminMaint == 0 && wasDown:
		s.logLine("was DOWN and now enters maintenance.")
	case mode == AdminIMaint && old&AdminMaint == 0 && wasDown:
		s.logLine("was DOWN and now enters maintenance via " + s.trackedName() + ".")
	case mode == AdminFMaint && old&AdminMaint == 0:
		s.logAdmin("is going DOWN for maintenance", true)
	case mode == AdminIMaint && old&AdminMaint == 0:
		s.logAdmin("is going DOWN for maintenance via "+s.trackedName(), true)
	case mode == AdminFDrain && old&(AdminDrainMask|AdminMaint) == 0:
		s.logAdmin("enters drain state", false)
	}
	for _, t := range s.trackers() {
		t.setAdminFlag(inherited(mode))
	}
}

// clrAdminFlag clears mode on s and, unless s stays in that kind of state
// for another reason, the inherited flag on its trackers.
func (s *Server) clrAdminFlag(mode uint32) {
	s.mu.Lock()
	old := s.admin.Load()
	n := old &^ mode
	s.admin.Store(n)
	if old&AdminMaint != 0 && n&AdminMaint == 0 {
		s.leaveMaintLocked()
	}
	s.mu.Unlock()
	if old == n {
		return
	}
	s.stateChanged(SrvEvState)
	switch {
	case mode == AdminFMaint && old&AdminMaint != 0 && n&AdminMaint == 0:
		s.logLine("is UP/READY (leaving forced maintenance).")
	case mode == AdminIMaint && old&AdminMaint != 0 && n&AdminMaint == 0:
		s.logLine("is UP/READY (leaving maintenance).")
	case mode == AdminFDrain && n&(AdminDrainMask|AdminMaint) == 0:
		s.logLine("is UP (leaving forced drain).")
	}
	if (mode&AdminMaint != 0 && n&AdminMaint != 0) || (mode&AdminDrainMask != 0 && n&AdminDrainMask != 0) {
		return
	}
	for _, t := range s.trackers() {
		t.clrAdminFlag(inherited(mode))
	}
}

// s.mu must be held.
func (s *Server) leaveMaintLocked() {
	// Only enabled checks are resumed; a server without checks keeps the
	// paused bit that `disabled` gave it, as HAProxy's state shows.
	checked := false
	if cs := s.CheckState.Load(); cs&ChkStEnabled != 0 {
		s.CheckState.Store(cs &^ ChkStPaused)
		checked = true
	}
	if as := s.AgentState.Load(); as&ChkStEnabled != 0 {
		s.AgentState.Store(as &^ ChkStPaused)
		checked = true
	}
	if checked {
		s.Health.Store(int32(s.Rise))
	}
	// A tracking server follows the server it tracks.
	switch t := s.tracked(); {
	case t != nil && t.op.Load() == OpStopped:
	case t != nil && t.op.Load() == OpStopping:
		s.setOpLocked(OpStopping)
	default:
		s.setOpLocked(OpRunning)
	}
}

// setOpLocked changes the operational state and keeps the down
// transitions and the time spent down, which show stat reports.
// s.mu must be held.
func (s *Server) setOpLocked(op uint32) {
	old := s.op.Swap(op)
	switch {
	case old != OpStopped && op == OpStopped:
		s.ChkDown.Add(1)
	case old == OpStopped && op != OpStopped:
		if d := time.Now().Unix() - s.lastChange.Load(); d > 0 {
			s.DownTime.Add(d)
		}
	}
}

// DownTimeNow is the time s has spent down, including the current period.
func (s *Server) DownTimeNow(now int64) int64 {
	d := s.DownTime.Load()
	if s.op.Load() == OpStopped {
		d += now - s.lastChange.Load()
	}
	return d
}

// trackers lists the servers whose `track` names s.
func (s *Server) trackers() []*Server {
	r := s.rt()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.trackers
}

func (s *Server) tracked() *Server {
	r := s.rt()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.trackedSrv
}

// SetOperational changes the operational state as a check verdict does
// (OpRunning, OpStopping or OpStopped), unless s is in maintenance, and
// passes it on to the servers tracking s. The check package reports
// through it.
func (s *Server) SetOperational(op uint32) {
	s.setOperationalSelf(op)
	for _, t := range s.trackers() {
		t.SetOperational(op)
	}
}

// setOperationalSelf is SetOperational without the trackers.
func (s *Server) setOperationalSelf(op uint32) {
	s.mu.Lock()
	changed := false
	if s.AdminState()&AdminMaint == 0 && s.op.Load() != op {
		s.setOpLocked(op)
		changed = true
	}
	s.mu.Unlock()
	if changed {
		s.stateChanged(SrvEvState)
	}
}

// Health commands of `set server health`.
const (
	HealthUp = iota
	HealthStopping
	HealthDown
)

// SetHealth forces the operational state as a check would: up (health at
// rise+fall-1, running), stopping (NOLB) or down (health 0, stopped).
func (s *Server) SetHealth(h int) error { return s.SetHealthBy(h, "changed from CLI") }

// SetHealthBy is SetHealth with the reason the state change reports.
func (s *Server) SetHealthBy(h int, why string) error {
	if s.Track != "" {
		return ErrTrackingServer
	}
	var ev check.StateEvent
	var op uint32
	switch h {
	case HealthUp:
		s.Health.Store(int32(s.Rise + s.Fall - 1))
		ev, op = check.EventUp, OpRunning
	case HealthStopping:
		// HAProxy counts a server forced to stopping as fully checked.
		s.Health.Store(int32(s.Rise + s.Fall - 1))
		ev, op = check.EventStopping, OpStopping
	case HealthDown:
		s.Health.Store(0)
		ev, op = check.EventDown, OpStopped
	default:
		return nil
	}
	switch {
	case s.OpState() == op:
		// Nothing to tell, but the trackers follow as before.
		s.SetOperational(op)
	case s.Proxy == nil:
		s.SetOperational(op)
	default:
		s.changeOperational(ev, op, check.Reason{Text: why}, nil)
	}
	s.touch()
	return nil
}

// SetAgent forces the agent's verdict up or down.
func (s *Server) SetAgent(up bool) error {
	if s.AgentState.Load()&ChkStEnabled == 0 {
		return ErrNoAgent
	}
	if up {
		s.SetOperational(OpRunning)
	} else {
		s.SetOperational(OpStopped)
	}
	s.touch()
	return nil
}

// StaticLB reports whether p's algorithm has static weights (static-rr and
// map-based hashing): such backends accept only 0 or the initial weight,
// and no dynamic servers.
func (p *Proxy) StaticLB() bool {
	algo := "roundrobin"
	if len(p.Balance) > 0 {
		algo = p.Balance[0]
	}
	switch algo {
	case "roundrobin", "leastconn", "first", "random", "vnswrr":
		return false
	case "static-rr":
		return true
	}
	if strings.HasPrefix(algo, "random") {
		return false
	}
	// Hash-based: map-based unless hash-type consistent.
	return !(len(p.HashType) > 0 && p.HashType[0] == "consistent")
}

// ParseWeight reads `<w>` or `<w>%` as `set weight` does: an absolute
// weight 0..256, or a percentage of the initial weight capped at 256.
// Static algorithms accept only 0 and the initial weight.
func (s *Server) ParseWeight(str string) (int, error) {
	if str == "" {
		return 0, ErrWeightMissing
	}
	w, rest, ok := strtol(str)
	if !ok {
		return 0, ErrWeightEmpty
	}
	switch {
	case rest == "%":
		if w < 0 {
			return 0, ErrWeightNegative
		}
		if w > 25600 {
			w = 25600
		}
		w = int64(s.IWeight) * w / 100
		if w > 256 {
			w = 256
		}
	case w < 0 || w > 256:
		return 0, ErrWeightRange
	case rest != "":
		return 0, ErrWeightTrailing
	}
	if w != 0 && int(w) != s.IWeight && s.Proxy != nil && s.Proxy.StaticLB() {
		return 0, ErrStaticWeight
	}
	return int(w), nil
}

// strtol reads a C strtol-style integer: leading blanks, a sign, digits,
// saturating on overflow. ok is false when no digit was read.
func strtol(s string) (v int64, rest string, ok bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\v' || s[i] == '\f') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if v < 1<<40 {
			v = v*10 + int64(s[i]-'0')
		}
		i++
	}
	if i == start {
		return 0, s, false
	}
	if neg {
		v = -v
	}
	return v, s[i:], true
}

// Strtol is strtol for runtime's argument parsers.
func Strtol(s string) (v int64, rest string, ok bool) { return strtol(s) }

// Atoi is C's atoi: leading blanks, a sign, digits; 0 when none.
func Atoi(s string) int {
	v, _, _ := Strtol(s)
	if v > 1<<31-1 {
		return 1<<31 - 1
	}
	if v < -1<<31 {
		return -1 << 31
	}
	return int(v)
}

// SetWeight sets the user weight (already validated by ParseWeight).
func (s *Server) SetWeight(w int) {
	if w < 0 {
		w = 0
	} else if w > 256 {
		w = 256
	}
	old := s.uweight.Swap(int32(w))
	if int(old) != w {
		s.stateChanged(SrvEvWeight)
	}
}

// SetAddrPort changes the server's address and/or port. A new ServerAddr
// with the next generation replaces the old one, so that no pooled
// connection to the old address is reused; the hooks flush them.
func (s *Server) SetAddrPort(ip netip.Addr, setIP bool, port int, setPort bool) {
	s.mu.Lock()
	old := s.addr.Load()
	n := &ServerAddr{}
	if old != nil {
		*n = *old
	}
	if setIP {
		n.IP = ip
		n.Host = ip.String()
		n.Unix = ""
	}
	if setPort {
		n.Port = port
	}
	n.Gen++
	s.addr.Store(n)
	s.mu.Unlock()
	s.touch()
	fireServer(s, SrvEvAddr)
}

// SetMaxConn changes the server's maxconn (0 = unlimited).
func (s *Server) SetMaxConn(n int) {
	s.maxconn.Store(int64(n))
	fireServer(s, SrvEvMaxConn)
}

// SetCheckAddr sets the address health checks go to, and the port if
// port >= 0.
func (s *Server) SetCheckAddr(addr string, port int) error {
	r := s.rt()
	return s.setProbeAddr(&s.CheckState, ErrNoCheck, &r.checkAddr, &r.checkPort, addr, port)
}

// SetAgentAddr sets the agent's address, and the port if port >= 0.
func (s *Server) SetAgentAddr(addr string, port int) error {
	r := s.rt()
	return s.setProbeAddr(&s.AgentState, ErrNoAgent, &r.agentAddr, &r.agentPort, addr, port)
}

// setProbeAddr changes the address (unless empty) and port (unless
// negative) a health check or agent probes, when that probe is enabled.
func (s *Server) setProbeAddr(state *atomic.Int32, off error, addrp *string, portp *int, addr string, port int) error {
	if state.Load()&ChkStEnabled == 0 {
		return off
	}
	r := s.rt()
	r.mu.Lock()
	if addr != "" {
		*addrp = addr
	}
	if port >= 0 {
		*portp = port
	}
	r.mu.Unlock()
	fireServer(s, SrvEvCheck)
	return nil
}

// SetAgentSend sets the string the agent check sends.
func (s *Server) SetAgentSend(str string) error {
	if s.AgentState.Load()&ChkStEnabled == 0 {
		return ErrNoAgent
	}
	r := s.rt()
	r.mu.Lock()
	r.agentSend = str
	r.mu.Unlock()
	fireServer(s, SrvEvCheck)
	return nil
}

// EnableHealth and DisableHealth turn health checks on and off.
func (s *Server) EnableHealth() error {
	cs := s.CheckState.Load()
	if cs&ChkStConfigured == 0 {
		return ErrCheckNotConf
	}
	s.CheckState.Store(cs | ChkStEnabled)
	fireServer(s, SrvEvCheck)
	return nil
}

func (s *Server) DisableHealth() {
	s.CheckState.Store(s.CheckState.Load() &^ ChkStEnabled)
	fireServer(s, SrvEvCheck)
}

// EnableAgent and DisableAgent turn agent checks on and off.
func (s *Server) EnableAgent() error {
	as := s.AgentState.Load()
	if as&ChkStConfigured == 0 {
		return ErrAgentNotConf
	}
	s.AgentState.Store(as | ChkStEnabled)
	fireServer(s, SrvEvCheck)
	return nil
}

func (s *Server) DisableAgent() {
	s.AgentState.Store(s.AgentState.Load() &^ ChkStEnabled)
	fireServer(s, SrvEvCheck)
}

// SSLSettable reports whether the server has ssl settings, from its line
// or its default-server, that set server ssl can switch on.
func (s *Server) SSLSettable() bool {
	if s.SSL == 1 || len(s.SSLArgs) > 0 {
		return true
	}
	r := s.rt()
	r.mu.Lock()
	defer r.mu.Unlock()
	return s.sslKept
}

// SetSSL turns TLS to the server on or off; only servers whose
// configuration (or default-server) has ssl settings can.
func (s *Server) SetSSL(on bool) error {
	if !s.SSLSettable() {
		return ErrNoSSLContext
	}
	r := s.rt()
	r.mu.Lock()
	if on {
		r.sslOn = 1
	} else {
		r.sslOn = 0
	}
	r.mu.Unlock()
	fireServer(s, SrvEvSSL)
	return nil
}

// SetFQDN changes the server's name; goha has no resolvers section, so
// this always fails with ErrNoResolution unless one is configured.
func (s *Server) SetFQDN(name string) error {
	if s.Resolvers == "" {
		return ErrNoResolution
	}
	s.mu.Lock()
	s.FQDN = name
	s.mu.Unlock()
	s.stateChanged(SrvEvAddr)
	return nil
}

// ShutdownSessions asks the data path to kill the server's streams.
func (s *Server) ShutdownSessions() { fireServer(s, SrvEvShutdownSessions) }

// AddServer creates a dynamic server in backend p of configuration c
// from `add server`'s words. It starts in forced maintenance with its
// checks not enabled; a server it tracks is looked up in c.
func (p *Proxy) AddServer(c *Config, name, addr string, args []string) (*Server, []error) {
	if p.StaticLB() {
		return nil, []error{ErrNotDynamicLB}
	}
	if err := checkMuxProto(p, args); err != nil {
		return nil, []error{err}
	}
	// The address parser expands environment variables, from the socket
	// as from the configuration.
	s, errs := NewServer(p, name, config.ExpandEnv(addr, nil), args)
	for _, e := range errs {
		if !isWarn(e) {
			return nil, errs
		}
	}
	var tracked *Server
	if s.Track != "" {
		t, err := dynamicTrackTarget(c, p, s.Track)
		if err != nil {
			return nil, []error{err}
		}
		tracked = t
	}
	p.lbMu.Lock()
	defer p.lbMu.Unlock()
	if p.FindServer(name) != nil {
		return nil, []error{ErrServerExists}
	}
	list := append([]*Server(nil), p.ServerList()...)
	if !s.ForcedID {
		used := map[int]bool{}
		for _, o := range list {
			used[o.ID] = true
		}
		id := 1
		for used[id] {
			id++
		}
		s.ID = id
	}
	s.Dynamic = true
	s.admin.Store(AdminFMaint)
	s.op.Store(OpStopped)
	s.Health.Store(0)
	var cs, as int32
	if s.Check {
		cs = ChkStConfigured
	}
	if s.Agent {
		as = ChkStAgent | ChkStConfigured
	}
	s.CheckState.Store(cs)
	s.AgentState.Store(as)
	s.CheckStatus.Store(HChkIni)
	s.rt().fresh.Store(true)
	s.touch()
	if tracked != nil {
		// Newest first, as HAProxy chains a server's trackers, so that
		// state changes reach (and are logged for) the newest first.
		tr := tracked.rt()
		tr.mu.Lock()
		tr.trackers = append([]*Server{s}, tr.trackers...)
		tr.mu.Unlock()
		r := s.rt()
		r.mu.Lock()
		r.trackedSrv = tracked
		r.mu.Unlock()
	}
	list = append(list, s)
	p.srvList.Store(&list)
	fireServer(s, SrvEvAdded)
	return s, nil
}

// dynamicTrackTarget resolves a dynamic server's track argument, which
// must name a static server that is checked or itself tracks one.
func dynamicTrackTarget(c *Config, p *Proxy, ref string) (*Server, error) {
	beName, srvName := p.Name, ref
	if i := strings.IndexByte(ref, '/'); i >= 0 {
		beName, srvName = ref[:i], ref[i+1:]
	}
	var be *Proxy
	if c != nil {
		be = c.FindProxy(beName, CapBE)
	} else if beName == p.Name {
		be = p
	}
	if be == nil {
		return nil, fmt.Errorf("unable to find required proxy '%s' for tracking.", beName)
	}
	t := be.FindServer(srvName)
	if t == nil {
		return nil, fmt.Errorf("unable to find required server '%s' for tracking.", srvName)
	}
	if t.Dynamic {
		return nil, fmt.Errorf("unable to use %s/%s for tracking as it is a dynamic server.", beName, srvName)
	}
	if !t.Check && !t.Agent && t.Track == "" {
		return nil, fmt.Errorf("unable to use %s/%s for tracking as it does not have any check nor agent enabled.", beName, srvName)
	}
	return t, nil
}

// serverMuxes are the multiplexers a server's proto may name, and whether
// each is usable in a TCP backend (none is, in HAProxy 2.6).
var serverMuxes = map[string]bool{"h1": false, "h2": false, "fcgi": false, "none": false}

// checkMuxProto validates add server's proto keyword as HAProxy does
// before it creates the server: goha itself speaks HTTP/1 to servers
// whatever the keyword names.
func checkMuxProto(p *Proxy, args []string) error {
	for i := 0; i < len(args); i++ {
		kw := args[i]
		if kw != "proto" {
			if k, ok := serverKeywords[kw]; ok {
				i += k.Args
			}
			continue
		}
		if i+1 >= len(args) || args[i+1] == "" {
			return errors.New("'proto' : missing value.")
		}
		tcpOK, known := serverMuxes[args[i+1]]
		if !known {
			return fmt.Errorf("'proto' :  unknown MUX protocol '%s'.", args[i+1])
		}
		if p.Mode == ModeTCP && !tcpOK {
			return ErrMuxNotUsable
		}
		i++
	}
	return nil
}

func isWarn(e error) bool {
	var w *diag.Warn
	return errors.As(e, &w)
}

// Reference marks s as used by another configuration element (track,
// use-server, an ACL), which forbids deleting it.
func (s *Server) Reference() {
	r := s.rt()
	r.mu.Lock()
	r.refs++
	r.mu.Unlock()
}

// DelServer removes s from p. s must be in maintenance and serve nothing.
func (p *Proxy) DelServer(s *Server) error {
	r := s.rt()
	r.mu.Lock()
	refs := r.refs
	r.mu.Unlock()
	if refs > 0 || s.referencedByTrack() {
		return ErrServerInUse
	}
	if s.AdminState()&AdminMaint == 0 {
		return ErrNotInMaint
	}
	if s.served.Load() > 0 {
		return ErrServerBusy
	}
	p.lbMu.Lock()
	cur := p.ServerList()
	list := make([]*Server, 0, len(cur))
	found := false
	for _, o := range cur {
		if o == s {
			found = true
			continue
		}
		list = append(list, o)
	}
	if found {
		p.srvList.Store(&list)
	}
	p.lbMu.Unlock()
	if t := s.tracked(); t != nil {
		tr := t.rt()
		tr.mu.Lock()
		kept := make([]*Server, 0, len(tr.trackers))
		for _, o := range tr.trackers {
			if o != s {
				kept = append(kept, o)
			}
		}
		tr.trackers = kept
		tr.mu.Unlock()
	}
	fireServer(s, SrvEvDeleted)
	s.releaseTLS()
	p.updateBackendState()
	return nil
}

func (s *Server) referencedByTrack() bool {
	if s.Proxy == nil {
		return false
	}
	for _, o := range s.Proxy.ServerList() {
		if o != s && (o.Track == s.Name || o.Track == s.Proxy.Name+"/"+s.Name) {
			return true
		}
	}
	return false
}

// FrontendStopped reports whether `disable frontend` paused p.
func (p *Proxy) FrontendStopped() bool { return p.stopped.Load() }

// DisableFrontend stops accepting on p's listeners; ErrAlreadyState when
// it was already paused.
func (p *Proxy) DisableFrontend() error {
	if p.stopped.Swap(true) {
		return ErrAlreadyState
	}
	fireProxy(p, PxEvDisable)
	return nil
}

// EnableFrontend resumes a paused frontend.
func (p *Proxy) EnableFrontend() error {
	if !p.stopped.Swap(false) {
		return ErrAlreadyState
	}
	fireProxy(p, PxEvEnable)
	return nil
}

// ShutdownFrontend closes the frontend's listeners for good.
func (p *Proxy) ShutdownFrontend() {
	pxRuntime(p).shut.Store(true)
	p.stopped.Store(true)
	fireProxy(p, PxEvShutdown)
}

// FrontendShut reports whether `shutdown frontend` stopped p for good.
func (p *Proxy) FrontendShut() bool { return pxRuntime(p).shut.Load() }

// LiveMaxConn is the frontend's maxconn in force.
func (p *Proxy) LiveMaxConn() int {
	if v := p.liveMaxConn.Load(); v > 0 {
		return int(v)
	}
	return p.MaxConn
}

// SetLiveMaxConn changes the frontend's maxconn.
func (p *Proxy) SetLiveMaxConn(n int) {
	p.liveMaxConn.Store(int64(n))
	if n == 0 {
		p.liveMaxConn.Store(-1)
	}
	fireProxy(p, PxEvMaxConn)
}

func (c *Config) rt() *cfgRuntimeState { return &c.live }

// Rate limits of `set rate-limit`.
const (
	RateConnections = iota
	RateSessions
	RateSSLSessions
	RateCompression
)

// GlobalMaxConn is the process maxconn in force: the one set at run time,
// or the configured one (hard maxconn).
func (c *Config) GlobalMaxConn() int {
	if v := c.rt().maxconn.Load(); v > 0 {
		return int(v)
	}
	return c.HardMaxConn()
}

// HardMaxConn is the configured process maxconn, or HAProxy's default.
func (c *Config) HardMaxConn() int {
	if c.Global.MaxConn > 0 {
		return c.Global.MaxConn
	}
	listeners := len(c.Global.StatsSockets)
	for _, p := range c.Proxies {
		if p.IsFrontend() {
			listeners += len(p.Binds)
		}
	}
	return defaultMaxConn(listeners)
}

// defaultMaxConn is HAProxy 2.6's maxconn when none is configured: two
// descriptors per connection out of what the descriptor limit leaves
// after a reserve of 26 and one per listener (stats sockets included).
// With ulimit -n 20000 HAProxy reports 9986 for 1 or 2 listeners, 9985
// for 3 or 4, 9984 for 5 or 6.
func defaultMaxConn(listeners int) int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur < 100 {
		return 4096
	}
	n := (int(min(rl.Cur, 1<<24)) - 26 - listeners) / 2
	if n < 1 {
		return 4096
	}
	return n
}

// SetGlobalMaxConn changes the process maxconn; v <= 0 restores the
// configured one.
func (c *Config) SetGlobalMaxConn(v int) { c.rt().maxconn.Store(int64(max(v, 0))) }

// RateLimit returns a process rate limit (0 = none).
func (c *Config) RateLimit(which int) int { return int(c.rt().rateLimits[which].Load()) }

// SetRateLimit changes a process rate limit.
func (c *Config) SetRateLimit(which, v int) { c.rt().rateLimits[which].Store(int64(v)) }

// FindBackendRef looks up a backend by name or `#<id>`.
func (c *Config) FindBackendRef(be string) *Proxy {
	p, _ := c.FindServerRef(be, "#0")
	return p
}

// FindServerRef looks up `<backend>/<server>`, where either side may be
// `#<id>`. It returns the backend, the server, or which part failed.
func (c *Config) FindServerRef(be, srv string) (*Proxy, *Server) {
	var p *Proxy
	if id, ok := hashID(be); ok {
		p = c.FindProxyID(id)
		if p != nil && !p.IsBackend() {
			p = nil
		}
	} else {
		p = c.FindProxy(be, CapBE)
	}
	if p == nil {
		return nil, nil
	}
	if id, ok := hashID(srv); ok {
		for _, s := range p.ServerList() {
			if s.ID == id {
				return p, s
			}
		}
		return p, nil
	}
	return p, p.FindServer(srv)
}

func hashID(s string) (int, bool) {
	if len(s) < 2 || s[0] != '#' {
		return 0, false
	}
	n, err := strconv.Atoi(s[1:])
	return n, err == nil
}

// SavedState is one server's line of a server-state file (`show servers
// state`), as ApplySavedState needs it.
type SavedState struct {
	OpState, AdminState    int
	UWeight, IWeight       int
	SinceChange            int64
	CheckStatus, CheckRes  int
	CheckHealth            int
	CheckState, AgentState int
	Addr                   string // "-" or an IP
	Port                   int    // -1 when absent
}

// ApplySavedState restores a state saved before a reload, with HAProxy's
// precedence rules: a configuration change (the `disabled` keyword, the
// configured weight) wins over the saved run-time change; otherwise the
// saved operational state, maintenance, drain, weight, disabled checks and
// address come back. The address is applied only when init-addr allows
// "last" (the default).
func (s *Server) ApplySavedState(st SavedState) {
	s.mu.Lock()
	health := st.CheckHealth
	rise, fall := s.Rise, s.Fall
	maint := s.AdminState()&AdminMaint != 0
	switch st.OpState {
	case OpStopped:
		health = 0
		if !maint {
			s.op.Store(OpStopped)
		}
	case OpStarting:
		if rise == 1 {
			health = rise + fall - 1
			if !maint {
				s.op.Store(OpRunning)
			}
			break
		}
		if health < 1 || health >= rise {
			health = rise - 1
		}
		s.op.Store(OpStarting)
	case OpStopping:
		if fall == 1 {
			health = 0
			if !maint {
				s.op.Store(OpStopped)
			}
			break
		}
		if health < rise || health > rise+fall-2 {
			health = rise
		}
		if !maint {
			s.op.Store(OpStopping)
		}
	case OpRunning:
		health = rise + fall - 1
		if !maint {
			s.op.Store(OpRunning)
		}
	}
	s.Health.Store(int32(health))
	s.mu.Unlock()

	cur := s.admin.Load()
	saved := uint32(st.AdminState)
	switch {
	case saved&AdminCMaint != cur&AdminCMaint:
		if cur&AdminCMaint != 0 {
			s.SetMaint()
		} else {
			s.SetReady()
		}
	case saved&AdminFMaint != 0 && cur&AdminCMaint == 0:
		s.SetMaint()
	case saved&AdminFMaint == 0 && cur&AdminCMaint != 0:
		s.SetReady()
	}
	if s.admin.Load()&AdminFMaint == 0 && saved&AdminFDrain != 0 && (st.IWeight > 0 || s.IWeight == 0) {
		s.SetDrain()
	}
	s.lastChange.Store(time.Now().Unix() - st.SinceChange)
	s.CheckStatus.Store(int32(st.CheckStatus))
	s.CheckResult.Store(int32(st.CheckRes))
	if cs := s.CheckState.Load(); cs&ChkStConfigured != 0 && st.CheckState&ChkStConfigured != 0 && st.CheckState&ChkStEnabled == 0 {
		s.CheckState.Store(cs &^ ChkStEnabled)
	}
	if as := s.AgentState.Load(); as&ChkStConfigured != 0 && st.AgentState&ChkStConfigured != 0 && st.AgentState&ChkStEnabled == 0 {
		s.AgentState.Store(as &^ ChkStEnabled)
	}
	if st.IWeight == s.IWeight {
		s.uweight.Store(int32(st.UWeight))
	}
	ip, err := netip.ParseAddr(st.Addr)
	useLast := s.InitAddr == "" || strings.Contains(s.InitAddr, "last")
	cur2 := s.Addr()
	setIP := err == nil && useLast && (cur2 == nil || cur2.IP != ip)
	setPort := st.Port >= 0 && (cur2 == nil || cur2.Port != st.Port)
	if setIP || setPort {
		s.SetAddrPort(ip, setIP, st.Port, setPort)
	}
	if setIP && s.admin.Load()&AdminRMaint != 0 {
		// init-addr deferred to "last" (or fell to "none"): the saved
		// address ends the wait for one.
		s.clrAdminFlag(AdminRMaint)
	}
	if s.Proxy != nil {
		s.Proxy.updateBackendState()
	}
	fireServer(s, SrvEvState)
	fireServer(s, SrvEvWeight)
}

// logAdmin reports an admin state change with the backend's server counts,
// as HAProxy words it ("left" with the sessions of a server going down,
// "online" otherwise).
func (s *Server) logAdmin(what string, down bool) {
	p := s.Proxy
	if p == nil {
		return
	}
	act, bck := p.UsableCounts()
	onBackup := ""
	if bck > 0 && act == 0 {
		onBackup = " Running on backup."
	}
	var msg string
	if down {
		msg = fmt.Sprintf("%sServer %s/%s %s. %d active and %d backup servers left.%s %d sessions active, 0 requeued, %d remaining in queue.",
			backupWord(s), p.Name, s.Name, what, act, bck, onBackup, s.Counters.Scur.Load(), p.BE.Qcur.Load())
	} else {
		msg = fmt.Sprintf("%sServer %s/%s %s. %d active and %d backup servers online.%s 0 sessions requeued, %d total in queue.",
			backupWord(s), p.Name, s.Name, what, act, bck, onBackup, p.BE.Qcur.Load())
	}
	level := ring.LevelNotice
	if down {
		level = ring.LevelAlert
	}
	p.LogEvent(msg, level)
	if down && act == 0 && bck == 0 {
		p.LogEventText(check.NoServerText(capName(p.Cap), p.Name, false),
			check.NoServerText(capName(p.Cap), p.Name, true), ring.LevelEmerg)
	}
}

// trackedName is "backend/server" of the server s tracks.
func (s *Server) trackedName() string {
	if strings.Contains(s.Track, "/") || s.Proxy == nil {
		return s.Track
	}
	return s.Proxy.Name + "/" + s.Track
}

func (s *Server) logLine(what string) {
	if s.Proxy != nil {
		s.Proxy.LogEvent(fmt.Sprintf("%sServer %s/%s %s", backupWord(s), s.Proxy.Name, s.Name, what), ring.LevelNotice)
	}
}

func backupWord(s *Server) string {
	if s.Backup {
		return "Backup "
	}
	return ""
}

// Usable says whether the load balancer may send new traffic to s.
func (s *Server) Usable() bool { return s.LBUsable() }

// logEvent reports a server or proxy event as HAProxy does: on the
// process's alert output and to the proxy's log targets.
func (p *Proxy) LogEvent(msg string, level int) {
	p.LogEventText(msg, msg, level)
}

// logEventText is logEvent for events whose stderr text differs from the
// syslog one. On stderr HAProxy tags every server and check event as a
// warning whatever its syslog severity; only a backend left without
// servers (emerg) is an alert there.
func (p *Proxy) LogEventText(msg, syslog string, level int) {
	if out := eventOut; out != nil {
		tag := "[WARNING]  "
		if level == ring.LevelEmerg {
			tag = "[ALERT]    "
		}
		fmt.Fprintf(out, "%s(%d) : %s\n", tag, pidNow(), msg)
	}
	p.SendLog([]byte(syslog), level)
}

func (p *Proxy) UsableCounts() (act, bck int) {
	for _, s := range p.ServerList() {
		if s.LBUsable() {
			if s.Backup {
				bck++
			} else {
				act++
			}
		}
	}
	return
}

// logStateChange logs that s left state was, and the backend's alert when
// s was usable before and was the last one: a server that only starts
// stopping leaves the backend as empty as one going down, and one that goes
// down from stopping has already been reported.
func LogStateChange(s *Server, ev check.StateEvent, was uint32, usable bool, why check.Reason) {
	p := s.Proxy
	act, bck := p.UsableCounts()
	p.LogEvent(check.StateChangeText(ev, s.Backup, p.Name, s.Name, why,
		check.Counts{Active: act, Backup: bck, Sessions: int(s.Counters.Scur.Load()), Queue: int(p.BE.Qcur.Load())}),
		stateChangeLevel(s, ev, was))
	if act == 0 && bck == 0 && usable && !s.LBUsable() {
		// HAProxy quotes the backend's name on stderr but not in syslog.
		p.LogEventText(check.NoServerText(capName(p.Cap), p.Name, false),
			check.NoServerText(capName(p.Cap), p.Name, true), ring.LevelEmerg)
	}
}

// stateChangeLevel is the syslog severity HAProxy gives a server's state
// change: losing a server that was taking its full share of traffic is an
// alert, while a server already stopping or drained was expected to go, so
// its loss, like every other change, is only a notice.
func stateChangeLevel(s *Server, ev check.StateEvent, was uint32) int {
	if ev == check.EventDown && was != OpStopping && s.AdminState()&AdminDrainMask == 0 {
		return ring.LevelAlert
	}
	return ring.LevelNotice
}

type trackerOp struct {
	s      *Server
	op     uint32
	usable bool
}

// trackerOps appends the servers tracking s, depth first, with their
// operational states.
func TrackerOps(s *Server, l []trackerOp) []trackerOp {
	for _, t := range s.trackers() {
		seen := t == s
		for _, x := range l {
			seen = seen || x.s == t
		}
		if seen {
			continue
		}
		l = append(l, trackerOp{t, t.OpState(), t.LBUsable()})
		l = TrackerOps(t, l)
	}
	return l
}

// totalWeight is the weight the load balancer shares among the usable
// servers: the active ones', or the backups' when no active server is left.
func (p *Proxy) TotalWeight() int {
	act, bck := 0, 0
	for _, s := range p.ServerList() {
		if !s.LBUsable() {
			continue
		}
		if s.Backup {
			bck += s.EWeight()
		} else {
			act += s.EWeight()
		}
	}
	if act > 0 {
		return act
	}
	return bck
}

// changeOperational moves s and the servers tracking it to op. The state
// reaches the server, then each tracker depth first, and HAProxy logs each
// change ("Server be2/t1 is DOWN via be/s1.") as it is made, so that every
// line counts the servers left at that moment. then runs once s has
// changed, before it is logged.
func (s *Server) changeOperational(ev check.StateEvent, op uint32, why check.Reason, then func()) {
	trk := TrackerOps(s, nil)
	was, usable := s.OpState(), s.LBUsable()
	s.setOperationalSelf(op)
	if then != nil {
		then()
	}
	LogStateChange(s, ev, was, usable, why)
	for _, t := range trk {
		t.s.setOperationalSelf(op)
		if t.s.OpState() != op || t.op == op {
			continue
		}
		via := t.s.tracked()
		LogStateChange(t.s, ev, t.op, t.usable, check.Reason{Via: via.Proxy.Name + "/" + via.Name})
	}
}
