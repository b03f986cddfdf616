package core

import (
	"fmt"
	"net"
	"os/user"
	"strconv"
	"strings"

	"goha/core/config"
	"goha/core/diag"
	"goha/core/tlsconf"
)

func init() {
	registerKeywords(Keyword{Name: "bind", Scope: scopeFE, Args: ArgsAny, Parse: parseBind})
}

// bind parameters that take a value; the rest are flags.
var bindParamArgs = map[string]int{
	"name": 1, "maxconn": 1, "backlog": 1, "id": 1, "process": 1, "thread": 1,
	"crt": 1, "crt-list": 1, "ca-file": 1, "verify": 1, "alpn": 1, "npn": 1,
	"ssl-min-ver": 1, "ssl-max-ver": 1, "ciphers": 1, "ciphersuites": 1, "curves": 1,
	"ecdhe": 1, "crl-file": 1, "mode": 1, "uid": 1, "gid": 1, "user": 1, "group": 1,
	"level": 1, "severity-output": 1, "interface": 1, "namespace": 1, "mss": 1,
	"tcp-ut": 1, "proto": 1, "nice": 1, "tls-ticket-keys": 1, "expose-fd": 1,
	"ca-sign-file": 1, "ca-sign-pass": 1, "sigalgs": 1, "client-sigalgs": 1,
	"ca-verify-file": 1, "label": 1, "accept-netscaler-cip": 1,
	"ca-ignore-err": 1, "crt-ignore-err": 1,
}

var bindFlags = map[string]bool{
	"ssl": true, "v4v6": true, "v6only": true, "transparent": true, "defer-accept": true,
	"accept-proxy": true, "tfo": true, "strict-sni": true,
	"no-sslv3": true, "no-tlsv10": true, "no-tlsv11": true, "no-tlsv12": true, "no-tlsv13": true,
	"force-sslv3": true, "force-tlsv10": true, "force-tlsv11": true,
	"force-tlsv12": true, "force-tlsv13": true, "prefer-client-ciphers": true, "allow-0rtt": true,
	"no-ca-names": true, "generate-certificates": true, "quic-force-retry": true,
	"no-tls-tickets": true, "ssl-reuse": true,
}

// bindGaps are the bind parameters goha knows but does not implement; the
// others have an effect (core/stream/listen.go, core/tls.go).
var bindGaps = map[string]Gap{
	// What the client is, says, or may negotiate would differ.
	"accept-netscaler-cip": Refused, "transparent": Refused,
	"namespace": Refused, "npn": Refused,
	"generate-certificates": Refused, "tls-ticket-keys": Refused, "ca-sign-file": Refused,
	"ca-sign-pass": Refused, "sigalgs": Refused, "client-sigalgs": Refused,
	"no-ca-names": Refused, "force-sslv3": Refused,
	// Tuning, identifiers, or settings only a CLI socket reads.
	"id": Warned, "thread": Warned, "label": Warned, "nice": Warned, "defer-accept": Warned,
	"tfo": Warned, "mss": Warned, "tcp-ut": Warned, "ssl-reuse": Warned,
	"level": Warned, "severity-output": Warned, "expose-fd": Warned, "quic-force-retry": Warned,
	// Go's server always takes its own cipher order, does no 0-RTT (the
	// client then sends its request after the handshake), and does not let
	// a program choose TLS 1.3 suites.
	"prefer-client-ciphers": Warned, "allow-0rtt": Warned, "ciphersuites": Warned,
}

// bindParam returns the value of the last param kw of a bind line, or "".
func BindParam(b *Bind, kw string) string {
	v := ""
	for i := 0; i+1 < len(b.Args); i++ {
		if n, ok := bindParamArgs[b.Args[i]]; ok {
			if b.Args[i] == kw {
				v = b.Args[i+1]
			}
			i += n
		}
	}
	return v
}

// atoiPrefix reads the leading digits of s as C's atol does: "12x" is 12,
// "x" is 0.
func AtoiPrefix(s string) int {
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// bindFlag says whether a bind line has the flag kw.
func BindFlag(b *Bind, kw string) bool {
	for i := 0; i < len(b.Args); i++ {
		if n, ok := bindParamArgs[b.Args[i]]; ok {
			i += n
			continue
		}
		if b.Args[i] == kw {
			return true
		}
	}
	return false
}

// unknownBindParam returns the first word of a bind line's parameters
// that is no bind keyword, or "".
func unknownBindParam(params []string) string {
	for i := 0; i < len(params); i++ {
		if n, ok := bindParamArgs[params[i]]; ok {
			i += n
			continue
		}
		if !bindFlags[params[i]] {
			return params[i]
		}
	}
	return ""
}

// processDeprecated is HAProxy 2.6's warning for a bind's "process": goha
// has one process and ignores it.
func processDeprecated(v string) string {
	return fmt.Sprintf("'process %s' on 'bind' lines is deprecated and will be removed in 2.7.", v)
}

func parseBind(c *kwCtx, args []string) error {
	if len(args) < 1 {
		return errf("'bind' expects {<path>|[addr1]:port1[-end1]}{,[addr]:port[-end]}... as arguments.")
	}
	b := &Bind{Pos: c.pos, Addr: args[0]}
	// Addresses expand environment variables even unquoted, as HAProxy's
	// address parser does.
	addrs, err := ExpandBindAddr(config.ExpandEnv(args[0], c.env))
	if err != nil {
		return errf("'bind' : %v", err)
	}
	b.Addrs = addrs
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		kw := rest[i]
		if n, ok := bindParamArgs[kw]; ok {
			if i+n >= len(rest) {
				return errf("'bind %s' : missing value for '%s' option.", args[0], kw)
			}
			v := rest[i+1]
			if err := bindGap(c, args[0], kw); err != nil {
				return err
			}
			switch kw {
			case "proto":
				if v != "h1" {
					return errf("'bind %s' : '%s %s' is not supported by goha.", args[0], kw, v)
				}
			case "crt-ignore-err", "ca-ignore-err":
				if _, _, err := tlsconf.ParseIgnoreErr(kw, v); err != nil {
					return errf("'bind %s' in section '%s' : %v", args[0], c.sec.Kind, err)
				}
			case "process":
				c.b.d.Warnf(c.pos, "'bind %s' in section '%s' : %s", args[0], c.sec.Kind, processDeprecated(v))
			case "maxconn":
				m, err := strconv.Atoi(v)
				if err != nil || m < 0 {
					return errf("'bind %s' : '%s' : invalid value %s, must be >= 0.", args[0], kw, v)
				}
				b.MaxConn = m
			case "backlog":
				m, err := strconv.Atoi(v)
				if err != nil || m < 0 {
					return errf("'bind %s' : '%s' : invalid value %s, must be > 0.", args[0], kw, v)
				}
				b.Backlog = m
			case "name":
				b.Name = v
			case "mode":
				if _, err := strconv.ParseUint(v, 8, 32); err != nil {
					return errf("'bind %s' in section '%s' : 'mode' : missing or invalid mode '%s' (octal integer expected)", args[0], c.sec.Kind, v)
				}
			case "user":
				if _, err := user.Lookup(v); err != nil {
					return errf("'bind %s' in section '%s' : 'user' : unknown user name '%s'", args[0], c.sec.Kind, v)
				}
			case "group":
				if _, err := user.LookupGroup(v); err != nil {
					return errf("'bind %s' in section '%s' : 'group' : unknown group name '%s'", args[0], c.sec.Kind, v)
				}
			}
			i += n
			continue
		}
		if bindFlags[kw] {
			if err := bindGap(c, args[0], kw); err != nil {
				return err
			}
			continue
		}
		return errf("'bind %s' unknown keyword '%s'.", args[0], kw)
	}
	b.Args = rest
	c.p.Binds = append(c.p.Binds, b)
	return nil
}

// bindGap reports a bind parameter goha does not implement: a refused one
// is returned, a warned one is reported here and the line goes on.
func bindGap(c *kwCtx, addr, kw string) error {
	err := bindGaps[kw].err(kw)
	if err == nil {
		return nil
	}
	if w, ok := err.(*diag.Warn); ok {
		c.b.d.Warnf(c.pos, "'bind %s' : %s", addr, w.Msg)
		return nil
	}
	return errf("'bind %s' : %v", addr, err)
}

// ExpandBindAddr turns a bind address into one or more listen addresses,
// in the form "tcp:host:port", "unix:/path" or "fd:N". It understands comma
// lists, port ranges (80-85), ipv4@, ipv6@, unix@, abns@ (refused) and fd@.
func ExpandBindAddr(spec string) ([]string, error) {
	var out []string
	for _, one := range strings.Split(spec, ",") {
		switch {
		case strings.HasPrefix(one, "fd@"):
			n := strings.TrimPrefix(one, "fd@")
			if _, err := strconv.Atoi(n); err != nil {
				return nil, fmt.Errorf("invalid file descriptor '%s'", one)
			}
			out = append(out, "fd:"+n)
			continue
		case strings.HasPrefix(one, "unix@"):
			out = append(out, "unix:"+strings.TrimPrefix(one, "unix@"))
			continue
		case strings.HasPrefix(one, "/"):
			out = append(out, "unix:"+one)
			continue
		case strings.HasPrefix(one, "abns@"), strings.HasPrefix(one, "sockpair@"):
			return nil, fmt.Errorf("address family of '%s' is not supported by goha", one)
		}
		a := one
		for _, pfx := range []string{"ipv4@", "ipv6@", "tcp@", "tcp4@", "tcp6@"} {
			a = strings.TrimPrefix(a, pfx)
		}
		i := strings.LastIndexByte(a, ':')
		if i < 0 {
			return nil, fmt.Errorf("missing port number: '%s'", one)
		}
		host, ports := a[:i], a[i+1:]
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if host == "*" {
			host = ""
		}
		lo, hi := ports, ports
		if j := strings.IndexByte(ports, '-'); j >= 0 {
			lo, hi = ports[:j], ports[j+1:]
		}
		l, err1 := strconv.Atoi(lo)
		h, err2 := strconv.Atoi(hi)
		if ports == "" {
			return nil, fmt.Errorf("missing port number: '%s'", one)
		}
		if err1 != nil || err2 != nil || l < 1 || h > 65535 || h < l {
			if err1 == nil && l == 0 {
				return nil, fmt.Errorf("invalid port '%s'", ports)
			}
			return nil, fmt.Errorf("invalid port '%s'", ports)
		}
		for p := l; p <= h; p++ {
			out = append(out, "tcp:"+net.JoinHostPort(host, strconv.Itoa(p)))
		}
	}
	return out, nil
}
