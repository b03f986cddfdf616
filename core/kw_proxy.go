package core

import (
	"goha/core/config"
	"goha/core/diag"
	"goha/core/lb"
	"goha/core/sample"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

func init() {
	registerKeywords(proxyKeywords...)
	for _, name := range []string{"connect", "client", "server", "http-request", "http-keep-alive",
		"queue", "tunnel", "client-fin", "server-fin", "check", "tarpit"} {
		registerKeywords(Keyword{Name: "timeout " + name, Scope: timeoutScope(name), Args: 1, TooMany: timeoutExtra, Parse: parseTimeout})
	}
}

func timeoutScope(name string) int {
	switch name {
	case "client", "client-fin", "http-request", "http-keep-alive":
		return scopeDefaults | scopeFE
	case "connect", "server", "server-fin", "queue", "check", "tunnel":
		return scopeDefaults | scopeBE
	}
	return scopeProxy
}

func timeoutExtra(c *kwCtx, args []string) error {
	return errf("'%s' : unexpected extra argument '%s' after value '%s'.", c.kw, args[1], args[0])
}

func parseTimeout(c *kwCtx, args []string) error {
	name := strings.TrimPrefix(c.kw, "timeout ")
	if len(args) < 1 {
		return errf("'timeout %s' expects an integer value (in milliseconds)", name)
	}
	d, err := config.ParseTime(args[0], time.Millisecond)
	if err != nil {
		return timeErr(c.kw, args[0], err)
	}
	t := &c.p.Timeouts
	switch name {
	case "connect":
		t.Connect = d
	case "client":
		t.Client = d
	case "server":
		t.Server = d
	case "http-request":
		t.HTTPRequest = d
	case "http-keep-alive":
		t.HTTPKeepAlive = d
	case "queue":
		t.Queue = d
	case "tunnel":
		t.Tunnel = d
	case "client-fin":
		t.ClientFin = d
	case "server-fin":
		t.ServerFin = d
	case "check":
		t.Check = d
	case "tarpit":
		t.Tarpit = d
	}
	return nil
}

// option parses `[no] option <name>` for a boolean field.
func option(name string, scope int, field func(p *Proxy) *bool) Keyword {
	return Keyword{Name: "option " + name, Scope: scope, Args: 0, Parse: func(c *kwCtx, args []string) error {
		*field(c.p) = !c.neg
		return nil
	}}
}

func unimplementedOption(name string, gap Gap) Keyword {
	return Keyword{Name: "option " + name, Scope: scopeProxy, Args: 0, Unimplemented: gap}
}

var proxyKeywords = []Keyword{
	{Name: "mode", Scope: scopeProxy, Args: 1, Parse: func(c *kwCtx, args []string) error {
		switch first(args) {
		case "http":
			c.p.Mode = ModeHTTP
		case "tcp":
			c.p.Mode = ModeTCP
		case "health":
			return errf("'mode health' doesn't exist anymore. Please use 'http-request return status 200' instead.")
		default:
			return errf("unknown proxy mode '%s'.", first(args))
		}
		return nil
	}},
	{Name: "id", Scope: scopeFE | scopeBE, Args: 1, Parse: func(c *kwCtx, args []string) error {
		if len(args) < 1 {
			return errf("'id' : expects an integer argument")
		}
		v, err := strconv.Atoi(args[0])
		if err != nil || v <= 0 {
			return errf("'id' : custom id has to be > 0")
		}
		c.p.ID, c.p.ForcedID = v, true
		for _, o := range c.b.cfg.Proxies {
			if o != c.p && o.ForcedID && o.ID == v {
				return tightf("%s %s reuses same custom id as %s %s (declared at %s).", capName(c.p.Cap), c.p.Name, capName(o.Cap), o.Name, o.Pos)
			}
		}
		return nil
	}},
	{Name: "disabled", Scope: scopeProxy, Args: 0, Parse: func(c *kwCtx, args []string) error { c.p.Disabled = true; return nil }},
	{Name: "enabled", Scope: scopeProxy, Args: 0, Parse: func(c *kwCtx, args []string) error { c.p.Disabled = false; return nil }},
	{Name: "backlog", Scope: scopeDefaults | scopeFE, Args: 1, Parse: setInt(func(c *kwCtx) *int { return &c.p.Backlog })},
	{Name: "fullconn", Scope: scopeDefaults | scopeBE, Args: 1, Parse: setInt(func(c *kwCtx) *int { return &c.p.FullConn })},
	{Name: "retries", Scope: scopeDefaults | scopeBE, Args: 1, Parse: setInt(func(c *kwCtx) *int { return &c.p.Retries })},
	{Name: "default_backend", Scope: scopeDefaults | scopeFE, Args: 1, Parse: func(c *kwCtx, args []string) error {
		if len(args) < 1 {
			return errf("'%s' expects a backend name.", c.kw)
		}
		c.p.DefaultBackend = args[0]
		return nil
	}},
	{Name: "use_backend", Scope: scopeFE, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if len(args) < 1 {
			return errf("'%s' expects a backend name.", c.kw)
		}
		ub := &UseBackend{Pos: c.pos, Name: args[0], Dynamic: dynamicName(args[0])}
		if len(args) > 1 {
			if args[1] != "if" && args[1] != "unless" {
				return errf("unexpected keyword '%s' after switching rule, only 'if' and 'unless' are allowed.", args[1])
			}
			ub.Cond = args[1:]
			if _, err := sample.CompileCond(nil, ub.Cond, c.p.aclsSoFar); err != nil {
				return errf("error detected while parsing switching rule : %v.", err)
			}
		}
		c.p.UseBackends = append(c.p.UseBackends, ub)
		return nil
	}},
	{Name: "acl", Scope: scopeFE | scopeBE, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if len(args) < 2 {
			return errf("'acl' requires a name and a criterion.")
		}
		if ch := invalidChar(args[0]); ch != "" {
			return errf("character '%s' is not permitted in acl name '%s'.", ch, args[0])
		}
		// Checked here too, so that a bad ACL is reported with the
		// section's other problems: rules are compiled only when there
		// are none.
		t, err := sample.CompileACL(nil, args[1:])
		if err != nil {
			return errf("error detected while parsing ACL '%s' : %v", args[0], err)
		}
		if c.p.aclsSoFar == nil {
			c.p.aclsSoFar = map[string][]*sample.Term{}
		}
		c.p.aclsSoFar[args[0]] = append(c.p.aclsSoFar[args[0]], t)
		c.p.ACLs = append(c.p.ACLs, &ACLDef{Pos: c.pos, Name: args[0], Words: args[1:]})
		return nil
	}},
	{Name: "http-request", Scope: scopeDefaults | scopeFE | scopeBE, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if err := addRule(c, &c.p.HTTPReqRules, args); err != nil || len(c.p.Redirects) == 0 {
			return err
		}
		return diag.Warnf("a 'http-request' rule placed after a 'redirect' rule will still be processed before.")
	}},
	{Name: "http-response", Scope: scopeDefaults | scopeFE | scopeBE, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		return addRule(c, &c.p.HTTPRespRules, args)
	}},
	{Name: "tcp-request", Scope: scopeDefaults | scopeFE | scopeBE, Args: ArgsAny, Parse: parseTCPRequest},
	{Name: "tcp-response", Scope: scopeDefaults | scopeFE | scopeBE, Args: ArgsAny, Parse: parseTCPResponse},
	{Name: "server", Scope: scopeBE, Args: ArgsAny, Parse: parseServerLine},
	{Name: "default-server", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: parseDefaultServer},
	{Name: "balance", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if _, err := lb.ParseBalance(args); err != nil {
			return errf("balance %v", err)
		}
		c.p.Balance = append([]string(nil), args...)
		c.p.BalanceSet = true
		return nil
	}},
	{Name: "hash-type", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if _, err := lb.ParseHashType(args, ExtraHashes); err != nil {
			return err
		}
		c.p.HashType = append([]string(nil), args...)
		return nil
	}},
	{Name: "cookie", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: parseCookie},
	{Name: "http-reuse", Scope: scopeDefaults | scopeBE, Args: 1, TooMany: func(c *kwCtx, args []string) error {
		return errf("'http-reuse %s' cannot handle unexpected argument '%s'.", args[0], args[1])
	}, Parse: func(c *kwCtx, args []string) error {
		switch first(args) {
		case "never", "safe", "aggressive", "always":
			c.p.HTTPReuse = args[0]
			return nil
		}
		return errf("'http-reuse' only supports 'never', 'safe', 'aggressive', 'always'")
	}},
	{Name: "log", Scope: scopeGlobal | scopeProxy, Args: ArgsAny, Parse: parseLogLine},
	{Name: "log-format", Scope: scopeProxy, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		if len(args) < 1 {
			return errf("'log-format' expects a format string.")
		}
		if len(args) > 1 {
			return errf("log-format expects only one argument, don't forget to escape spaces!")
		}
		c.p.LogFormat = args[0]
		c.p.LogFmt = &LogFormatDef{Pos: c.pos, Kind: "log-format", Src: args[0]}
		return nil
	}},
	{Name: "errorfile", Scope: scopeProxy, Args: ArgsAny, Parse: addErrorFile},
	{Name: "load-server-state-from-file", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		switch first(args) {
		case "global", "local", "none":
			c.g.LoadStateFrom = args[0]
			return nil
		}
		return errf("'load-server-state-from-file' expects 'global', 'local' or 'none'. Got '%s'", first(args))
	}},
	// HAProxy reads an optional interval after redispatch and ignores
	// what follows.
	withArgs(option("redispatch", scopeDefaults|scopeBE, func(p *Proxy) *bool { return &p.Redispatch }), ArgsAny),
	option("allbackups", scopeDefaults|scopeBE, func(p *Proxy) *bool { return &p.AllBackups }),
	option("persist", scopeDefaults|scopeBE, func(p *Proxy) *bool { return &p.Persist }),
	option("dontlognull", scopeDefaults|scopeFE, func(p *Proxy) *bool { return &p.DontLogNull }),
	option("log-separate-errors", scopeDefaults|scopeFE, func(p *Proxy) *bool { return &p.LogSeparateErr }),
	option("socket-stats", scopeDefaults|scopeFE, func(p *Proxy) *bool { return &p.SocketStats }),
	{Name: "option tcplog", Scope: scopeProxy, Args: 0, Parse: func(c *kwCtx, args []string) error {
		c.p.TCPLog, c.p.HTTPLog = !c.neg, false
		if !c.neg {
			c.p.LogFmt = &LogFormatDef{Pos: c.pos, Kind: "option tcplog", Src: c.p.LogFormat}
		}
		return nil
	}},
	{Name: "option httplog", Scope: scopeProxy, Args: 1, Parse: func(c *kwCtx, args []string) error {
		c.p.HTTPLog, c.p.TCPLog = !c.neg, false
		if len(args) > 0 && args[0] != "clf" {
			return errf("keyword 'httplog' only supports option 'clf'.")
		}
		c.p.HTTPLogCLF = len(args) > 0
		if !c.neg {
			kind := "option httplog"
			if c.p.HTTPLogCLF {
				kind = "option httplog clf"
			}
			c.p.LogFmt = &LogFormatDef{Pos: c.pos, Kind: kind, Src: c.p.LogFormat}
		}
		return nil
	}},
	{Name: "option httpslog", Scope: scopeProxy, Args: 0, Parse: func(c *kwCtx, args []string) error {
		c.p.HTTPLog, c.p.TCPLog, c.p.HTTPLogCLF = !c.neg, false, false
		if !c.neg {
			c.p.LogFmt = &LogFormatDef{Pos: c.pos, Kind: "option httpslog", Src: c.p.LogFormat}
		}
		return nil
	}},
	{Name: "option forwardfor", Scope: scopeProxy, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		c.p.ForwardFor = !c.neg
		c.p.ForwardForIfNone = false
		return addressHeaderArgs(c, "forwardfor", args, &c.p.ForwardForExcept, &c.p.ForwardForHeader, &c.p.ForwardForIfNone)
	}},
	{Name: "option originalto", Scope: scopeProxy, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		c.p.OriginalTo = !c.neg
		return addressHeaderArgs(c, "originalto", args, &c.p.OriginalToExcept, &c.p.OriginalToHeader, nil)
	}},
	{Name: "option http-keep-alive", Scope: scopeProxy, Args: 0, Parse: func(c *kwCtx, args []string) error {
		if !c.neg {
			c.p.ConnMode = HTTPKeepAlive
		}
		return nil
	}},
	{Name: "option http-server-close", Scope: scopeProxy, Args: 0, Parse: func(c *kwCtx, args []string) error {
		if !c.neg {
			c.p.ConnMode = HTTPServerClose
		} else if c.p.ConnMode == HTTPServerClose {
			c.p.ConnMode = HTTPKeepAlive
		}
		return nil
	}},
	{Name: "option httpclose", Scope: scopeProxy, Args: 0, Parse: func(c *kwCtx, args []string) error {
		if !c.neg {
			c.p.ConnMode = HTTPClose
		} else if c.p.ConnMode == HTTPClose {
			c.p.ConnMode = HTTPKeepAlive
		}
		return nil
	}},
	option("abortonclose", scopeDefaults|scopeBE, func(p *Proxy) *bool { return &p.AbortOnClose }),
	option("http-buffer-request", scopeProxy, func(p *Proxy) *bool { return &p.BufferRequest }),
	option("splice-auto", scopeProxy, func(p *Proxy) *bool { return &p.SpliceAuto }),
	option("splice-request", scopeProxy, func(p *Proxy) *bool { return &p.SpliceRequest }),
	option("splice-response", scopeProxy, func(p *Proxy) *bool { return &p.SpliceResponse }),
	// Go sets TCP keep-alive on every connection; logasap moves a log
	// line, not bytes.
	unimplementedOption("tcpka", Warned),
	unimplementedOption("clitcpka", Warned),
	unimplementedOption("srvtcpka", Warned),
	unimplementedOption("logasap", Warned),
	unimplementedOption("accept-invalid-http-request", Refused),
	unimplementedOption("accept-invalid-http-response", Refused),
	unimplementedOption("checkcache", Refused),
	unimplementedOption("independent-streams", Refused),
	unimplementedOption("nolinger", Refused),
	unimplementedOption("prefer-last-server", Refused),
	unimplementedOption("external-check", Refused),
	{Name: "capture", Scope: scopeDefaults | scopeFE, Args: ArgsAny, Parse: parseCapture},
	{Name: "filter", Scope: scopeFE | scopeBE, Args: ArgsAny, Parse: parseFilter},
	{Name: "stick-table", Scope: scopeFE | scopeBE, Args: ArgsAny, Parse: parseStickTableKw},
	{Name: "stick", Scope: scopeBE, Args: ArgsAny, Parse: parseStickRule},
	{Name: "unique-id-format", Scope: scopeProxy, Args: ArgsAny, Parse: parseUniqueIDFormat},
	{Name: "unique-id-header", Scope: scopeProxy, Args: ArgsAny, Parse: parseUniqueIDHeader},
	{Name: "server-template", Scope: scopeBE, Args: ArgsAny, Unimplemented: Refused},
	{Name: "email-alert", Scope: scopeProxy, Args: ArgsAny, Unimplemented: Refused},
	// Without the server keyword dynamic-cookie, which goha does not know,
	// the key changes nothing.
	{Name: "dynamic-cookie-key", Scope: scopeProxy, Args: ArgsAny, Unimplemented: Warned},
	{Name: "rate-limit", Scope: scopeFE, Args: ArgsAny, Unimplemented: Refused},
	{Name: "persist", Scope: scopeBE, Args: ArgsAny, Unimplemented: Refused},
	{Name: "external-check", Scope: scopeProxy, Args: ArgsAny, Unimplemented: Refused},
	{Name: "http-after-response", Scope: scopeDefaults | scopeFE | scopeBE, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
		return addRule(c, &c.p.HTTPAfterRules, args)
	}},
	{Name: "declare", Scope: scopeProxy, Args: ArgsAny, Parse: parseDeclare},
}

func withArgs(k Keyword, n int) Keyword {
	k.Args = n
	return k
}

// addressHeaderArgs reads the words of option forwardfor and originalto:
// `except <network>`, `header <name>` and, for forwardfor (ifNone not
// nil), `if-none`, in HAProxy's words.
func addressHeaderArgs(c *kwCtx, opt string, args []string, except *netip.Prefix, header *string, ifNone *bool) error {
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "except", "header":
			if i+1 >= len(args) {
				what := "<header_name>"
				if args[i] == "except" {
					what = "<address>[/mask]"
				}
				return errf("'option %s %s' expects %s as argument.", opt, args[i], what)
			}
			if args[i] == "except" {
				pfx, err := sample.ParseNetwork(args[i+1])
				if err != nil {
					return errf("'option %s except' expects <address>[/mask] as argument.", opt)
				}
				*except = pfx
			} else {
				*header = args[i+1]
			}
			i++
		case "if-none":
			if ifNone != nil {
				*ifNone = true
				break
			}
			fallthrough
		default:
			if ifNone == nil {
				return errf("'option %s' only supports optional values: 'except' and 'header'.", opt)
			}
			return errf("'option %s' only supports optional values: 'except', 'header' and 'if-none'.", opt)
		}
	}
	return nil
}
