package core

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"goha/core/config"
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
	"ca-verify-file": 1, "label": 1,
}

var bindFlags = map[string]bool{
	"ssl": true, "v4v6": true, "v6only": true, "transparent": true, "defer-accept": true,
	"accept-proxy": true, "accept-netscaler-cip": false, "tfo": true, "strict-sni": true,
	"no-sslv3": true, "no-tlsv10": true, "no-tlsv11": true, "no-tlsv12": true, "no-tlsv13": true,
	"force-tlsv12": true, "force-tlsv13": true, "prefer-client-ciphers": true, "allow-0rtt": true,
	"no-ca-names": true, "generate-certificates": true, "quic-force-retry": true,
	"no-tls-tickets": true, "ssl-reuse": true,
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
			switch kw {
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
			}
			i += n
			continue
		}
		if bindFlags[kw] {
			continue
		}
		return errf("'bind %s' unknown keyword '%s'.", args[0], kw)
	}
	b.Args = rest
	c.p.Binds = append(c.p.Binds, b)
	return nil
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
