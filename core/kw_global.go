package core

import (
	"strconv"
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
		d, err := ParseTime(args[0], unit)
		if err != nil {
			return timeErr(c.kw, args[0], err)
		}
		*dst(c) = d
		return nil
	}
}

var globalKeywords = []Keyword{
	{Name: "nbthread", Scope: scopeGlobal, Parse: func(c *kwCtx, args []string) error {
		n, err := parseIntArg(c, args)
		if err != nil || n < 1 || n > 4096 {
			return errf("'%s' expects a strictly positive integer between 1 and 4096 (was '%s').", c.kw, first(args))
		}
		c.g.NbThread = n
		return nil
	}},
	{Name: "maxconn", Scope: scopeGlobal | scopeProxy, Parse: func(c *kwCtx, args []string) error {
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
	{Name: "pidfile", Scope: scopeGlobal, Parse: setString(func(c *kwCtx) *string { return &c.g.PidFile })},
	{Name: "daemon", Scope: scopeGlobal, Parse: setFlag(func(c *kwCtx) *bool { return &c.g.Daemon })},
	{Name: "master-worker", Scope: scopeGlobal, Parse: setFlag(func(c *kwCtx) *bool { return &c.g.MasterWorker })},
	{Name: "quiet", Scope: scopeGlobal, Parse: setFlag(func(c *kwCtx) *bool { return &c.g.Quiet })},
	{Name: "zero-warning", Scope: scopeGlobal, Parse: setFlag(func(c *kwCtx) *bool { return &c.g.ZeroWarning })},
	{Name: "stats socket", Scope: scopeGlobal, Parse: func(c *kwCtx, args []string) error {
		if len(args) < 1 {
			return errf("'stats socket' expects an address as argument.")
		}
		c.g.StatsSockets = append(c.g.StatsSockets, StatsSocket{Pos: c.pos, Addr: args[0], Args: args[1:]})
		return nil
	}},
	{Name: "stats timeout", Scope: scopeGlobal, Parse: func(c *kwCtx, args []string) error {
		if len(args) < 1 {
			return errf("'stats timeout' expects <time> as argument.")
		}
		d, err := ParseTime(args[0], time.Millisecond)
		if err != nil || d == 0 {
			return errf("'stats timeout' expects a positive value.")
		}
		c.g.StatsTimeout = d
		return nil
	}},
	{Name: "stats maxconn", Scope: scopeGlobal, Parse: func(c *kwCtx, args []string) error {
		v, err := parseIntArg(c, args)
		if err != nil || v <= 0 {
			return errf("'stats maxconn' expects a positive value.")
		}
		c.g.StatsMaxConn = v
		return nil
	}},
	{Name: "log-tag", Scope: scopeGlobal | scopeProxy, Parse: func(c *kwCtx, args []string) error {
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
	{Name: "log-send-hostname", Scope: scopeGlobal, Parse: func(c *kwCtx, args []string) error {
		if len(args) > 0 {
			c.g.Hostname = args[0]
		}
		return nil
	}},
	{Name: "spread-checks", Scope: scopeGlobal, Parse: func(c *kwCtx, args []string) error {
		v, err := parseIntArg(c, args)
		if err != nil || v < 0 || v > 50 {
			return errf("'spread-checks' needs a positive argument between 0 and 50.")
		}
		c.g.SpreadChecks = v
		return nil
	}},
	{Name: "tune.bufsize", Scope: scopeGlobal, Parse: func(c *kwCtx, args []string) error {
		v, err := parseIntArg(c, args)
		if err != nil || v < 1024 {
			return errf("'tune.bufsize' expects a positive integer argument.")
		}
		c.g.BufSize = v
		return nil
	}},
	{Name: "tune.maxrewrite", Scope: scopeGlobal, Parse: setInt(func(c *kwCtx) *int { return &c.g.MaxRewrite })},
	{Name: "server-state-file", Scope: scopeGlobal | scopeProxy, Parse: func(c *kwCtx, args []string) error {
		if len(args) < 1 {
			return errf("'server-state-file' expects a path.")
		}
		c.g.ServerStateFile = args[0]
		return nil
	}},
	{Name: "server-state-base", Scope: scopeGlobal, Parse: setString(func(c *kwCtx) *string { return &c.g.ServerStateBase })},
	{Name: "ssl-default-server-options", Scope: scopeGlobal, Parse: func(c *kwCtx, args []string) error {
		c.g.SSLDefaultServerOptions = append(c.g.SSLDefaultServerOptions, args...)
		return nil
	}},
	{Name: "ssl-default-bind-options", Scope: scopeGlobal, Parse: func(c *kwCtx, args []string) error {
		c.g.SSLDefaultBindOptions = append(c.g.SSLDefaultBindOptions, args...)
		return nil
	}},
	{Name: "ssl-default-server-ciphers", Scope: scopeGlobal, Parse: setString(func(c *kwCtx) *string { return &c.g.SSLDefaultServerCiphers })},
	{Name: "ssl-default-server-ciphersuites", Scope: scopeGlobal, Parse: setString(func(c *kwCtx) *string { return &c.g.SSLDefaultServerCiphersuites })},
	{Name: "ssl-default-bind-ciphers", Scope: scopeGlobal, Parse: setString(func(c *kwCtx) *string { return &c.g.SSLDefaultBindCiphers })},
	{Name: "ssl-default-bind-ciphersuites", Scope: scopeGlobal, Unimplemented: true},
	{Name: "node", Scope: scopeGlobal, Parse: setString(func(c *kwCtx) *string { return &c.g.Node })},
	{Name: "unix-bind", Scope: scopeGlobal, Parse: func(c *kwCtx, args []string) error {
		c.g.UnixBind = append(c.g.UnixBind, args...)
		return nil
	}},
	{Name: "hard-stop-after", Scope: scopeGlobal, Parse: setTime(func(c *kwCtx) *time.Duration { return &c.g.HardStopAfter }, time.Millisecond)},
	{Name: "grace", Scope: scopeGlobal | scopeProxy, Parse: setTime(func(c *kwCtx) *time.Duration { return &c.g.GraceTime }, time.Millisecond)},
	// Accepted for compatibility: they have no effect on a Go process.
	{Name: "chroot", Scope: scopeGlobal, Parse: ignoreWithArgs(1)},
	{Name: "user", Scope: scopeGlobal, Parse: ignoreWithArgs(1)},
	{Name: "group", Scope: scopeGlobal, Parse: ignoreWithArgs(1)},
	{Name: "uid", Scope: scopeGlobal, Parse: ignoreWithArgs(1)},
	{Name: "gid", Scope: scopeGlobal, Parse: ignoreWithArgs(1)},
	{Name: "ulimit-n", Scope: scopeGlobal, Parse: ignoreWithArgs(1)},
	{Name: "ca-base", Scope: scopeGlobal, Parse: ignoreWithArgs(1)},
	{Name: "crt-base", Scope: scopeGlobal, Parse: ignoreWithArgs(1)},
	{Name: "expose-experimental-directives", Scope: scopeGlobal, Parse: ignoreWithArgs(0)},
	{Name: "insecure-fork-wanted", Scope: scopeGlobal, Parse: ignoreWithArgs(0)},
	{Name: "cpu-map", Scope: scopeGlobal, Unimplemented: true},
	{Name: "setenv", Scope: scopeGlobal, Unimplemented: true},
	{Name: "presetenv", Scope: scopeGlobal, Unimplemented: true},
	{Name: "nbproc", Scope: scopeGlobal, Unimplemented: true},
	{Name: "h1-case-adjust", Scope: scopeGlobal, Unimplemented: true},
	{Name: "lua-load", Scope: scopeGlobal, Unimplemented: true},
	{Name: "ssl-dh-param-file", Scope: scopeGlobal, Unimplemented: true},
	{Name: "ssl-server-verify", Scope: scopeGlobal, Unimplemented: true},
	{Name: "tune.ssl.default-dh-param", Scope: scopeGlobal, Unimplemented: true},
	{Name: "tune.idle-pool.shared", Scope: scopeGlobal, Parse: func(c *kwCtx, args []string) error {
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
	{Name: "tune.pool-low-fd-ratio", Scope: scopeGlobal, Parse: fdRatio(func(g *Global) *int { return &g.PoolLowFDRatio })},
	{Name: "tune.pool-high-fd-ratio", Scope: scopeGlobal, Parse: fdRatio(func(g *Global) *int { return &g.PoolHighFDRatio })},
	{Name: "description", Scope: scopeGlobal | scopeProxy, Parse: func(c *kwCtx, args []string) error {
		d := joinWords(args)
		if c.p == nil {
			c.g.Description = d
		} else {
			c.p.Description = d
		}
		return nil
	}},
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

func joinWords(w []string) string {
	s := ""
	for i, x := range w {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s
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
