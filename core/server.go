package core

import (
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"goha/core/config"
	"goha/core/diag"
	"goha/core/sample"
)

// serverKeyword is one keyword of a `server`, `default-server` or
// `add server` line. Args is how many words follow it.
type serverKeyword struct {
	Args          int
	Parse         func(s *ServerConf, args []string) error
	Unimplemented Gap
	NoDefault     bool // not allowed on default-server (id, cookie values, ...)
	// Missing is HAProxy's message when the arguments are missing; the
	// generic one is used when empty.
	Missing string
}

var serverKeywords = map[string]serverKeyword{}

func registerServerKeywords(m map[string]serverKeyword) {
	for k, v := range m {
		if _, dup := serverKeywords[k]; dup {
			panic("core: server keyword registered twice: " + k)
		}
		serverKeywords[k] = v
	}
}

func init() {
	registerServerKeywords(map[string]serverKeyword{
		"weight": {Args: 1, Parse: func(s *ServerConf, a []string) error {
			v, err := strconv.Atoi(a[0])
			if err != nil || v < 0 || v > 256 {
				return fmt.Errorf("weight of server {srv} is not within 0 and 256 (%s).", a[0])
			}
			s.Weight = v
			return nil
		}},
		"backup":    {Parse: func(s *ServerConf, a []string) error { s.Backup = true; return nil }},
		"no-backup": {Parse: func(s *ServerConf, a []string) error { s.Backup = false; return nil }},
		"disabled":  {Parse: func(s *ServerConf, a []string) error { s.Disabled = true; return nil }},
		"enabled":   {Parse: func(s *ServerConf, a []string) error { s.Disabled = false; return nil }},
		"maxconn":   {Args: 1, Parse: srvInt(func(s *ServerConf) *int { return &s.MaxConn })},
		"maxqueue":  {Args: 1, Parse: srvInt(func(s *ServerConf) *int { return &s.MaxQueue })},
		"minconn":   {Args: 1, Parse: srvInt(func(s *ServerConf) *int { return &s.MinConn })},
		"cookie":    {Args: 1, NoDefault: true, Parse: func(s *ServerConf, a []string) error { s.Cookie = a[0]; return nil }},
		"check":     {Parse: func(s *ServerConf, a []string) error { s.Check, s.CheckSet = true, true; return nil }},
		"no-check":  {Parse: func(s *ServerConf, a []string) error { s.Check, s.CheckSet = false, true; return nil }},
		"inter":     {Args: 1, Parse: srvTime(func(s *ServerConf) *time.Duration { return &s.Inter })},
		"fastinter": {Args: 1, Parse: srvTime(func(s *ServerConf) *time.Duration { return &s.FastInter })},
		"downinter": {Args: 1, Parse: srvTime(func(s *ServerConf) *time.Duration { return &s.DownInter })},
		"rise":      {Args: 1, Parse: srvPos(func(s *ServerConf) *int { return &s.Rise })},
		"fall":      {Args: 1, Parse: srvPos(func(s *ServerConf) *int { return &s.Fall })},
		"port":      {Args: 1, Parse: srvPort(func(s *ServerConf) *int { return &s.CheckPort })},
		"addr": {Args: 1, Parse: func(s *ServerConf, a []string) error {
			// A port given with the address is not where checks go: they
			// use "port", else the server's, as in HAProxy.
			s.CheckAddr = a[0]
			if h, _, err := net.SplitHostPort(a[0]); err == nil {
				s.CheckAddr = h
			}
			return nil
		}},
		"check-send-proxy":    {Parse: func(s *ServerConf, a []string) error { s.CheckSendProxy = true; return nil }},
		"no-check-send-proxy": {Parse: func(s *ServerConf, a []string) error { s.CheckSendProxy = false; return nil }},
		"check-ssl":           {Parse: func(s *ServerConf, a []string) error { s.CheckSSL = true; return nil }},
		"no-check-ssl":        {Parse: func(s *ServerConf, a []string) error { s.CheckSSL = false; return nil }},
		"check-sni":           {Args: 1, Parse: func(s *ServerConf, a []string) error { s.CheckSNI = a[0]; return nil }},
		"agent-check":         {Parse: func(s *ServerConf, a []string) error { s.Agent = true; return nil }},
		"no-agent-check":      {Parse: func(s *ServerConf, a []string) error { s.Agent = false; return nil }},
		"agent-inter":         {Args: 1, Parse: srvTime(func(s *ServerConf) *time.Duration { return &s.AgentInter })},
		"agent-port":          {Args: 1, Parse: srvPort(func(s *ServerConf) *int { return &s.AgentPort })},
		"agent-addr":          {Args: 1, Parse: func(s *ServerConf, a []string) error { s.AgentAddr = a[0]; return nil }},
		"agent-send":          {Args: 1, Parse: func(s *ServerConf, a []string) error { s.AgentSend = a[0]; return nil }},
		"observe": {Args: 1, Parse: func(s *ServerConf, a []string) error {
			if a[0] != "layer4" && a[0] != "layer7" && a[0] != "none" {
				return fmt.Errorf("'observe' expects one of 'none', 'layer4', 'layer7' but got '%s'", a[0])
			}
			s.Observe = a[0]
			return nil
		}},
		"error-limit": {Args: 1, Parse: srvPos(func(s *ServerConf) *int { return &s.ErrorLimit })},
		"on-error": {Args: 1, Parse: func(s *ServerConf, a []string) error {
			switch a[0] {
			case "fastinter", "fail-check", "sudden-death", "mark-down":
				s.OnError = a[0]
				return nil
			}
			return fmt.Errorf("'on-error' expects one of 'fastinter', 'fail-check', 'sudden-death' or 'mark-down' but got '%s'", a[0])
		}},
		"on-marked-down": {Args: 1, Parse: func(s *ServerConf, a []string) error {
			if a[0] != "shutdown-sessions" {
				return fmt.Errorf("'on-marked-down' expects 'shutdown-sessions' but got '%s'", a[0])
			}
			s.OnMarkedDown = a[0]
			return nil
		}},
		"on-marked-up": {Args: 1, Parse: func(s *ServerConf, a []string) error {
			if a[0] != "shutdown-backup-sessions" {
				return fmt.Errorf("'on-marked-up' expects 'shutdown-backup-sessions' but got '%s'", a[0])
			}
			s.OnMarkedUp = a[0]
			return nil
		}},
		"slowstart":     {Args: 1, Parse: srvTime(func(s *ServerConf) *time.Duration { return &s.SlowStart })},
		"track":         {Args: 1, NoDefault: true, Parse: func(s *ServerConf, a []string) error { s.Track = a[0]; return nil }},
		"init-addr":     {Args: 1, Parse: func(s *ServerConf, a []string) error { s.InitAddr = a[0]; return nil }},
		"send-proxy":    {Parse: func(s *ServerConf, a []string) error { s.SendProxy = true; return nil }},
		"send-proxy-v2": {Parse: func(s *ServerConf, a []string) error { s.SendProxyV2 = true; return nil }},
		"no-send-proxy": {Parse: func(s *ServerConf, a []string) error { s.SendProxy, s.SendProxyV2 = false, false; return nil }},
		"proxy-v2-options": {Args: 1, Parse: func(s *ServerConf, a []string) error {
			for _, o := range strings.Split(a[0], ",") {
				bits, ok := ppv2Options[o]
				if !ok {
					return fmt.Errorf("'%s' : proxy v2 option not implemented", o)
				}
				s.PPv2Opts |= bits
			}
			return nil
		}},
		"resolvers":      {Args: 1, Parse: func(s *ServerConf, a []string) error { s.Resolvers = a[0]; return nil }},
		"resolve-prefer": {Args: 1, Unimplemented: Refused},
		"pool-low-conn":  {Args: 1, Parse: srvInt(func(s *ServerConf) *int { return &s.PoolLowConn })},
		"pool-max-conn": {Args: 1, Parse: func(s *ServerConf, a []string) error {
			v, err := strconv.Atoi(a[0])
			if err != nil || v < -1 {
				return fmt.Errorf("'pool-max-conn' expects -1 or a positive integer but got '%s'", a[0])
			}
			s.PoolMaxConn = v
			return nil
		}},
		"pool-purge-delay": {Args: 1, Parse: srvTime(func(s *ServerConf) *time.Duration { return &s.PoolPurgeDelay })},
		"max-reuse":        {Args: 1, Parse: srvInt(func(s *ServerConf) *int { return &s.MaxReuse })},
		"id":               {Args: 1, NoDefault: true}, // handled by the server line itself
		"ssl":              {Parse: func(s *ServerConf, a []string) error { s.SSL = 1; return nil }},
		"no-ssl":           {Parse: func(s *ServerConf, a []string) error { s.SSL = -1; return nil }},
		"sni":              {Args: 1, Parse: serverSNI},
		"ciphers":          sslArg(1),
		"ciphersuites":     sslArg(1),
		"alpn":             {Args: 1, Parse: serverALPN},
		"verifyhost":       sslArg(1),
		"no-verifyhost":    sslArg(0),
		"ssl-reuse":        sslArg(0),
		"no-ssl-reuse":     sslArg(0),
		"check-alpn":       {Args: 1, Parse: func(s *ServerConf, a []string) error { s.CheckALPN = a[0]; return nil }},
		"check-proto":      {Args: 1, Unimplemented: Refused},
		"proto":            {Args: 1, Parse: onlyDefault("h1")},
		"ws":               {Args: 1, Parse: onlyDefault("auto", "h1")},
		"namespace":        {Args: 1, Unimplemented: Refused},
		"redir":            {Args: 1, Unimplemented: Refused},
		"source":           {Args: 1, Unimplemented: Refused},
		"usesrc":           {Args: 1, Unimplemented: Refused},
		"socks4": {Args: 1, Missing: "'socks4' expects <addr>:<port> as argument..", Parse: func(s *ServerConf, a []string) error {
			addr, err := parseSocks4Addr(a[0])
			if err != nil {
				return err
			}
			s.Socks4 = addr
			return nil
		}},
		"check-via-socks4": {Parse: func(s *ServerConf, a []string) error { s.CheckViaSocks4 = true; return nil }},
		// Tuning of the TCP connection: the bytes exchanged are the same.
		"tfo":    {Unimplemented: Warned},
		"tcp-ut": {Args: 1, Unimplemented: Warned},
		// Read only for the servers of a ring section, which goha parses
		// elsewhere.
		"log-proto": {Args: 1, Unimplemented: Warned},
	})
}

// parseSocks4Addr reads the "socks4" address, <ip or name>:<port>, with
// HAProxy's complaints; a name is resolved once, now. It returns the
// address to dial.
func parseSocks4Addr(a string) (string, error) {
	// Some of HAProxy's address errors come indented on lines of their own.
	indented := func(format string, args ...any) error {
		return fmt.Errorf("\n  'socks4 %s' : %s\n  \n.", a, fmt.Sprintf(format, args...))
	}
	s := a
	for _, pfx := range []string{"ipv4@", "ipv6@", "tcp@", "tcp4@", "tcp6@"} {
		s = strings.TrimPrefix(s, pfx)
	}
	if strings.Contains(s, "@") || strings.HasPrefix(s, "/") {
		return "", fmt.Errorf("'socks4 %s' is not supported by goha.", a)
	}
	var host, port string
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return "", indented("invalid address: '%s' in '%s'", s, a)
		}
		host, port = s[1:end], strings.TrimPrefix(s[end+1:], ":")
		if !strings.HasPrefix(s[end+1:], ":") {
			port = ""
		}
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i+1:]
	} else {
		host = s
	}
	if port == "" {
		return "", fmt.Errorf("'socks4 %s' : missing port specification in '%s'.", a, a)
	}
	if strings.Contains(port, "-") {
		return "", fmt.Errorf("'socks4 %s' : port range not permitted here in '%s'.", a, a)
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return "", indented("invalid character '%c' in port number '%s' in '%s'", port[i], port, a)
		}
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("'socks4 %s' : invalid port '%s'.", a, port)
	}
	var ip netip.Addr
	switch {
	case host == "":
		ip = netip.IPv4Unspecified()
	default:
		if ip, err = netip.ParseAddr(host); err != nil {
			var ok bool
			if ip, ok = ResolveHost(host); !ok {
				return "", indented("invalid address: '%s' in '%s'", host, a)
			}
		}
	}
	return net.JoinHostPort(ip.Unmap().String(), port), nil
}

// onlyDefault accepts the values that ask for what goha does anyway
// (HTTP/1 to the server) and refuses the others.
func onlyDefault(ok ...string) func(s *ServerConf, a []string) error {
	return func(s *ServerConf, a []string) error {
		for _, v := range ok {
			if a[0] == v {
				return nil
			}
		}
		return fmt.Errorf("'{kw} %s' is not supported by goha.", a[0])
	}
}

// serverALPN keeps a server's ALPN list without h2: goha speaks HTTP/1 to
// servers, and one that agreed on h2 would answer HTTP/1 requests with
// HTTP/2 frames; without it, the server falls back to HTTP/1.1.
func serverALPN(s *ServerConf, a []string) error {
	var keep []string
	dropped := false
	for _, p := range strings.Split(a[0], ",") {
		if p == "h2" {
			dropped = true
			continue
		}
		keep = append(keep, p)
	}
	if len(keep) > 0 {
		setSSLArg(s, "alpn", strings.Join(keep, ","))
	} else {
		delete(s.SSLArgs, "alpn")
	}
	if dropped {
		return diag.Warnf("'alpn' : HTTP/2 is not supported by goha; 'h2' is not offered to the server.")
	}
	return nil
}

// serverSNI checks the server's sni expression, which each connection
// evaluates for the request that opens it (core/stream).
func serverSNI(s *ServerConf, a []string) error {
	if _, err := sample.CompileExpr(nil, a[0]); err != nil {
		return fmt.Errorf("error detected while parsing sni expression : %s", strings.TrimSuffix(err.Error(), "."))
	}
	if s.SSLArgs == nil {
		s.SSLArgs = map[string]string{}
	}
	s.SSLArgs["sni"] = a[0]
	return nil
}

func sslArg(n int) serverKeyword {
	return serverKeyword{Args: n}
}

func srvInt(f func(s *ServerConf) *int) func(s *ServerConf, a []string) error {
	return func(s *ServerConf, a []string) error {
		v, err := strconv.Atoi(a[0])
		if err != nil {
			return fmt.Errorf("'{kw}' expects an integer argument but got '%s'", a[0])
		}
		*f(s) = v
		return nil
	}
}

func srvPos(f func(s *ServerConf) *int) func(s *ServerConf, a []string) error {
	return func(s *ServerConf, a []string) error {
		v, err := strconv.Atoi(a[0])
		if err != nil || v <= 0 {
			return fmt.Errorf("'{kw}' has to be > 0.")
		}
		*f(s) = v
		return nil
	}
}

func srvPort(f func(s *ServerConf) *int) func(s *ServerConf, a []string) error {
	return func(s *ServerConf, a []string) error {
		v, err := strconv.Atoi(a[0])
		if err != nil || v < 1 || v > 65535 {
			return fmt.Errorf("'{kw}' expects a valid port number but got '%s'", a[0])
		}
		*f(s) = v
		return nil
	}
}

func srvTime(f func(s *ServerConf) *time.Duration) func(s *ServerConf, a []string) error {
	return func(s *ServerConf, a []string) error {
		d, err := config.ParseTime(a[0], time.Millisecond)
		if err != nil {
			return fmt.Errorf("'{kw}' : %v", err)
		}
		*f(s) = d
		return nil
	}
}

// applyServerArgs applies keyword/value pairs to sc. Every problem is
// returned (one pass); warnings come back as *diag.Warn values.
func applyServerArgs(sc *ServerConf, name string, args []string, isDefault bool, id *int) []error {
	var errs []error
	for i := 0; i < len(args); {
		kw := args[i]
		k, ok := serverKeywords[kw]
		if !ok {
			msg := fmt.Sprintf("unknown keyword '%s'", kw)
			if best := SuggestFunc(kw, serverKeywordNames()); best != "" {
				msg += fmt.Sprintf("; did you mean '%s' maybe ?", best)
			} else {
				msg += "."
			}
			return append(errs, fmt.Errorf("%s", msg))
		}
		if i+1+k.Args > len(args) {
			if k.Missing != "" {
				return append(errs, fmt.Errorf("%s", k.Missing))
			}
			return append(errs, fmt.Errorf("'%s' expects %d argument(s).", kw, k.Args))
		}
		vals := args[i+1 : i+1+k.Args]
		i += 1 + k.Args
		switch {
		case k.Unimplemented != Implemented:
			errs = append(errs, k.Unimplemented.err(kw))
		case isDefault && k.NoDefault:
			errs = append(errs, fmt.Errorf("'%s' option is not accepted in default-server sections.", kw))
		case kw == "id":
			v, err := strconv.Atoi(vals[0])
			if err != nil || v <= 0 {
				errs = append(errs, fmt.Errorf("custom id has to be > 0"))
			} else if id != nil {
				*id = v
			}
		case k.Parse == nil:
			if sc.SSLArgs == nil {
				sc.SSLArgs = map[string]string{}
			}
			sc.SSLArgs[kw] = strings.Join(vals, " ")
		default:
			if err := k.Parse(sc, vals); err != nil {
				if w, ok := err.(*diag.Warn); ok {
					errs = append(errs, w)
					continue
				}
				msg := strings.ReplaceAll(err.Error(), "{kw}", kw)
				msg = strings.ReplaceAll(msg, "{srv}", name)
				errs = append(errs, fmt.Errorf("%s", msg))
			}
		}
	}
	return errs
}

func serverKeywordNames() []string {
	out := make([]string, 0, len(serverKeywords))
	for k := range serverKeywords {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func parseDefaultServer(c *kwCtx, args []string) error {
	for _, err := range applyServerArgs(&c.p.DefaultServer, "", args, true, nil) {
		c.b.report(c.pos, err)
	}
	return nil
}

func parseServerLine(c *kwCtx, args []string) error {
	p := c.p
	if len(args) < 2 {
		c.b.d.Add(diag.Diag{Sev: diag.Alert, Pos: c.pos, Msg: "'server' expects <name> and <addr>[:<port>] as arguments."})
		return nil
	}
	if ch := invalidChar(args[0]); ch != "" {
		c.b.d.Add(diag.Diag{Sev: diag.Alert, Pos: c.pos, Msg: fmt.Sprintf("character '%s' is not permitted in server name '%s'.", ch, args[0])})
		return nil
	}
	// Addresses expand environment variables even unquoted, as HAProxy's
	// address parser does.
	addr := config.ExpandEnv(args[1], c.env)
	if addr == "" {
		// HAProxy's message ends in a newline of its own, hence the blank line.
		c.b.d.Add(diag.Diag{Sev: diag.Alert, Pos: c.pos, Msg: fmt.Sprintf("'server %s/%s' : '%s' resolves to an empty address (environment variable missing?)\n", p.Name, args[0], args[1])})
		return nil
	}
	s, errs := newServer(p, args[0], addr, args[2:], addrInit{stateFile: c.g.ServerStateFile != "", dontFail: c.b.dontFail})
	s.Pos = c.pos
	for _, err := range errs {
		// HAProxy reports server keyword problems as "[file:line] : 'server b/s' : msg".
		sev := diag.Alert
		if _, ok := err.(*diag.Warn); ok {
			sev = diag.Warning
		}
		c.b.d.Add(diag.Diag{Sev: sev, Pos: c.pos, Msg: fmt.Sprintf("'server %s/%s' : %s", p.Name, s.Name, err.Error())})
	}
	p.Servers = append(p.Servers, s)
	return nil
}

// NewServer builds a server of proxy p from a server line's words, starting
// from p's default-server settings. The server is not added to p.
func NewServer(p *Proxy, name, addr string, args []string) (*Server, []error) {
	return newServer(p, name, addr, args, addrInit{})
}

// addrInit is what, besides init-addr, decides a server's address at
// start-up: whether a server-state file may still supply the address
// init-addr "last" asks for, and -dr.
type addrInit struct {
	stateFile, dontFail bool
}

// newServer is NewServer at start-up.
func newServer(p *Proxy, name, addr string, args []string, ai addrInit) (*Server, []error) {
	s := &Server{Proxy: p, Name: name}
	s.ServerConf = copyServerConf(p.DefaultServer)
	var errs []error
	id := 0
	errs = append(errs, applyServerArgs(&s.ServerConf, name, args, false, &id)...)
	if s.SSL == -1 && p.DefaultServer.SSL == 1 {
		// HAProxy keeps the inherited ssl settings of a no-ssl server
		s.sslKept = true
	}
	if id > 0 {
		s.ID, s.ForcedID = id, true
	}
	sa, fqdn, unresolved, err := initServerAddr(addr, s.InitAddr, ai)
	if err != nil {
		errs = append(errs, err)
		if sa == nil {
			sa = &ServerAddr{}
		}
	}
	s.FQDN = fqdn
	s.addr.Store(sa)
	s.IWeight = s.Weight
	s.uweight.Store(int32(s.Weight))
	s.maxconn.Store(int64(s.MaxConn))
	s.op.Store(OpRunning)
	if s.Disabled {
		s.admin.Store(AdminCMaint | AdminFMaint)
		s.op.Store(OpStopped)
	}
	if unresolved {
		// init-addr none: the server waits in maintenance for an address,
		// as in HAProxy, instead of refusing the configuration.
		s.admin.Store(s.admin.Load() | AdminRMaint)
		s.op.Store(OpStopped)
	}
	// HAProxy starts a server up with its health at rise (it goes down
	// after fall failures; see core/check), and one waiting in maintenance
	// for an address at 0.
	s.Health.Store(int32(s.Rise))
	if unresolved {
		s.Health.Store(0)
	}
	s.lastChange.Store(time.Now().Unix())
	return s, errs
}

// initServerAddr reads a server address and, when it names a host, tries
// the init-addr methods in order as HAProxy does at start-up: "libc"
// resolves the name, an IP address is used as is, "none" leaves the server
// without an address (unresolved), and "last" defers to the server-state
// file when one is configured (ApplySavedState fills the address in) and
// is skipped otherwise. The default is "last,libc".
func initServerAddr(a, methods string, ai addrInit) (sa *ServerAddr, fqdn string, unresolved bool, err error) {
	if methods == "" {
		methods = "last,libc"
	}
	list := strings.Split(methods, ",")
	for _, m := range list {
		if _, perr := netip.ParseAddr(m); perr != nil && m != "last" && m != "libc" && m != "none" {
			return nil, "", false, fmt.Errorf("'init-addr' : unknown init-addr method '%s', supported methods are 'libc', 'last', 'none'..", m)
		}
	}
	sa, host, err := parseServerAddrLiteral(a)
	if err != nil || host == "" {
		return sa, "", false, err
	}
	libcFailed := false
	for _, m := range list {
		switch m {
		case "last":
			if ai.stateFile {
				return sa, host, true, nil
			}
		case "libc":
			if ip, ok := ResolveHost(host); ok {
				sa.IP = ip
				return sa, host, false, nil
			}
			libcFailed = true
		case "none":
			return sa, host, true, nil
		default:
			sa.IP = netip.MustParseAddr(m).Unmap()
			if libcFailed {
				return sa, host, false, &diag.Warn{Msg: fmt.Sprintf("could not resolve address '%s', falling back to configured address.", host)}
			}
			return sa, host, false, nil
		}
	}
	if libcFailed {
		if ai.dontFail {
			return sa, host, true, &diag.Warn{Msg: fmt.Sprintf("could not resolve address '%s', disabling server.", host)}
		}
		return sa, host, false, fmt.Errorf("could not resolve address '%s'.", host)
	}
	return sa, host, false, fmt.Errorf("no method found to resolve address '%s'.", host)
}

// ResolveHost resolves a name as HAProxy's libc method does: the first
// address the resolver gives, IPv4 as such.
func ResolveHost(host string) (netip.Addr, bool) {
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return netip.Addr{}, false
	}
	ip, _ := netip.AddrFromSlice(ips[0])
	return ip.Unmap(), true
}

// ParseServerAddr reads a server address: ipv4[:port], [ipv6]:port,
// ipv6 without port, hostname[:port], unix@path, or with a `+/-` port
// offset (unsupported). It returns the fqdn when the address is a name.
func ParseServerAddr(a string) (*ServerAddr, string, error) {
	sa, host, err := parseServerAddrLiteral(a)
	if err != nil || host == "" {
		return sa, "", err
	}
	// A name: resolved once, now.
	ip, ok := ResolveHost(host)
	if !ok {
		return nil, host, fmt.Errorf("could not resolve address '%s'.", host)
	}
	sa.IP = ip
	return sa, host, nil
}

// parseServerAddrLiteral is ParseServerAddr without resolving: for a name
// it returns the address without its IP and the name as host.
func parseServerAddrLiteral(a string) (*ServerAddr, string, error) {
	if p, ok := strings.CutPrefix(a, "unix@"); ok {
		return &ServerAddr{Unix: p, Host: a}, "", nil
	}
	if strings.HasPrefix(a, "/") {
		return &ServerAddr{Unix: a, Host: a}, "", nil
	}
	for _, pfx := range []string{"ipv4@", "ipv6@", "tcp@", "tcp4@", "tcp6@"} {
		a = strings.TrimPrefix(a, pfx)
	}
	host, port := a, ""
	if h, p, err := net.SplitHostPort(a); err == nil {
		host, port = h, p
	} else if strings.Count(a, ":") == 1 {
		i := strings.LastIndexByte(a, ':')
		host, port = a[:i], a[i+1:]
	}
	sa := &ServerAddr{Host: host}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 || n > 65535 {
			return nil, "", fmt.Errorf("invalid port '%s'", port)
		}
		sa.Port = n
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		sa.IP = ip
		return sa, "", nil
	}
	if host == "" {
		// ":port", and ":" alone (what two unset variables leave), are any
		// address, as in HAProxy.
		sa.IP = netip.IPv4Unspecified()
		return sa, "", nil
	}
	return sa, host, nil
}

func setSSLArg(s *ServerConf, k, v string) {
	if s.SSLArgs == nil {
		s.SSLArgs = map[string]string{}
	}
	s.SSLArgs[k] = v
}

// The TLVs proxy-v2-options adds to a version 2 PROXY header, as HAProxy
// 2.6 sends them.
const (
	PPv2SSL       = 1 << iota // PP2_TYPE_SSL: TLS or not, version, verify result
	PPv2CertCN                // its CN sub-TLV: the client certificate's common name
	PPv2CertKey               // its KEY_ALG sub-TLV
	PPv2CertSig               // its SIG_ALG sub-TLV
	PPv2SSLCipher             // its CIPHER sub-TLV
	PPv2Authority             // PP2_TYPE_AUTHORITY: the client's SNI
	PPv2CRC32C                // PP2_TYPE_CRC32C: a checksum of the header
	PPv2UniqueID              // PP2_TYPE_UNIQUE_ID: the stream's unique id
)

var ppv2Options = map[string]uint16{
	"ssl": PPv2SSL, "cert-cn": PPv2SSL | PPv2CertCN, "cert-key": PPv2SSL | PPv2CertKey,
	"cert-sig": PPv2SSL | PPv2CertSig, "ssl-cipher": PPv2SSL | PPv2SSLCipher,
	"authority": PPv2Authority, "crc32c": PPv2CRC32C, "unique-id": PPv2UniqueID,
}
