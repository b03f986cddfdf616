package core

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"goha/core/config"
	"goha/core/diag"
)

type builder struct {
	cfg       *Config
	d         *diag.Collector
	lastDef   *Proxy
	postCheck []func(b *builder)
	// defRules and defTrack are what defaults sections' rules demand
	// (core/defaults_rules.go).
	defRules  map[*Proxy]*defRules
	defTrack  []string
	defRefs   map[*Proxy]uint8 // how each defaults section was used: by name (1), as the last one (2)
	localPeer string           // the name this process has in peers sections
	// localPeerSet says -L named it; peersSeen that a peers section was
	// read: either way a later localpeer line does not change it.
	localPeerSet, peersSeen bool
	dontFail                bool // -dr
	masterWorker            bool // -W or -Ws
	aborted                 bool // an error after which HAProxy reads no further (abortErr)
	fatalWarns              int  // warnings after which HAProxy stops with "Error(s) found"
}

// sectionHandlers handle sections other than global and proxies. A handler
// parses the whole section; the section is kept in Config.Sections.
var sectionHandlers = map[string]func(b *builder, s *config.Section){}

// postChecks run after every section is read and references are resolved,
// in registration order (HAProxy's REGISTER_POST_CHECK): check settings may
// follow server lines, so checks are initialised only here.
var postChecks []func(b *builder)

func registerSection(kind string, fn func(b *builder, s *config.Section)) {
	if _, dup := sectionHandlers[kind]; dup {
		panic("core: section registered twice: " + kind)
	}
	sectionHandlers[kind] = fn
}

func registerPostCheck(fn func(b *builder)) { postChecks = append(postChecks, fn) }

// proxyChecks run on each proxy once every section is read, after its
// references are resolved; features register theirs next to their
// keywords.
var proxyChecks []func(b *builder, p *Proxy)

func registerProxyCheck(fn func(b *builder, p *Proxy)) { proxyChecks = append(proxyChecks, fn) }

// Build turns parsed sections into a Config, reporting every problem into d
// in one pass. The caller refuses to start when d has an alert.
func Build(sections []config.Section, d *diag.Collector) *Config {
	return BuildWith(sections, d, BuildOptions{})
}

// BuildOptions are what the command line adds to the files.
type BuildOptions struct {
	LocalPeer string // -L: the name of this peer in peers sections; the host name if empty
	MaxConn   int    // -n: the process maxconn, over the global section's; 0 keeps it
	// ResolveDontFail (-dr): a server whose name does not resolve at
	// start-up waits in maintenance, with a warning, instead of failing.
	ResolveDontFail bool
	// MasterWorker (-W, -Ws): the process runs under a master, which
	// program sections need.
	MasterWorker bool
}

// BuildWith is Build with the command line's options.
func BuildWith(sections []config.Section, d *diag.Collector, o BuildOptions) *Config {
	b := &builder{cfg: &Config{Global: defaultGlobal(), Defaults: map[string]*Proxy{}}, d: d, localPeer: o.LocalPeer, dontFail: o.ResolveDontFail, masterWorker: o.MasterWorker}
	b.localPeerSet = b.localPeer != ""
	if b.localPeer == "" {
		b.localPeer, _ = os.Hostname()
	}
	for i := range sections {
		s := &sections[i]
		if b.aborted {
			break
		}
		switch s.Kind {
		case "global":
			for _, ln := range s.Lines {
				b.dispatch(s, nil, ln)
			}
		case "defaults", "frontend", "backend", "listen":
			b.proxySection(s)
		default:
			if h := sectionHandlers[s.Kind]; h != nil {
				h(b, s)
			} else {
				b.d.Warnf(s.Pos, "section '%s' is not supported by goha yet; ignored.", s.Kind)
			}
			b.cfg.Sections = append(b.cfg.Sections, s)
		}
	}
	if o.MaxConn > 0 {
		// -n has priority over the global section's maxconn.
		b.cfg.Global.MaxConn = o.MaxConn
	}
	b.cfg.ParseAlerts = d.FatalAlerts() + b.fatalWarns
	b.cfg.ParseDiags = len(d.All())
	if b.cfg.ParseAlerts > 0 {
		// As HAProxy: errors while reading stop the load before the
		// checks that need a complete configuration.
		return b.cfg
	}
	if !b.resolveUserlists() {
		// As HAProxy: nothing else is checked after an unresolved name.
		return b.cfg
	}
	b.checkDefaultsTables()
	b.validate()
	for _, fn := range postChecks {
		fn(b)
	}
	return b.cfg
}

func (b *builder) proxySection(s *config.Section) {
	var cap Cap
	switch s.Kind {
	case "defaults":
		cap = CapDefaults
	case "frontend":
		cap = CapFE
	case "backend":
		cap = CapBE
	case "listen":
		cap = CapFE | CapBE
	}
	if cap != CapDefaults && s.Name == "" {
		b.d.Alertf(s.Pos, "'%s' expects an <id> argument", s.Kind)
		return
	}
	if ch := invalidChar(s.Name); ch != "" && cap != CapDefaults {
		// HAProxy 2.6 checks the names of frontends, backends and
		// listens, which other objects refer to, not those of defaults.
		b.d.Alertf(s.Pos, "character '%s' is not permitted in '%s' name '%s'.", ch, s.Kind, s.Name)
	}
	p := &Proxy{Name: s.Name, Pos: s.Pos, Cap: cap, conf: b.cfg}
	// The template: `from <name>` or the last defaults section; a
	// defaults section starts afresh unless it names one.
	tmpl := b.lastDef
	if cap == CapDefaults {
		tmpl = nil
	}
	if s.From != "" {
		tmpl = b.cfg.Defaults[s.From]
		if tmpl == nil {
			b.d.Alertf(s.Pos, "defaults section '%s' not found for %s '%s'.", s.From, s.Kind, s.Name)
		}
	}
	if tmpl != nil {
		b.refDefaults(s, tmpl)
		b.inheritRules(s, cap, tmpl)
		p.ProxyConf = copyProxyConf(tmpl.ProxyConf)
		// Check rules come through the check package's inheritance.
		p.CheckRules = nil
		p.tmpl = tmpl
		if cap != CapDefaults {
			// A named defaults section's rules run before the proxy's
			// own, as in HAProxy.
			p.HTTPReqRules = slices.Clone(tmpl.HTTPReqRules)
			p.HTTPRespRules = slices.Clone(tmpl.HTTPRespRules)
			p.HTTPAfterRules = slices.Clone(tmpl.HTTPAfterRules)
			p.TCPReqRules = slices.Clone(tmpl.TCPReqRules)
			// The slots its capture rules declared, which come first.
			if cap&CapFE != 0 {
				p.ReqCaps = slices.Clone(tmpl.ReqCaps)
			}
			p.TCPRespRules = slices.Clone(tmpl.TCPRespRules)
		}
	} else {
		p.ProxyConf = defaultProxyConf()
	}
	if cap == CapDefaults {
		if s.Name != "" {
			if old := b.cfg.Defaults[s.Name]; old != nil {
				b.d.Alertf(s.Pos, "defaults section '%s' has the same name as another defaults section declared at %s.", s.Name, old.Pos)
			}
			b.cfg.Defaults[s.Name] = p
		}
		b.lastDef = p
	} else {
		for _, o := range b.cfg.Proxies {
			if o.Name == p.Name && (o.Cap&p.Cap) != 0 {
				// HAProxy capitalises this one, and names the first clash only.
				b.d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Parsing [%s:%d]: %s '%s' has the same name as %s '%s' declared at %s.",
					s.Pos.File, s.Pos.Line, capName(p.Cap), p.Name, capName(o.Cap), o.Name, o.Pos)})
				break
			}
		}
		b.cfg.Proxies = append(b.cfg.Proxies, p)
	}
	for _, ln := range s.Lines {
		b.dispatch(s, p, ln)
	}
}

// CapName is capName for the running process's messages.
func CapName(c Cap) string { return capName(c) }

// capName is how HAProxy's messages name a proxy's kind: a listen
// section is a "proxy" there.
func capName(c Cap) string {
	switch c {
	case CapFE:
		return "frontend"
	case CapBE:
		return "backend"
	case CapFE | CapBE:
		return "proxy"
	}
	return "defaults"
}

func defaultProxyConf() ProxyConf {
	return ProxyConf{
		Retries:       3,
		HTTPReuse:     "safe",
		DefaultServer: defaultServerConf(),
		Balance:       []string{"roundrobin"},
	}
}

// copyProxyConf copies a defaults section's settings so that the proxy's
// changes never reach back into the defaults.
func copyProxyConf(c ProxyConf) ProxyConf {
	c.Logs = slices.Clone(c.Logs)
	c.Balance = slices.Clone(c.Balance)
	c.HashType = slices.Clone(c.HashType)
	c.Cookie = slices.Clone(c.Cookie)
	c.CheckRules = slices.Clone(c.CheckRules)
	c.Errors = slices.Clone(c.Errors)
	c.DefaultServer = copyServerConf(c.DefaultServer)
	c.Comp = c.Comp.inherited()
	return c
}

func copyServerConf(s ServerConf) ServerConf {
	s.SSLArgs = maps.Clone(s.SSLArgs)
	return s
}

func defaultServerConf() ServerConf {
	return ServerConf{
		Weight:         1,
		Rise:           2,
		Fall:           3,
		PoolMaxConn:    -1,
		PoolPurgeDelay: 5e9,
		MaxReuse:       -1,
	}
}

// validate resolves references and assigns ids, after every section is read.
func (b *builder) validate() {
	// Server names: HAProxy checks them once the sections are read.
	for _, p := range b.cfg.Proxies {
		first := make(map[string]*Server, len(p.Servers))
		for _, s := range p.Servers {
			if o := first[s.Name]; o != nil {
				b.d.Alertf(s.Pos, "%s '%s', another server named '%s' was already defined at line %d, please use distinct names.", capName(p.Cap), p.Name, s.Name, o.Pos.Line)
				continue
			}
			first[s.Name] = s
		}
	}
	used := map[int]bool{}
	for _, p := range b.cfg.Proxies {
		if p.ForcedID {
			used[p.ID] = true
		}
	}
	// Auto ids start at 1, or at 2 when the global section's stats lines
	// made HAProxy's GLOBAL frontend, and skip forced ones.
	next := 1
	if b.cfg.Global.StatsFrontend {
		next = 2
	}
	for _, p := range b.cfg.Proxies {
		if p.ForcedID {
			continue
		}
		for used[next] {
			next++
		}
		p.ID = next
		used[next] = true
	}
	for _, p := range b.cfg.Proxies {
		if p.IsFrontend() && len(p.Binds) == 0 && !p.Disabled {
			b.d.Add(diag.Diag{Sev: diag.Warning, Msg: fmt.Sprintf("%s '%s' has no 'bind' directive. Please declare it as a backend if this was intended.", capName(p.Cap), p.Name)})
		}
		if p.DefaultBackend == "" && p.IsFrontend() && p.IsBackend() {
			p.DefBE = p
		}
		if p.DefaultBackend != "" {
			be := b.cfg.FindProxy(p.DefaultBackend, CapBE)
			if be == nil {
				b.d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Proxy '%s': unable to find required default_backend: '%s'.", p.Name, p.DefaultBackend)})
			} else {
				p.DefBE = be
				b.checkModes(p, be, "as its default backend")
			}
		}
		for _, ub := range p.UseBackends {
			if ub.Dynamic {
				// Named per request; the process compiles the format.
				continue
			}
			be := b.cfg.FindProxy(ub.Name, CapBE)
			if be == nil {
				b.d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Proxy '%s': unable to find required use_backend: '%s'.", p.Name, ub.Name)})
				continue
			}
			ub.Target = be
			b.checkModes(p, be, "in a 'use_backend' rule")
		}
		b.numberServers(p)
		b.checkTimeouts(p)
		for _, check := range proxyChecks {
			check(b, p)
		}
		if st := p.Stats; st != nil && len(st.HTTPRequest) > 0 && (len(st.Users) > 0 || st.Realm != "") {
			b.d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("proxy '%s': stats 'auth'/'realm' and 'http-request' can't be used at the same time.", p.Name)})
		}
		if p.Mode != ModeHTTP && !p.upgradesToHTTP() {
			if p.Stats != nil {
				b.d.Add(diag.Diag{Sev: diag.Warning, Msg: fmt.Sprintf("'stats' statement ignored for %s '%s' as it requires HTTP mode.", capName(p.Cap), p.Name)})
				p.Stats = nil
			}
			// A tcp-mode stream that never becomes HTTP (switch-mode
			// http, an HTTP backend) cannot run them.
			for _, r := range []struct {
				kw    string
				rules []LineDef
			}{{"http-request", p.HTTPReqRules}, {"http-response", p.HTTPRespRules}} {
				if len(r.rules) > 0 {
					b.d.Add(diag.Diag{Sev: diag.Warning, Msg: fmt.Sprintf("'%s' rules ignored for %s '%s' as they require HTTP mode.", r.kw, capName(p.Cap), p.Name)})
				}
			}
		}
	}
	for _, p := range b.cfg.Proxies {
		for _, s := range p.Servers {
			if s.Track != "" {
				b.resolveTrack(p, s)
			}
		}
	}
}

func (b *builder) checkModes(fe, be *Proxy, how string) {
	if fe.Mode == ModeHTTP && be.Mode == ModeTCP {
		b.d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("%s %s '%s' (%s) tries to use incompatible %s %s '%s' (%s) %s (see 'mode').",
			fe.Mode, capName(fe.Cap), fe.Name, fe.Pos, be.Mode, capName(be.Cap), be.Name, be.Pos, how)})
	}
}

func (b *builder) numberServers(p *Proxy) {
	used := map[int]bool{}
	for _, s := range p.Servers {
		if s.ForcedID {
			if used[s.ID] {
				b.d.Add(diag.Diag{Sev: diag.Alert, Pos: s.Pos, Msg: fmt.Sprintf("'server %s/%s' : custom id %d already used.", p.Name, s.Name, s.ID)})
			}
			used[s.ID] = true
		}
	}
	next := 1
	for _, s := range p.Servers {
		if s.ForcedID {
			continue
		}
		for used[next] {
			next++
		}
		s.ID = next
		used[next] = true
	}
	p.nextSID = next
	for _, s := range p.Servers {
		if s.ID >= p.nextSID {
			p.nextSID = s.ID + 1
		}
	}
}

func (b *builder) resolveTrack(p *Proxy, s *Server) {
	beName, srvName := p.Name, s.Track
	if i := strings.IndexByte(s.Track, '/'); i >= 0 {
		beName, srvName = s.Track[:i], s.Track[i+1:]
	}
	be := b.cfg.FindProxy(beName, CapBE)
	if be == nil {
		b.d.Add(diag.Diag{Sev: diag.Alert, Pos: s.Pos, Msg: fmt.Sprintf("'server %s/%s' : unable to find required proxy '%s' for tracking.", p.Name, s.Name, beName)})
		return
	}
	t := be.FindServer(srvName)
	if t == nil {
		b.d.Add(diag.Diag{Sev: diag.Alert, Pos: s.Pos, Msg: fmt.Sprintf("'server %s/%s' : unable to find required server '%s' for tracking.", p.Name, s.Name, srvName)})
		return
	}
	if !t.Check && !t.Agent && t.Track == "" {
		b.d.Add(diag.Diag{Sev: diag.Alert, Pos: s.Pos, Msg: fmt.Sprintf("'server %s/%s' : unable to use %s/%s for tracking as it does not have any check nor agent enabled.", p.Name, s.Name, beName, srvName)})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// checkTimeouts warns, as HAProxy does, about proxies missing the timeouts
// that bound a connection's life.
func (b *builder) checkTimeouts(p *Proxy) {
	if p.Disabled {
		return
	}
	t := p.Timeouts
	missing := (p.IsFrontend() && t.Client == 0) || (p.IsBackend() && (t.Connect == 0 || t.Server == 0))
	if !missing {
		return
	}
	b.d.Add(diag.Diag{Sev: diag.Warning, Msg: fmt.Sprintf("missing timeouts for %s '%s'.\n"+
		"   | While not properly invalid, you will certainly encounter various problems\n"+
		"   | with such a configuration. To fix this, please ensure that all following\n"+
		"   | timeouts are set to a non-zero value: 'client', 'connect', 'server'.", capName(p.Cap), p.Name)})
}

func defaultGlobal() Global {
	return Global{
		StatsTimeout:    10 * time.Second,
		StatsMaxConn:    10,
		BufSize:         16384,
		MaxRewrite:      1024,
		CompMaxLevel:    1,
		PoolLowFDRatio:  20,
		PoolHighFDRatio: 25,
	}
}

// refDefaults records how s uses its defaults section: HAProxy warns (with
// an alert that does not refuse start-up) when one section is used both by
// name (`from`) and as the last defaults section, since a later edit could
// then change which proxies it reaches.
func (b *builder) refDefaults(s *config.Section, tmpl *Proxy) {
	if b.defRefs == nil {
		b.defRefs = map[*Proxy]uint8{}
	}
	const explicit, implicit = 1, 2
	use := uint8(implicit)
	if s.From != "" {
		use = explicit
	}
	if seen := b.defRefs[tmpl]; seen != 0 && seen&use == 0 && tmpl.Name != "" {
		b.d.Add(diag.Diag{Sev: diag.Alert, Pos: s.Pos, Parsing: true, Continue: true,
			Msg: fmt.Sprintf("defaults section '%s' (declared at %s) is explicitly referenced by another proxy and implicitly used here. "+
				"To avoid any ambiguity don't mix both usage. Add a last defaults section not explicitly used or always use explicit references.", tmpl.Name, tmpl.Pos)})
	}
	b.defRefs[tmpl] |= use
}

// upgradesToHTTP says whether a tcp frontend's streams may become HTTP:
// a switch-mode http content rule, or an HTTP default backend.
func (p *Proxy) upgradesToHTTP() bool {
	for _, r := range p.TCPReqRules {
		if r.Stage == "content" && len(r.Words) > 0 && r.Words[0] == "switch-mode" {
			return true
		}
	}
	return p.DefBE != nil && p.DefBE.Mode == ModeHTTP
}
