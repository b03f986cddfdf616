package ring

import (
	"context"
	"goha/core/diag"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Registry holds the event sinks of a process, in declaration order: the
// built-in stdout and stderr (fd sinks) and buf0 (a 1 MiB ring in `timed`
// format), then every ring section and implicit ring. `show events` lists
// it; `log ring@<name>` looks rings up in it.
type Registry struct {
	mu    sync.Mutex // guards following fields
	sinks []sink
}

type sink struct {
	name string
	desc string // fd sinks only; rings have their own
	ring *Ring  // nil for fd sinks
}

// NewRegistry returns a registry with the built-in sinks.
func NewRegistry() *Registry {
	buf0 := New("buf0", 1<<20)
	buf0.Format = FormatTimed
	buf0.Desc = "in-memory ring buffer"
	return &Registry{sinks: []sink{
		{name: "stdout", desc: "standard output (fd#1)"},
		// HAProxy's description of stderr really says "output".
		{name: "stderr", desc: "standard output (fd#2)"},
		{name: "buf0", ring: buf0},
	}}
}

// lookup returns the ring named name, or reports an fd sink of that name.
func (reg *Registry) lookup(name string) (r *Ring, isFD bool) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	for _, s := range reg.sinks {
		if s.name == name {
			return s.ring, s.ring == nil
		}
	}
	return nil, false
}

// Ring returns the ring named name, or nil.
func (reg *Registry) Ring(name string) *Ring {
	r, _ := reg.lookup(name)
	return r
}

// Rings returns every ring, in declaration order.
func (reg *Registry) Rings() []*Ring {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	var out []*Ring
	for _, s := range reg.sinks {
		if s.ring != nil {
			out = append(out, s.ring)
		}
	}
	return out
}

// Add registers r under its name.
func (reg *Registry) Add(r *Ring) error {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	for _, s := range reg.sinks {
		if s.name == r.Name {
			return &ConfigError{Msg: "sink named '" + r.Name + "' already exists."}
		}
	}
	reg.sinks = append(reg.sinks, sink{name: r.Name, ring: r})
	return nil
}

// Start launches the forwarders of every ring. They stop when ctx is done.
func (reg *Registry) Start(ctx context.Context) {
	for _, r := range reg.Rings() {
		r.Start(ctx)
	}
}

// Wait returns once every forwarder launched by Start has stopped.
func (reg *Registry) Wait() {
	for _, r := range reg.Rings() {
		r.Wait()
	}
}

// ParseRing opens a `ring <name>` section: it checks the name, creates
// the ring (format raw, size 16384, no maxlen, description = name) and
// registers it. The section's other lines go to ParseRingKeyword.
func (reg *Registry) ParseRing(args []string) (*Ring, error) {
	name := arg(args, 1)
	if name == "" {
		return nil, &ConfigError{Msg: "missing ring name."}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-') {
			return nil, &ConfigError{Msg: "invalid ring name '" + name + "' (character '" + string(c) + "' is not permitted)."}
		}
	}
	r := New(name, DefaultSize)
	if err := reg.Add(r); err != nil {
		return nil, err
	}
	return r, nil
}

// RingKeywords lists the keywords of a `ring` section.
var RingKeywords = []string{"backing-file", "description", "format", "maxlen", "server", "size", "timeout"}

// ParseRingKeyword applies one line of a `ring` section (args[0] is the
// keyword) to r. A *diag.Warn result does not refuse start-up; any other
// error does. Not thread safe.
func ParseRingKeyword(r *Ring, args []string) error {
	a1 := arg(args, 1)
	switch arg(args, 0) {
	case "size":
		size, ok := parseSize(a1)
		if !ok || size == 0 {
			return &ConfigError{Msg: "invalid size '" + a1 + "' for new sink buffer."}
		}
		if size > 1<<40 {
			return &ConfigError{Msg: "too large size '" + strconv.FormatUint(size, 10) + "' for new sink buffer, the limit on this platform is " + strconv.FormatUint(1<<40, 10) + " bytes."}
		}
		return r.Resize(int(size))
	case "backing-file":
		return r.SetBackingFile(a1)
	case "server":
		s, err := ParseServer(args)
		if err != nil {
			return err
		}
		if len(r.Servers) >= MaxReaders {
			return &ConfigError{Msg: "server '" + s.Name + "' sets too many watchers > 255 on ring '" + r.Name + "'."}
		}
		r.Servers = append(r.Servers, s)
	case "timeout":
		if a1 != "connect" && a1 != "server" {
			return nil // HAProxy ignores other timeouts here
		}
		a2 := arg(args, 2)
		if a2 == "" {
			return &ConfigError{Msg: "'timeout " + a1 + "' expects <time> as argument."}
		}
		d, err := parseTimeout(a2, "timeout", a1)
		if err != nil {
			return err
		}
		if a1 == "connect" {
			r.TimeoutConnect = d
		} else {
			r.TimeoutServer = d
		}
	case "format":
		f, ok := ParseFormat(a1)
		if !ok {
			return &ConfigError{Msg: "unknown format '" + a1 + "'."}
		}
		r.Format = f
	case "maxlen":
		n := atoi(a1)
		if n <= 0 {
			return &ConfigError{Msg: "invalid size '" + a1 + "' for new sink buffer."}
		}
		r.MaxLen = n
		if room := r.Size() - 4; n > room {
			r.MaxLen = room
			return &diag.Warn{Msg: "ring '" + r.Name + "' event max length '" + a1 + "' exceeds max payload size, forced to '" + strconv.Itoa(room) + "'."}
		}
	case "description":
		if a1 == "" {
			return &ConfigError{Msg: "missing ring description text."}
		}
		r.Desc = a1
	default:
		return &ConfigError{Msg: "unknown statement '" + arg(args, 0) + "'."}
	}
	return nil
}

// parseSize reads a byte count with an optional k, m or g suffix (powers
// of 1024), as HAProxy's parse_size_err does.
func parseSize(s string) (uint64, bool) {
	n, rest := readUint(s)
	if s == "" || len(rest) == len(s) || n > 1<<32 {
		return 0, false
	}
	switch strings.ToLower(rest) {
	case "":
	case "k":
		n <<= 10
	case "m":
		n <<= 20
	case "g":
		n <<= 30
	default:
		return 0, false
	}
	return n, true
}

// parseTimeout reads a time with an optional unit (us, ms, s, m, h, d;
// milliseconds by default) for `<kw> <sub>` and returns HAProxy's errors.
func parseTimeout(v, kw, sub string) (time.Duration, error) {
	n, rest := readUint(v)
	if len(rest) == len(v) {
		return 0, &ConfigError{Msg: "unexpected character '" + v[:1] + "' in argument to <" + kw + " " + sub + ">."}
	}
	unit := time.Millisecond
	switch rest {
	case "", "ms":
	case "us":
		unit = time.Microsecond
	case "s":
		unit = time.Second
	case "m":
		unit = time.Minute
	case "h":
		unit = time.Hour
	case "d":
		unit = 24 * time.Hour
	default:
		return 0, &ConfigError{Msg: "unexpected character '" + rest[:1] + "' in argument to <" + kw + " " + sub + ">."}
	}
	d := time.Duration(n) * unit
	if n > 1<<40 || d > 2147483647*time.Millisecond {
		return 0, &ConfigError{Msg: "timer overflow in argument <" + v + "> to <" + kw + " " + sub + ">, maximum value is 2147483647 ms (~24.8 days)."}
	}
	if n > 0 && d < time.Millisecond {
		return 0, &ConfigError{Msg: "timer underflow in argument <" + v + "> to <" + kw + " " + sub + ">, minimum non-null value is 1 ms."}
	}
	return d, nil
}

// serverArgs are server keywords accepted on a ring's `server` line that
// do not matter to a log forwarder, with the number of values they take.
var serverArgs = map[string]int{
	"check": 0, "no-check": 0, "inter": 1, "fastinter": 1, "downinter": 1, "rise": 1, "fall": 1,
	"weight": 1, "maxconn": 1, "send-proxy": 0, "send-proxy-v2": 0, "resolvers": 1,
	"resolve-prefer": 1, "init-addr": 1, "max-reuse": 1, "id": 1, "disabled": 0, "enabled": 0,
	"no-ssl": 0,
}

// ParseServer parses a ring `server <name> <addr>:<port> [log-proto
// legacy|octet-count] ...` line (args[0] is "server").
func ParseServer(args []string) (*Server, error) {
	name, addr := arg(args, 1), arg(args, 2)
	if name == "" {
		return nil, &ConfigError{Msg: "'server' expects <name> and <addr>[:<port>] as arguments."}
	}
	if addr == "" {
		return nil, &ConfigError{Msg: "'server " + name + "' : expects <name> and <addr>[:<port>] as arguments."}
	}
	s := &Server{Name: name, Network: "tcp"}
	raw := addr
	switch {
	case strings.HasPrefix(addr, "unix@"):
		s.Network, s.Addr = "unix", addr[5:]
	case strings.HasPrefix(addr, "/"):
		s.Network, s.Addr = "unix", addr
	default:
		for _, p := range []string{"tcp4@", "ipv4@", "tcp6@", "ipv6@", "tcp@"} {
			if v, ok := strings.CutPrefix(addr, p); ok {
				s.Network = map[string]string{"tcp4@": "tcp4", "ipv4@": "tcp4", "tcp6@": "tcp6", "ipv6@": "tcp6", "tcp@": "tcp"}[p]
				addr = v
				break
			}
		}
		host, port := addr, ""
		if i := strings.LastIndexByte(addr, ':'); i >= 0 {
			host, port = addr[:i], addr[i+1:]
		}
		if port == "" {
			return nil, &ConfigError{Msg: "'server " + name + "' : missing port specification in '" + raw + "'"}
		}
		hp, err := parseHostPort(strings.Trim(host, "[]")+":"+port, raw)
		if err != nil {
			return nil, &ConfigError{Msg: "'server " + name + "' : " + err.Error()}
		}
		s.Addr = hp
	}
	for i := 3; i < len(args); i++ {
		kw := args[i]
		if kw == "" {
			continue
		}
		if kw == "log-proto" {
			switch arg(args, i+1) {
			case "legacy":
				s.Proto = ProtoLegacy
			case "octet-count":
				s.Proto = ProtoOctetCount
			default:
				return nil, &ConfigError{Msg: "'log-proto' expects one of 'legacy' or 'octet-count' but got '" + arg(args, i+1) + "'"}
			}
			i++
			continue
		}
		if kw == "ssl" || strings.HasPrefix(kw, "verify") || kw == "sni" || kw == "ca-file" || kw == "crt" {
			return nil, &ConfigError{Msg: "'server " + name + "' : TLS ('" + kw + "') is not supported on ring servers"}
		}
		n, ok := serverArgs[kw]
		if !ok {
			return nil, &ConfigError{Msg: "'server " + name + "' unknown keyword '" + kw + "'."}
		}
		if n > 0 && arg(args, i+1) == "" {
			return nil, &ConfigError{Msg: "'" + kw + "' expects an argument."}
		}
		i += n
	}
	return s, nil
}
