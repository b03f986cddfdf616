package runtime

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"goha/core"
	"goha/core/stream"
)

// Commands acting on servers.
func init() {
	Register(
		&Command{Words: []string{"get", "weight"}, Usage: "get weight <bk>/<srv>", Help: "report a server's current weight", Run: cmdGetWeight},
		&Command{Words: []string{"set", "weight"}, Usage: "set weight <bk>/<srv>  (DEPRECATED)",
			Help: "change a server's weight (use 'set server' instead)", Level: LevelAdmin, Run: cmdSetWeight},
		&Command{Words: []string{"set", "server"}, Usage: "set server <bk>/<srv> [opts]",
			Help: "change a server's state, weight, address or ssl", Level: LevelAdmin, Run: cmdSetServer},
		&Command{Words: []string{"enable", "server"}, Usage: "enable server  (DEPRECATED)",
			Help: "enable a disabled server (use 'set server' instead)", Level: LevelAdmin, Run: cmdEnableServer},
		&Command{Words: []string{"disable", "server"}, Usage: "disable server (DEPRECATED)",
			Help: "disable a server for maintenance (use 'set server' instead)", Level: LevelAdmin, Run: cmdDisableServer},
		&Command{Words: []string{"enable", "health"}, Usage: "enable health", Help: "enable health checks", Level: LevelAdmin, Run: cmdEnableHealth},
		&Command{Words: []string{"disable", "health"}, Usage: "disable health", Help: "disable health checks", Level: LevelAdmin, Run: cmdDisableHealth},
		&Command{Words: []string{"enable", "agent"}, Usage: "enable agent", Help: "enable agent checks", Level: LevelAdmin, Run: cmdEnableAgent},
		&Command{Words: []string{"disable", "agent"}, Usage: "disable agent", Help: "disable agent checks", Level: LevelAdmin, Run: cmdDisableAgent},
		&Command{Words: []string{"set", "maxconn", "server"}, Usage: "set maxconn server <bk>/<srv>",
			Help: "change a server's maxconn setting", Level: LevelAdmin, Run: cmdSetMaxConnServer},
		&Command{Words: []string{"shutdown", "sessions", "server"}, Usage: "shutdown sessions server <bk>/<srv>",
			Help: "kill sessions on a server", Level: LevelAdmin, Run: cmdShutdownSessions},
		&Command{Words: []string{"add", "server"}, Usage: "add server <bk>/<srv>", Help: "create a new server", Level: LevelAdmin, Run: cmdAddServer},
		&Command{Words: []string{"del", "server"}, Usage: "del server <bk>/<srv>", Help: "remove a dynamically added server", Level: LevelAdmin, Run: cmdDelServer},
		&Command{Words: []string{"show", "servers", "state"}, Usage: "show servers state [<backend>]",
			Help: "dump volatile server information (all or for a single backend)", Run: cmdShowServersState},
		&Command{Words: []string{"show", "servers", "conn"}, Usage: "show servers conn [<backend>]",
			Help: "dump server connections status (all or for a single backend)", Run: cmdShowServersConn},
	)
}

// updater is how HAProxy names the runtime API in its change messages.
const updater = "stats socket command"

// splitRef cuts `<backend>/<server>`; ok is false when either side is
// missing.
func splitRef(arg string) (be, srv string, ok bool) {
	i := strings.IndexByte(arg, '/')
	if i < 0 || i == len(arg)-1 {
		return "", "", false
	}
	return arg[:i], arg[i+1:], true
}

// findServer resolves a `<backend>/<server>` argument, writing HAProxy's
// error when it fails.
func findServer(c *Ctx, arg string) (*core.Proxy, *core.Server) {
	be, sv, ok := splitRef(arg)
	if !ok {
		c.Err("Require 'backend/server'.")
		return nil, nil
	}
	p, s := c.Proc.Conf.FindServerRef(be, sv)
	switch {
	case p == nil:
		c.Err("No such backend.")
	case s == nil:
		c.Err("No such server.")
	default:
		return p, s
	}
	return nil, nil
}

func cmdGetWeight(c *Ctx) {
	_, s := findServer(c, c.Arg(2))
	if s == nil {
		return
	}
	c.Printf("%d (initial %d)\n", s.UWeight(), s.IWeight)
}

// weightErrors are set weight's replies.
var weightErrors = map[error]string{
	core.ErrWeightMissing:  "Require <weight> or <weight%>.",
	core.ErrWeightEmpty:    "Empty weight string empty or preceded by garbage",
	core.ErrWeightNegative: "Relative weight must be positive.",
	core.ErrWeightRange:    "Absolute weight can only be between 0 and 256 inclusive.",
	core.ErrWeightTrailing: "Trailing garbage in weight string",
	core.ErrStaticWeight:   "Backend is using a static LB algorithm and only accepts weights '0%' and '100%'.",
}

func setWeight(c *Ctx, s *core.Server, arg string) {
	w, err := s.ParseWeight(arg)
	if err != nil {
		c.Err(weightErrors[err])
		return
	}
	s.SetWeight(w)
}

func cmdSetWeight(c *Ctx) {
	_, s := findServer(c, c.Arg(2))
	if s == nil {
		return
	}
	setWeight(c, s, c.Arg(3))
}

const setServerUsage = "usage: set server <backend>/<server> addr | agent | agent-addr | agent-port | agent-send | check-addr | check-port | fqdn | health | ssl | state | weight"

func cmdSetServer(c *Ctx) {
	_, s := findServer(c, c.Arg(2))
	if s == nil {
		return
	}
	ref := "set server <b>/<s> " + c.Arg(3)
	switch c.Arg(3) {
	case "weight":
		setWeight(c, s, c.Arg(4))
	case "state":
		switch c.Arg(4) {
		case "ready":
			s.SetReady()
		case "drain":
			s.SetDrain()
		case "maint":
			s.SetMaint()
		default:
			c.Err("'set server <srv> state' expects 'ready', 'drain' and 'maint'.")
		}
	case "health":
		if s.Track != "" {
			c.Err("cannot change health on a tracking server.")
			return
		}
		h, ok := map[string]int{"up": core.HealthUp, "stopping": core.HealthStopping, "down": core.HealthDown}[c.Arg(4)]
		if !ok {
			c.Err("'set server <srv> health' expects 'up', 'stopping', or 'down'.")
			return
		}
		s.SetHealth(h)
	case "agent":
		if s.AgentState.Load()&core.ChkStEnabled == 0 {
			c.Err("agent checks are not enabled on this server.")
			return
		}
		switch c.Arg(4) {
		case "up":
			s.SetAgent(true)
		case "down":
			s.SetAgent(false)
		default:
			c.Err("'set server <srv> agent' expects 'up' or 'down'.")
		}
	case "agent-addr", "check-addr":
		if c.Arg(4) == "" {
			c.Err(ref + " requires an address and optionally a port.")
			return
		}
		port := ""
		if c.Arg(5) == "port" {
			port = c.Arg(6)
		}
		checkTarget(c, s, c.Arg(3) == "agent-addr", c.Arg(4), port, c.Arg(5) == "port")
	case "agent-port", "check-port":
		if c.Arg(4) == "" {
			c.Err(ref + " requires a port.")
			return
		}
		checkTarget(c, s, c.Arg(3) == "agent-port", "", c.Arg(4), true)
	case "agent-send":
		if s.AgentState.Load()&core.ChkStEnabled == 0 {
			c.Err("agent checks are not enabled on this server.")
			return
		}
		s.SetAgentSend(c.Arg(4))
	case "addr":
		if c.Arg(4) == "" {
			c.Err(ref + " requires an address and optionally a port.")
			return
		}
		port, hasPort := "", false
		if c.Arg(5) == "port" {
			port, hasPort = c.Arg(6), true
		}
		// HAProxy keeps the low 16 bits of a port past 65535, so a typo
		// silently sends traffic elsewhere; refusing changes nothing.
		if v, _, ok := core.Strtol(port); hasPort && ok && (v < 0 || v > 65535) &&
			!strings.HasPrefix(port, "+") && !strings.HasPrefix(port, "-") {
			c.Err(fmt.Sprintf("provided port '%s' is invalid: it must be between 0 and 65535.", port))
			return
		}
		c.Warn(setAddr(s, c.Arg(4), port, hasPort))
	case "fqdn":
		if c.Arg(4) == "" {
			c.Err(ref + " requires a FQDN.")
			return
		}
		old := s.FQDN
		if err := s.SetFQDN(c.Arg(4)); err != nil {
			c.Err(ref + " failed because no resolution is configured.")
			return
		}
		if old == "" {
			old = "(null)"
		}
		c.Warn(fmt.Sprintf("%s/%s changed its FQDN from %s to %s by '%s'", s.Proxy.Name, s.Name, old, c.Arg(4), updater))
	case "ssl":
		if !s.SSLSettable() {
			c.Err("'set server <srv> ssl' cannot be set.  default-server should define ssl settings")
			return
		}
		switch c.Arg(4) {
		case "on", "off":
			s.SetSSL(c.Arg(4) == "on")
			c.Notice("server ssl setting updated.")
		default:
			c.Err("'set server <srv> ssl' expects 'on' or 'off'.")
		}
	default:
		c.Err(setServerUsage)
	}
}

// checkTarget validates and applies check-addr/check-port or
// agent-addr/agent-port; problems are warnings, as in HAProxy.
func checkTarget(c *Ctx, s *core.Server, agent bool, addr, port string, hasPort bool) {
	st := s.CheckState.Load()
	what := "health"
	if agent {
		st, what = s.AgentState.Load(), "agent"
	}
	if st&core.ChkStEnabled == 0 {
		c.Warn(what + " checks are not enabled on this server")
		return
	}
	if addr != "" {
		ip, err := netip.ParseAddr(addr)
		if err != nil || ip.Zone() != "" {
			c.Warn(fmt.Sprintf("invalid addr '%s'", addr))
			return
		}
		addr = ip.String()
	}
	p := -1
	if hasPort {
		n, err := strconv.Atoi(port)
		if err != nil {
			c.Warn("provided port is not an integer")
			return
		}
		if n < 0 || n > 65535 {
			c.Warn("provided port is invalid")
			return
		}
		p = n
	}
	if agent {
		s.SetAgentAddr(addr, p)
	} else {
		s.SetCheckAddr(addr, p)
	}
}

// setAddr applies `set server addr` and returns HAProxy 2.6's report.
func setAddr(s *core.Server, addr, port string, hasPort bool) string {
	var msg strings.Builder
	cur := s.Addr()
	ip, err := netip.ParseAddr(addr)
	if err != nil || ip.Zone() != "" {
		return fmt.Sprintf("Invalid addr '%s' by '%s'", addr, updater)
	}
	ip = ip.Unmap()
	if cur.Unix != "" || (!cur.IP.IsValid() && cur.Host != "" && cur.Host != "-") {
		if cur.Unix != "" {
			return fmt.Sprintf("Update for the current server address family is only supported through configuration file by '%s'", updater)
		}
	}
	setIP := false
	if cur.IP == ip {
		msg.WriteString("no need to change the addr")
	} else {
		old := "0.0.0.0"
		if cur.IP.IsValid() {
			old = cur.IP.String()
		}
		fmt.Fprintf(&msg, "IP changed from '%s' to '%s'", old, addr)
		setIP = true
	}
	newPort, setPort := 0, false
	if hasPort {
		msg.WriteString(", ")
		v, rest, ok := core.Strtol(port)
		switch {
		case !ok:
			fmt.Fprintf(&msg, "problem converting port '%s' to an int", port)
		case strings.HasPrefix(port, "+") || strings.HasPrefix(port, "-"):
			msg.WriteString("can't change <port> to port map because it is incompatible with current health check port configuration (use 'port' statement from the 'server' directive.")
		default:
			_ = rest
			newPort = int(v)
			if newPort != cur.Port {
				fmt.Fprintf(&msg, "port changed from '%d' to '%d'", cur.Port, newPort)
				setPort = true
			} else {
				msg.WriteString("no need to change the port")
			}
		}
	}
	if setIP || setPort {
		s.SetAddrPort(ip, setIP, newPort, setPort)
	}
	fmt.Fprintf(&msg, " by '%s'", updater)
	return msg.String()
}

func cmdEnableServer(c *Ctx) {
	if _, s := findServer(c, c.Arg(2)); s != nil {
		s.SetReady()
	}
}

func cmdDisableServer(c *Ctx) {
	if _, s := findServer(c, c.Arg(2)); s != nil {
		s.SetMaint()
	}
}

func cmdEnableHealth(c *Ctx) {
	if _, s := findServer(c, c.Arg(2)); s != nil {
		if s.EnableHealth() != nil {
			c.Err("Health check was not configured on this server, cannot enable.")
		}
	}
}

func cmdDisableHealth(c *Ctx) {
	if _, s := findServer(c, c.Arg(2)); s != nil {
		s.DisableHealth()
	}
}

func cmdEnableAgent(c *Ctx) {
	if _, s := findServer(c, c.Arg(2)); s != nil {
		if s.EnableAgent() != nil {
			c.Err("Agent was not configured on this server, cannot enable.")
		}
	}
}

func cmdDisableAgent(c *Ctx) {
	if _, s := findServer(c, c.Arg(2)); s != nil {
		s.DisableAgent()
	}
}

func cmdSetMaxConnServer(c *Ctx) {
	_, s := findServer(c, c.Arg(3))
	if s == nil {
		return
	}
	if c.Arg(4) == "" {
		c.Err("Require <maxconn>.")
		return
	}
	v, rest, ok := core.Strtol(c.Arg(4))
	switch {
	case !ok:
		c.Err("maxconn string empty or preceded by garbage")
	case rest != "":
		c.Err("Trailing garbage in maxconn string")
	default:
		s.SetMaxConn(int(v))
	}
}

func cmdShutdownSessions(c *Ctx) {
	if _, s := findServer(c, c.Arg(3)); s != nil {
		s.ShutdownSessions()
	}
}

func cmdAddServer(c *Ctx) {
	be, name, ok := splitRef(c.Arg(2))
	if !ok {
		c.Err("Require 'backend/server'.")
		return
	}
	p := c.Proc.Conf.FindBackendRef(be)
	if p == nil {
		c.Err("No such backend.")
		return
	}
	if p.StaticLB() {
		c.Err("Backend must use a dynamic load balancing to support dynamic servers.")
		return
	}
	if c.Arg(3) == "" {
		c.Err("'server' expects <name> and <addr>[:<port>] as arguments.")
		return
	}
	if p.FindServer(name) != nil {
		c.Err("Already exists a server with the same name in backend.")
		return
	}
	_, errs := p.AddServer(c.Proc.Conf, name, c.Arg(3), c.Args[4:])
	for _, err := range errs {
		switch {
		case errors.Is(err, core.ErrServerExists):
			c.Err("Already exists a server with the same name in backend.")
		case errors.Is(err, core.ErrNotDynamicLB):
			c.Err("Backend must use a dynamic load balancing to support dynamic servers.")
		default:
			c.Err(err.Error())
		}
		return
	}
	c.Msg("New server registered.")
}

func cmdDelServer(c *Ctx) {
	p, s := findServer(c, c.Arg(2))
	if s == nil {
		return
	}
	switch err := p.DelServer(s); {
	case err == nil:
		c.Msg("Server deleted.")
	case errors.Is(err, core.ErrServerInUse):
		c.Err("This server cannot be removed at runtime due to other configuration elements pointing to it.")
	case errors.Is(err, core.ErrNotInMaint):
		c.Err("Only servers in maintenance mode can be deleted.")
	case errors.Is(err, core.ErrServerBusy):
		c.Err("Server still has connections attached to it, cannot remove it.")
	default:
		c.Err(err.Error())
	}
}

// findBackendArg resolves the optional backend of show servers: a name or
// `#<id>`.
func findBackendArg(c *Ctx, arg string) (*core.Proxy, bool) {
	if arg == "" {
		return nil, true
	}
	p := c.Proc.Conf.FindBackendRef(arg)
	return p, p != nil
}

const serversStateHeader = "1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight srv_time_since_last_change srv_check_status srv_check_result srv_check_health srv_check_state srv_agent_state bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port srv_check_addr srv_agent_addr srv_agent_port\n"

func cmdShowServersState(c *Ctx) {
	only, ok := findBackendArg(c, c.Arg(3))
	if !ok {
		c.Err("Can't find backend.")
		return
	}
	c.WriteString(serversStateHeader)
	now := time.Now().Unix()
	buf := make([]byte, 0, 256)
	for _, p := range c.Proc.Conf.Proxies {
		if !p.IsBackend() || (only != nil && p != only) {
			continue
		}
		for _, s := range p.ServerList() {
			buf = AppendServerState(buf[:0], s, now)
			c.Write(buf)
		}
	}
}

// AppendServerState appends s's line of `show servers state` (also the
// server-state-file format).
func AppendServerState(b []byte, s *core.Server, now int64) []byte {
	p := s.Proxy
	a := s.Addr()
	b = strconv.AppendInt(b, int64(p.ID), 10)
	b = append(b, ' ')
	b = append(b, p.Name...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(s.ID), 10)
	b = append(b, ' ')
	b = append(b, s.Name...)
	b = append(b, ' ')
	if a != nil && a.IP.IsValid() {
		b = a.IP.AppendTo(b)
	} else {
		b = append(b, '-')
	}
	for _, v := range []int64{int64(s.OpState()), int64(s.AdminState()), int64(s.UWeight()), int64(s.IWeight),
		now - s.LastChange(), int64(s.CheckStatus.Load()), int64(s.CheckResult.Load()), int64(s.Health.Load()),
		int64(s.CheckState.Load() & 0x0f), int64(s.AgentState.Load() & 0x1f), b2i(p.ForcedID), b2i(s.ForcedID)} {
		b = append(b, ' ')
		b = strconv.AppendInt(b, v, 10)
	}
	b = append(b, ' ')
	b = appendDash(b, s.FQDN)
	b = append(b, ' ')
	port := 0
	if a != nil {
		port = a.Port
	}
	b = strconv.AppendInt(b, int64(port), 10)
	b = append(b, " - "...)
	caddr, cport, aaddr, aport, ssl := s.Targets()
	b = strconv.AppendInt(b, int64(ssl), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(cport), 10)
	b = append(b, ' ')
	b = appendDash(b, caddr)
	b = append(b, ' ')
	b = appendDash(b, aaddr)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(aport), 10)
	return append(b, '\n')
}

func appendDash(b []byte, s string) []byte {
	if s == "" {
		return append(b, '-')
	}
	return append(b, s...)
}

func b2i(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

func cmdShowServersConn(c *Ctx) {
	only, ok := findBackendArg(c, c.Arg(3))
	if !ok {
		c.Err("Can't find backend.")
		return
	}
	n := c.Proc.Threads
	c.Printf("# bkname/svname bkid/svid addr port - purge_delay used_cur used_max need_est unsafe_nb safe_nb idle_lim idle_cur idle_per_thr[%d]\n", n)
	for _, p := range c.Proc.Conf.Proxies {
		if !p.IsBackend() || (only != nil && p != only) {
			continue
		}
		for _, s := range p.ServerList() {
			st := stream.ServerConns(c.Proc, s)
			a := s.Addr()
			addr, port := "-", 0
			if a != nil {
				if a.IP.IsValid() {
					addr = a.IP.String()
				}
				port = a.Port
			}
			c.Printf("%s/%s %d/%d %s %d - %d %d %d %d %d %d %d %d", p.Name, s.Name, p.ID, s.ID, addr, port,
				s.PoolPurgeDelay.Milliseconds(), st.UsedCur, st.UsedMax, st.NeedEst, st.Unsafe, st.Safe, s.PoolMaxConn, st.IdleCur)
			for i := 0; i < n; i++ {
				v := 0
				if i < len(st.PerThread) {
					v = st.PerThread[i]
				}
				c.Printf(" %d", v)
			}
			c.WriteString("\n")
		}
	}
}
