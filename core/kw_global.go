package core

import (
	"goha/core/config"
	"goha/core/diag"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"
)

func init() {
	registerKeywords(globalKeywords...)
}

func setInt(dst func(c *kwCtx) *int) func(c *kwCtx, args []string) error {
	return func(c *kwCtx, args []string) error {
		v, err := parseIntArg(c, args)
		if err != nil {
			return err
		}
		*dst(c) = v
		return nil
	}
}

func setFlag(dst func(c *kwCtx) *bool) func(c *kwCtx, args []string) error {
	return func(c *kwCtx, args []string) error {
		*dst(c) = true
		return nil
	}
}

func setString(dst func(c *kwCtx) *string) func(c *kwCtx, args []string) error {
	return func(c *kwCtx, args []string) error {
		if len(args) < 1 {
			return errf("'%s' expects <string> as an argument.", c.kw)
		}
		*dst(c) = args[0]
		return nil
	}
}

func setTime(dst func(c *kwCtx) *time.Duration, unit time.Duration) func(c *kwCtx, args []string) error {
	return func(c *kwCtx, args []string) error {
		if len(args) < 1 {
			return errf("'%s' expects <time> as argument.", c.kw)
		}
		d, err := config.ParseTime(args[0], unit)
		if err != nil {
			return timeErr(c.kw, args[0], err)
		}
		*dst(c) = d
		return nil
	}
}

var globalKeywords = []Keyword{
	{Name: "nbthread", Scope: scopeGlobal, Args: 1, Parse: func(c *kwCtx, args []string) error {
		n, err := parseIntArg(c, args)
		if err != nil || n < 1 || n > 4096 {
			return errf("'%s' expects a strictly positive integer between 1 and 4096 (was '%s').", c.kw, first(args))
		}
		c.g.NbThread = n
		return nil
	}},
	{Name: "maxconn", Scope: scopeGlobal | scopeProxy, Args: 1, Parse: func(c *kwCtx, args []string) error {
		v, err := parseIntArg(c, args)
		if err != nil {
			return err
		}
		if c.p == nil {
			c.g.MaxConn = v
		} else {
			c.p.MaxConn = v
		}
		return nil
	}},
	{Name: "pidfile", Scope: scopeGlobal, Args: 1, Parse: setString(func(c *kwCtx) *string { return &c.g.PidFile })},
	{Name: "daemon", Scope: scopeGlobal, Args: 0, Parse: setFlag(func(c *kwCtx) *bool { return &c.g.Daemon })},
	{Name: "master-worker", Scope: scopeGlobal, Args: 1, Parse: func(c *kwCtx, args []string) error {
		if len(args) > 0 && args[0] != "no-exit-on-failure" {
			return errf("'master-worker' only supports 'no-exit-on-failure' option.")
		}
		c.g.MasterWorker = true
		c.g.NoExitOnFailure = len(args) > 0
		return nil
	}},
	{Name: "quiet", Scope: scopeGlobal, Args: 0, Parse: setFlag(func(c *kwCtx) *bool { return &c.g.Quiet })},
	{Name: "zero-warning", Scope: scopeGlobal, Args: 0, Parse: setFlag(func(c *kwCtx) *bool { return &c.g.ZeroWarning })},
	{Name: "stats socket", Scope: scopeGlobal, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if len(args) < 1 {
			return errf("'stats socket' expects an address as argument.")
		}
		if err := checkStatsSocketArgs(c, args[1:]); err != nil {
			return err
		}
		c.g.StatsSockets = append(c.g.StatsSockets, StatsSocket{Pos: c.pos, Addr: args[0], Args: args[1:]})
		c.g.StatsFrontend = true
		return nil
	}},
	{Name: "stats timeout", Scope: scopeGlobal, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if len(args) < 1 {
			return errf("'stats timeout' expects <time> as argument.")
		}
		d, err := config.ParseTime(args[0], time.Millisecond)
		if err != nil || d == 0 {
			return errf("'stats timeout' expects a positive value.")
		}
		c.g.StatsTimeout = d
		c.g.StatsFrontend = true
		return nil
	}},
	{Name: "stats maxconn", Scope: scopeGlobal, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		v, err := parseIntArg(c, args)
		if err != nil || v <= 0 {
			return errf("'stats maxconn' expects a positive value.")
		}
		c.g.StatsMaxConn = v
		c.g.StatsFrontend = true
		return nil
	}},
	{Name: "log-tag", Scope: scopeGlobal | scopeProxy, Args: 1, TooMany: proxyIgnoresExtra, Parse: func(c *kwCtx, args []string) error {
		if len(args) < 1 {
			return errf("'log-tag' expects a tag for use in syslog.")
		}
		if c.p == nil {
			c.g.LogTag = args[0]
		} else {
			c.p.LogTag = args[0]
		}
		return nil
	}},
	{Name: "log-send-hostname", Scope: scopeGlobal, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if len(args) > 0 {
			c.g.Hostname = args[0]
		}
		return nil
	}},
	{Name: "spread-checks", Scope: scopeGlobal, Args: 1, Parse: func(c *kwCtx, args []string) error {
		v, err := parseIntArg(c, args)
		if err != nil || v < 0 || v > 50 {
			return errf("'spread-checks' needs a positive argument between 0 and 50.")
		}
		c.g.SpreadChecks = v
		return nil
	}},
	{Name: "tune.bufsize", Scope: scopeGlobal, Args: 1, Parse: func(c *kwCtx, args []string) error {
		v, err := parseIntArg(c, args)
		if err != nil || v < 1024 {
			return errf("'tune.bufsize' expects a positive integer argument.")
		}
		c.g.BufSize = v
		return nil
	}},
	{Name: "tune.maxrewrite", Scope: scopeGlobal, Args: 1, Parse: setInt(func(c *kwCtx) *int { return &c.g.MaxRewrite })},
	{Name: "server-state-file", Scope: scopeGlobal | scopeProxy, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if len(args) < 1 {
			return errf("'server-state-file' expects a path.")
		}
		c.g.ServerStateFile = args[0]
		return nil
	}},
	{Name: "server-state-base", Scope: scopeGlobal, Args: ArgsAny, Parse: setString(func(c *kwCtx) *string { return &c.g.ServerStateBase })},
	{Name: "ssl-default-server-options", Scope: scopeGlobal, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if err := checkSSLDefaultOptions(c.kw, args, false); err != nil {
			return err
		}
		c.g.SSLDefaultServerOptions = append(c.g.SSLDefaultServerOptions, args...)
		return nil
	}},
	{Name: "ssl-default-bind-options", Scope: scopeGlobal, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if err := checkSSLDefaultOptions(c.kw, args, true); err != nil {
			return err
		}
		c.g.SSLDefaultBindOptions = append(c.g.SSLDefaultBindOptions, args...)
		return nil
	}},
	{Name: "ssl-default-server-ciphers", Scope: scopeGlobal, Args: 1, Parse: setString(func(c *kwCtx) *string { return &c.g.SSLDefaultServerCiphers })},
	{Name: "ssl-default-server-ciphersuites", Scope: scopeGlobal, Args: 1, Parse: setString(func(c *kwCtx) *string { return &c.g.SSLDefaultServerCiphersuites })},
	{Name: "ssl-default-bind-ciphers", Scope: scopeGlobal, Args: 1, Parse: setString(func(c *kwCtx) *string { return &c.g.SSLDefaultBindCiphers })},
	{Name: "ssl-default-bind-ciphersuites", Scope: scopeGlobal, Args: 1, Unimplemented: Warned},
	{Name: "node", Scope: scopeGlobal, Args: 1, Parse: setString(func(c *kwCtx) *string { return &c.g.Node })},
	{Name: "localpeer", Scope: scopeGlobal, Args: 1, Parse: func(c *kwCtx, args []string) error {
		if len(args) < 1 || args[0] == "" {
			return errf("'%s' expects a name as an argument.", c.kw)
		}
		// -L wins, and so do the peers sections read before, as in
		// HAProxy.
		if !c.b.localPeerSet && !c.b.peersSeen {
			c.b.localPeer = args[0]
		}
		return nil
	}},
	{Name: "unix-bind", Scope: scopeGlobal, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		for i := 0; i < len(args); i += 2 {
			switch args[i] {
			case "prefix", "mode", "uid", "gid", "user", "group":
				continue
			}
			return errf("'unix-bind' only supports the 'prefix', 'mode', 'uid', 'gid', 'user' and 'group' options.")
		}
		c.g.UnixBind = append(c.g.UnixBind, args...)
		return nil
	}},
	{Name: "hard-stop-after", Scope: scopeGlobal, Args: ArgsAny, Parse: setTime(func(c *kwCtx) *time.Duration { return &c.g.HardStopAfter }, time.Millisecond)},
	{Name: "grace", Scope: scopeGlobal | scopeProxy, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if c.p != nil {
			return tightf("the 'grace' keyword is not supported any more since HAProxy version 2.5.")
		}
		return setTime(func(c *kwCtx) *time.Duration { return &c.g.GraceTime }, time.Millisecond)(c, args)
	}},
	// The identity the process takes once it has bound its sockets
	// (cmd/goha drops to it).
	{Name: "chroot", Scope: scopeGlobal, Args: 1, Parse: func(c *kwCtx, args []string) error {
		if len(args) == 0 {
			return errf("'%s' expects a directory as an argument.", c.kw)
		}
		if c.g.Chroot != "" {
			return &continueAlert{msg: "chroot already specified. Continuing."}
		}
		c.g.Chroot = args[0]
		return nil
	}},
	{Name: "user", Scope: scopeGlobal, Args: 1, Parse: identity(false, true)},
	{Name: "uid", Scope: scopeGlobal, Args: 1, Parse: identity(false, false)},
	{Name: "group", Scope: scopeGlobal, Args: 1, Parse: identity(true, true)},
	{Name: "gid", Scope: scopeGlobal, Args: 1, Parse: identity(true, false)},
	{Name: "ulimit-n", Scope: scopeGlobal, Args: 1, Parse: ignoreWithArgs(1)},
	{Name: "ca-base", Scope: scopeGlobal, Args: 1, Parse: baseDir(func(g *Global) *string { return &g.CABase })},
	{Name: "crt-base", Scope: scopeGlobal, Args: 1, Parse: baseDir(func(g *Global) *string { return &g.CrtBase })},
	{Name: "expose-experimental-directives", Scope: scopeGlobal, Args: ArgsAny, Parse: exposeExperimental},
	{Name: "insecure-fork-wanted", Scope: scopeGlobal, Args: 0, Parse: ignoreWithArgs(0)},
	{Name: "cpu-map", Scope: scopeGlobal, Args: ArgsAny, Unimplemented: Warned},
	// core/config applies the environment keywords while it reads, so that
	// later lines expand what they set; nothing in goha reads the process
	// environment after that.
	{Name: "setenv", Scope: scopeGlobal, Args: ArgsAny, Parse: envKeyword},
	{Name: "presetenv", Scope: scopeGlobal, Args: ArgsAny, Parse: envKeyword},
	{Name: "set-var", Scope: scopeGlobal, Args: ArgsAny, Parse: globalSetVar},
	{Name: "set-var-fmt", Scope: scopeGlobal, Args: ArgsAny, Parse: globalSetVar},
	{Name: "unsetenv", Scope: scopeGlobal, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if len(args) == 0 {
			return tightf("'%s' expects at least one variable name.", c.kw)
		}
		return nil
	}},
	{Name: "resetenv", Scope: scopeGlobal, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error { return nil }},
	{Name: "nbproc", Scope: scopeGlobal, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		return errf("nbproc is not supported any more since HAProxy 2.5. Threads will automatically be used on multi-processor machines if available.")
	}},
	{Name: "h1-case-adjust", Scope: scopeGlobal, Args: 2, Unimplemented: Refused},
	{Name: "lua-load", Scope: scopeGlobal, Args: ArgsAny, Unimplemented: Refused},
	// Go's TLS has no finite-field Diffie-Hellman: there is no DH group to
	// choose, and clients negotiate ECDHE as they would with HAProxy.
	{Name: "ssl-dh-param-file", Scope: scopeGlobal, Args: 1, Unimplemented: Warned},
	{Name: "tune.ssl.default-dh-param", Scope: scopeGlobal, Args: 1, Unimplemented: Warned},
	// OpenSSL's buffers and caches: crypto/tls sizes its own.
	{Name: "tune.ssl.capture-buffer-size", Scope: scopeGlobal, Args: 1, Unimplemented: Warned},
	{Name: "tune.ssl.cachesize", Scope: scopeGlobal, Args: 1, Unimplemented: Warned},
	{Name: "tune.ssl.lifetime", Scope: scopeGlobal, Args: 1, Unimplemented: Warned},
	{Name: "tune.ssl.maxrecord", Scope: scopeGlobal, Args: 1, Unimplemented: Warned},
	{Name: "tune.ssl.ssl-ctx-cache-size", Scope: scopeGlobal, Args: 1, Unimplemented: Warned},
	{Name: "ssl-server-verify", Scope: scopeGlobal, Args: 1, Parse: func(c *kwCtx, args []string) error {
		switch first(args) {
		case "required", "none":
			c.g.SSLServerVerify = first(args)
			return nil
		}
		return errf("'%s' expects 'none' or 'required' as argument.", c.kw)
	}},
	{Name: "tune.idle-pool.shared", Scope: scopeGlobal, Args: 1, Parse: func(c *kwCtx, args []string) error {
		switch first(args) {
		case "on":
			c.g.IdlePoolNoShare = false
		case "off":
			c.g.IdlePoolNoShare = true
		default:
			return errf("'%s' expects either 'on' or 'off' but got '%s'.", c.kw, first(args))
		}
		return nil
	}},
	{Name: "tune.pool-low-fd-ratio", Scope: scopeGlobal, Args: 1, Parse: fdRatio(func(g *Global) *int { return &g.PoolLowFDRatio })},
	{Name: "tune.pool-high-fd-ratio", Scope: scopeGlobal, Args: 1, Parse: fdRatio(func(g *Global) *int { return &g.PoolHighFDRatio })},
	{Name: "description", Scope: scopeGlobal | scopeProxy, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		d := strings.Join(args, " ")
		if c.p == nil {
			c.g.Description = d
		} else {
			c.p.Description = d
		}
		return nil
	}},
}

// proxyIgnoresExtra accepts extra words in proxies, where HAProxy reads the
// first word and ignores the rest, and refuses them in the global section.
func proxyIgnoresExtra(c *kwCtx, args []string) error {
	if c.p != nil {
		return nil
	}
	return errf("'%s' cannot handle unexpected argument '%s'.", c.kw, args[1])
}

func envKeyword(c *kwCtx, args []string) error {
	if len(args) < 2 {
		return tightf("'%s' expects a name and a value.", c.kw)
	}
	return nil
}

func ignoreWithArgs(n int) func(c *kwCtx, args []string) error {
	return func(c *kwCtx, args []string) error {
		if len(args) < n {
			return errf("'%s' expects %d argument(s).", c.kw, n)
		}
		return nil
	}
}

func first(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

func fdRatio(f func(g *Global) *int) func(c *kwCtx, args []string) error {
	return func(c *kwCtx, args []string) error {
		v, err := strconv.Atoi(first(args))
		if err != nil || v < 0 || v > 100 {
			return errf("'%s' expects an integer argument between 0 and 100.", c.kw)
		}
		*f(c.g) = v
		return nil
	}
}

// checkSSLDefaultOptions refuses words that ssl-default-server-options and
// ssl-default-bind-options do not know, in HAProxy's words: both read the
// whole line, so a typo would otherwise be kept and never applied.
func checkSSLDefaultOptions(kw string, args []string, bind bool) error {
	if len(args) == 0 {
		return errf("global statement '%s' expects an option as an argument.", kw)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "no-tls-tickets", a == "prefer-client-ciphers" && bind:
		case a == "ssl-min-ver", a == "ssl-max-ver":
			if i+1 >= len(args) {
				return errf("'%s' : missing the ssl/tls version on global statement '%s'.", a, kw)
			}
			switch args[i+1] {
			case "SSLv3", "TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3":
			default:
				return errf("'%s' : unknown ssl/tls version on global statement '%s'.", args[i+1], kw)
			}
			i++
		case tlsMethodOption(a):
		default:
			return errf("unknown option '%s' on global statement '%s'.", a, kw)
		}
	}
	return nil
}

// tlsMethodOption says whether a is no-<version> or force-<version>.
func tlsMethodOption(a string) bool {
	v, ok := strings.CutPrefix(a, "no-")
	if !ok {
		v, ok = strings.CutPrefix(a, "force-")
	}
	switch v {
	case "sslv3", "tlsv10", "tlsv11", "tlsv12", "tlsv13":
		return ok
	}
	return false
}

// checkStatsSocketArgs refuses what a stats socket's bind parameters do not
// know, at parse time as HAProxy does: the socket is opened only at start,
// too late for goha -c.
func checkStatsSocketArgs(c *kwCtx, args []string) error {
	for i := 0; i < len(args); i++ {
		kw := args[i]
		n, ok := bindParamArgs[kw]
		if !ok {
			if bindFlags[kw] {
				continue
			}
			return errf("'stats socket' : unknown keyword '%s'.", kw)
		}
		if i+n >= len(args) {
			if kw == "level" {
				return errf("'stats socket' : ''level' : missing level'")
			}
			return errf("'stats socket' : ''%s' : missing value'", kw)
		}
		v := args[i+1]
		var allowed []string
		switch kw {
		case "level":
			allowed = []string{"user", "operator", "admin"}
		case "severity-output":
			allowed = []string{"none", "number", "string"}
		case "expose-fd":
			allowed = []string{"listeners"}
		}
		if allowed != nil && !slices.Contains(allowed, v) {
			return errf("'stats socket' : ''%s' only supports %s (got '%s')'", kw, quoteList(allowed), v)
		}
		if kw == "process" {
			c.b.d.Warnf(c.pos, "'stats socket' : %s", processDeprecated(v))
		}
		i += n
	}
	return nil
}

// quoteList words a list as HAProxy's messages do: 'a', 'b', and 'c'.
func quoteList(w []string) string {
	if len(w) == 1 {
		return "'" + w[0] + "'"
	}
	q := make([]string, len(w))
	for i, x := range w {
		q[i] = "'" + x + "'"
	}
	return strings.Join(q[:len(q)-1], ", ") + ", and " + q[len(q)-1]
}

// identity parses user, uid, group and gid as HAProxy does: a second one of
// a kind is an alert that changes nothing, an unknown name is fatal, a
// number that is not one only a warning (the id stays unset).
func identity(group, byName bool) func(c *kwCtx, args []string) error {
	return func(c *kwCtx, args []string) error {
		id, kind, alt := &c.g.UID, "user/uid", "user"
		if group {
			id, kind, alt = &c.g.GID, "group/gid", "group"
		}
		if *id != 0 {
			return &continueAlert{msg: kind + " already specified. Continuing."}
		}
		v := ""
		if len(args) > 0 {
			v = args[0]
		}
		if !byName {
			n, err := strconv.Atoi(v)
			if err != nil {
				return diag.Warnf(" %s: string '%s' is not a number.\n   | You might want to use the '%s' parameter to use a system %s name.", c.kw, v, alt, alt)
			}
			*id = n
			return nil
		}
		var err error
		if group {
			var g *user.Group
			if g, err = user.LookupGroup(v); err == nil {
				*id, err = strconv.Atoi(g.Gid)
			}
		} else {
			var u *user.User
			if u, err = user.Lookup(v); err == nil {
				*id, err = strconv.Atoi(u.Uid)
			}
		}
		if err != nil {
			// HAProxy appends errno, which getpwnam leaves at 0 for a
			// name that is not there.
			return errf("cannot find %s id for '%s' (0:Success)", map[bool]string{false: "user", true: "group"}[group], v)
		}
		return nil
	}
}

// baseDir parses crt-base and ca-base: the directory relative certificate
// and CA paths are read from.
func baseDir(dst func(g *Global) *string) func(c *kwCtx, args []string) error {
	return func(c *kwCtx, args []string) error {
		if len(args) == 0 {
			return errf("'%s' expects a directory path as an argument.", c.kw)
		}
		if d := dst(c.g); *d != "" {
			return errf("'%s' already specified.", c.kw)
		}
		*dst(c.g) = args[0]
		return nil
	}
}
