package check

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// ServerOptions accumulates the check keywords of a "server" or
// "default-server" line. Copy a default-server's value to start a server
// from it.
type ServerOptions struct {
	Check      bool // "check" / "no-check"
	AgentCheck bool // "agent-check" / "no-agent-check"
	Health     Settings
	Agent      Settings
	Observe    Observe
	ErrorLimit int
	OnError    OnError

	agentAddrSet, agentPortSet bool
	checkSSL                   int8 // 1 check-ssl, -1 no-check-ssl, 0 unset
}

// ServerKeywords lists the keywords ServerOptions.Parse handles.
var ServerKeywords = []string{
	"addr", "agent-addr", "agent-check", "agent-inter", "agent-port", "agent-send",
	"check", "check-alpn", "check-send-proxy", "check-sni", "check-ssl", "check-via-socks4", "downinter",
	"error-limit", "fall", "fastinter", "inter", "no-agent-check", "no-check",
	"no-check-send-proxy", "no-check-ssl", "observe", "on-error", "port", "rise",
}

// ParseDelay parses an HAProxy time value (default unit ms; us, ms, s, m,
// h, d). It returns the offending character's position on a syntax error.
func ParseDelay(s string) (time.Duration, error) {
	i := 0
	var n uint64
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + uint64(s[i]-'0')
		if n > 1<<40 {
			return 0, errTimerOverflow
		}
		i++
	}
	if i == 0 {
		if s == "" {
			return 0, &delayCharError{0}
		}
		return 0, &delayCharError{0}
	}
	unit := s[i:]
	var d time.Duration
	switch unit {
	case "", "ms":
		d = time.Duration(n) * time.Millisecond
	case "us":
		// Rounded up to the millisecond, as HAProxy does.
		d = time.Duration((n+999)/1000) * time.Millisecond
	case "s":
		d = time.Duration(n) * time.Second
	case "m":
		d = time.Duration(n) * time.Minute
	case "h":
		d = time.Duration(n) * time.Hour
	case "d":
		d = time.Duration(n) * 24 * time.Hour
	default:
		return 0, &delayCharError{i}
	}
	if d > 2147483647*time.Millisecond {
		return 0, errTimerOverflow
	}
	return d, nil
}

type delayCharError struct{ pos int }

func (e *delayCharError) Error() string { return "check: unexpected character in delay" }

var (
	errTimerOverflow  = fmt.Errorf("check: timer overflow")
	errTimerUnderflow = fmt.Errorf("check: timer underflow")
)

func parseServerDelay(kw, v, server string) (time.Duration, error) {
	if v == "" {
		return 0, fmt.Errorf("'%s' expects a delay as argument.", kw)
	}
	d, err := ParseDelay(v)
	switch e := err.(type) {
	case nil:
	case *delayCharError:
		// HAProxy names 'agent-inter' here whatever the keyword.
		return 0, fmt.Errorf("unexpected character '%c' in 'agent-inter' argument of server %s.", v[e.pos], server)
	default:
		if err == errTimerUnderflow {
			return 0, fmt.Errorf("timer underflow in argument <%s> to <%s> of server %s, minimum non-null value is 1 ms.", v, kw, server)
		}
		return 0, fmt.Errorf("timer overflow in argument <%s> to <%s> of server %s, maximum value is 2147483647 ms (~24.8 days).", v, kw, server)
	}
	if d <= 0 {
		return 0, fmt.Errorf("invalid value %d for argument '%s' of server %s.", d/time.Millisecond, kw, server)
	}
	return d, nil
}

// Parse handles the check keyword at words[i] of a server line. It returns
// how many words it consumed (0 when words[i] is not a check keyword) and
// an error in HAProxy's words; the server-line dispatcher appends a period,
// as HAProxy's does ("'server be/s1' : 'rise' has to be > 0.."). httpMode tells whether the backend is in
// HTTP mode ("observe layer7" needs it).
func (o *ServerOptions) Parse(words []string, i int, server string, httpMode bool) (int, error) {
	kw := words[i]
	v := arg(words, i+1)
	switch kw {
	case "check":
		o.Check = true
		return 1, nil
	case "no-check":
		o.Check = false
		return 1, nil
	case "agent-check":
		o.AgentCheck = true
		return 1, nil
	case "no-agent-check":
		o.AgentCheck = false
		return 1, nil
	case "check-ssl":
		o.Health.SSL = true
		o.checkSSL = 1
		return 1, nil
	case "no-check-ssl":
		o.Health.SSL = false
		o.checkSSL = -1
		return 1, nil
	case "check-send-proxy":
		o.Health.SendProxy = true
		return 1, nil
	case "no-check-send-proxy":
		o.Health.SendProxy = false
		return 1, nil
	case "check-via-socks4":
		o.Health.ViaSocks4 = true
		return 1, nil
	case "check-sni":
		if v == "" {
			return 0, fmt.Errorf("'%s' : missing SNI", kw)
		}
		o.Health.SNI = v
		return 2, nil
	case "check-alpn":
		p, err := parseALPN(v)
		if err != nil {
			return 0, fmt.Errorf("'%s' : %s", kw, err)
		}
		o.Health.ALPN = p
		return 2, nil
	case "inter", "fastinter", "downinter", "agent-inter":
		d, err := parseServerDelay(kw, v, server)
		if err != nil {
			return 0, err
		}
		switch kw {
		case "inter":
			o.Health.Inter = d
		case "fastinter":
			o.Health.FastInter = d
		case "downinter":
			o.Health.DownInter = d
		default:
			o.Agent.Inter = d
		}
		return 2, nil
	case "rise", "fall":
		if v == "" {
			return 0, fmt.Errorf("'%s' expects an integer argument.", kw)
		}
		n := int(atolPrefix(v))
		if n <= 0 {
			return 0, fmt.Errorf("'%s' has to be > 0.", kw)
		}
		if kw == "rise" {
			o.Health.Rise = n
		} else {
			o.Health.Fall = n
		}
		return 2, nil
	case "port", "agent-port":
		if v == "" {
			return 0, fmt.Errorf("'%s' expects a port number as argument.", kw)
		}
		p := int(atolPrefix(v))
		if kw == "port" {
			o.Health.Port = p
			if !o.agentPortSet {
				o.Agent.Port = p
			}
		} else {
			o.Agent.Port = p
			o.agentPortSet = true
		}
		return 2, nil
	case "addr":
		if v == "" {
			return 0, fmt.Errorf("'%s' expects <ipv4|ipv6> as argument.", kw)
		}
		host, port := v, 0
		if h, ps, err := net.SplitHostPort(v); err == nil {
			host = h
			port, _ = strconv.Atoi(ps)
		}
		if err := checkAddr(v); err != nil {
			return 0, fmt.Errorf("'%s' : %s", kw, err)
		}
		o.Health.Addr = host
		if port > 0 && o.Health.Port == 0 {
			o.Health.Port = port
		}
		if !o.agentAddrSet {
			o.Agent.Addr = host
		}
		return 2, nil
	case "agent-addr":
		if v == "" {
			return 0, fmt.Errorf("'%s' expects an address as argument.", kw)
		}
		if net.ParseIP(v) == nil && (strings.ContainsAny(v, " /:") || v == "") {
			return 0, fmt.Errorf("parsing agent-addr failed. Check if '%s' is correct address.", v)
		}
		o.Agent.Addr = v
		o.agentAddrSet = true
		return 2, nil
	case "agent-send":
		if v == "" {
			return 0, fmt.Errorf("'%s' expects a string as argument.", kw)
		}
		o.Agent.AgentSend = v
		return 2, nil
	case "observe":
		switch v {
		case "":
			return 0, fmt.Errorf("'%s' expects <mode> as argument.", kw)
		case "none":
			o.Observe = ObserveNone
		case "layer4":
			o.Observe = ObserveLayer4
		case "layer7":
			if !httpMode {
				return 0, fmt.Errorf("'%s' can only be used in http proxies.", v)
			}
			o.Observe = ObserveLayer7
		default:
			return 0, fmt.Errorf("'%s' expects one of 'none', 'layer4', 'layer7' but got '%s'", kw, v)
		}
		return 2, nil
	case "error-limit":
		if v == "" {
			return 0, fmt.Errorf("'%s' expects an integer argument.", kw)
		}
		n := int(atolPrefix(v))
		if n <= 0 {
			return 0, fmt.Errorf("%s has to be > 0.", kw)
		}
		o.ErrorLimit = n
		return 2, nil
	case "on-error":
		switch v {
		case "fastinter":
			o.OnError = OnErrorFastInter
		case "fail-check":
			o.OnError = OnErrorFailCheck
		case "sudden-death":
			o.OnError = OnErrorSuddenDeath
		case "mark-down":
			o.OnError = OnErrorMarkDown
		default:
			return 0, fmt.Errorf("'%s' expects one of 'fastinter', 'fail-check', 'sudden-death' or 'mark-down' but got '%s'", kw, v)
		}
		return 2, nil
	}
	return 0, nil
}

// InheritServerTransport applies HAProxy's rule for checks that target the
// service itself: without "port" and "addr", the health check uses the
// server's ssl setting (unless "no-check-ssl" was given) and its
// send-proxy. serverSSL is the server's "ssl"; call it before Config.
func (o *ServerOptions) InheritServerTransport(serverSSL, serverSendProxy bool) {
	if o.Health.Port != 0 || o.Health.Addr != "" {
		return
	}
	if o.checkSSL == 0 && serverSSL {
		o.Health.SSL = true
	}
	if serverSendProxy {
		o.Health.SendProxy = true
	}
}

// Config builds the ServerConfig of a server from its options, once the
// backend's check rules are final. Use nil rules for the default check.
func (o *ServerOptions) Config(backend, name, addr string, port int, rules *Rules, to Timeouts) ServerConfig {
	cfg := ServerConfig{Backend: backend, Name: name, Addr: addr, Port: port, Timeouts: to,
		Observe: o.Observe, ErrorLimit: o.ErrorLimit, OnError: o.OnError}
	if o.Check {
		h := o.Health
		h.Rules = rules
		cfg.Health = &h
	}
	if o.AgentCheck {
		a := o.Agent
		if a.Inter == 0 {
			a.Inter = o.Health.Inter
		}
		a.Rules = AgentRules(a.AgentSend)
		// HAProxy judges the agent's connect by the health check's
		// check-via-socks4.
		a.Socks4, a.ViaSocks4 = o.Health.Socks4, o.Health.ViaSocks4
		cfg.Agent = &a
	}
	return cfg
}
