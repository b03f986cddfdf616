package ring

import (
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultLen is a logger's line length limit when `len` is not given.
const DefaultLen = 1024

// TargetKind says where a `log` line sends its events.
type TargetKind uint8

const (
	// TargetUDP sends one datagram per event to an IP address.
	TargetUDP TargetKind = iota
	// TargetUnixgram sends one datagram per event to a UNIX socket path.
	TargetUnixgram
	// TargetFD writes one line per event to a file descriptor
	// (stdout, stderr, fd@<n>).
	TargetFD
	// TargetRing stores events in a named ring (ring@<name>).
	TargetRing
	// TargetStream goes through an implicit ring to a TCP (or UNIX
	// stream) syslog server: tcp@, tcp4@, tcp6@, uxst@.
	TargetStream
)

// Target is a parsed log target.
type Target struct {
	Kind TargetKind
	// Raw is the target as written on the line.
	Raw string
	// Network is the Go network for UDP, UNIX and stream targets
	// ("udp", "udp4", "udp6", "unixgram", "tcp", "tcp4", "tcp6", "unix").
	Network string
	// Addr is "host:port" or a socket path.
	Addr string
	// FD is the descriptor of a TargetFD.
	FD int
	// Ring is the ring name of a TargetRing.
	Ring string
}

// Sample is `sample <ranges>:<size>`: of every Size events, only those whose
// 1-based index falls in one of Ranges are sent.
type Sample struct {
	Ranges [][2]uint64 // sorted, non-overlapping, inclusive
	Size   uint64
	n      atomic.Uint64
}

func (s *Sample) take() bool {
	idx := (s.n.Add(1)-1)%s.Size + 1
	for _, rg := range s.Ranges {
		if idx >= rg[0] && idx <= rg[1] {
			return true
		}
	}
	return false
}

// Logger is one `log` line. Build it with ParseLog, then Open it.
type Logger struct {
	// Inherit is set for `log global`: the section takes the global
	// loggers and no other field is set.
	Inherit  bool
	Target   Target
	Len      int    // line length limit, header included, LF counted
	Format   Format // FormatUnspec when no `format` was given
	Sample   *Sample
	Facility int
	Level    int // events above this level are not sent
	MinLevel int // events below this level are raised to it
	// File and Line, when set by the caller, name the implicit ring of a
	// stream target in `show events`.
	File string
	Line int

	ring *Ring    // TargetRing, TargetStream
	fd   *os.File // TargetFD
	// dropped counts lines a datagram target had no room for.
	dropped atomic.Uint64

	mu       sync.Mutex   // guards following fields
	conn     net.Conn     // TargetUDP, TargetUnixgram
	raw      *dgramSender // conn's non-blocking sender, nil where there is none
	batch    *udpBatcher  // TargetUDP's gathering sender, nil where there is none
	lastDial time.Time
}

func arg(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}

// ParseNoLog checks a `no log` line (args[0] "no", args[1] "log"). It
// clears the section's loggers.
func ParseNoLog(args []string) error {
	if arg(args, 2) != "" {
		return &ConfigError{Msg: "'no log' does not expect arguments"}
	}
	return nil
}

// ParseLog parses a `log` line, args[0] being "log":
//
//	log global
//	log <target> [len <n>] [format <fmt>] [sample <ranges>:<size>] <facility> [<level> [<minlevel>]]
//
// inGlobal tells that the line is in the global section, where `log global`
// is refused. Errors carry HAProxy's text.
func ParseLog(args []string, inGlobal bool) (*Logger, error) {
	if arg(args, 1) != "" && arg(args, 2) == "" && args[1] == "global" {
		if inGlobal {
			return nil, &ConfigError{Msg: "'global' is not supported for a global syslog server"}
		}
		return &Logger{Inherit: true}, nil
	}
	if arg(args, 1) == "" || arg(args, 2) == "" {
		or := "or global"
		if inGlobal {
			or = ""
		}
		return nil, &ConfigError{Msg: "expects <address> and <facility> " + or + " as arguments"}
	}
	raw := args[1]
	switch raw {
	case "stdout":
		raw = "fd@1"
	case "stderr":
		raw = "fd@2"
	}
	l := &Logger{Len: DefaultLen, Level: LevelDebug}
	cur := 2
	if arg(args, cur) == "len" {
		n := atoi(arg(args, cur+1))
		if n < 80 || n > 65535 {
			return nil, &ConfigError{Msg: "invalid log length '" + arg(args, cur+1) + "', must be between 80 and 65535"}
		}
		l.Len = n
		cur += 2
	}
	if arg(args, cur) == "format" {
		f, ok := ParseFormat(arg(args, cur+1))
		if !ok {
			return nil, &ConfigError{Msg: "unknown log format '" + arg(args, cur+1) + "'"}
		}
		l.Format = f
		cur += 2
	}
	if arg(args, cur) == "sample" {
		s, err := ParseSample(arg(args, cur+1))
		if err != nil {
			return nil, err
		}
		l.Sample = s
		cur += 2
	}
	if arg(args, cur) == "profile" {
		return nil, &ConfigError{Msg: "log profiles are not supported"}
	}
	fac, ok := ParseFacility(arg(args, cur))
	if !ok {
		return nil, &ConfigError{Msg: "unknown log facility '" + arg(args, cur) + "'"}
	}
	l.Facility = fac
	cur++
	if a := arg(args, cur); a != "" {
		lv, ok := ParseLevel(a)
		if !ok {
			return nil, &ConfigError{Msg: "unknown optional log level '" + a + "'"}
		}
		l.Level = lv
		cur++
	}
	if a := arg(args, cur); a != "" {
		lv, ok := ParseLevel(a)
		if !ok {
			return nil, &ConfigError{Msg: "unknown optional minimum log level '" + a + "'"}
		}
		l.MinLevel = lv
		cur++
	}
	if a := arg(args, cur); a != "" {
		return nil, &ConfigError{Msg: "cannot handle unexpected argument '" + a + "'"}
	}
	t, err := ParseTarget(raw)
	if err != nil {
		return nil, err
	}
	t.Raw = args[1]
	l.Target = t
	return l, nil
}

// ParseLogArgs is ParseLog for the words after the "log" keyword.
func ParseLogArgs(words []string, inGlobal bool) (*Logger, error) {
	return ParseLog(append([]string{"log"}, words...), inGlobal)
}

// atoi reads leading decimal digits like C's atoi; anything else gives 0.
func atoi(s string) int {
	i, neg := 0, false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	n := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n > 1<<31 {
			break
		}
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// readUint reads leading digits of s like HAProxy's read_uint and returns
// the value and the rest.
func readUint(s string) (uint64, string) {
	var n uint64
	i := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n > 1<<32 {
			n = 1 << 33
			continue
		}
		n = n*10 + uint64(s[i]-'0')
	}
	return n, s[i:]
}

// ParseSample parses `<ranges>:<size>`, e.g. "1,3-4:5".
func ParseSample(v string) (*Sample, error) {
	colon := strings.IndexByte(v, ':')
	if colon < 0 {
		return nil, &ConfigError{Msg: "Missing sample size"}
	}
	list, sizeStr := v[:colon], v[colon+1:]
	s := &Sample{}
	var maxHigh uint64
	for p := list; p != ""; {
		end := strings.IndexByte(p, ',')
		item, rest := p, ""
		if end >= 0 {
			item, rest = p[:end], p[end+1:]
		}
		low, tail := readUint(item)
		high := low
		bad := low == 0 || (tail != "" && tail[0] != '-')
		if !bad && tail != "" {
			high, tail = readUint(tail[1:])
			bad = high == 0 || high <= low || tail != ""
		}
		if bad {
			return nil, &ConfigError{Msg: "wrong sample range '" + p + "'"}
		}
		for _, rg := range s.Ranges {
			if (low >= rg[0] && low <= rg[1]) || (high >= rg[0] && high <= rg[1]) {
				return nil, &ConfigError{Msg: "ranges are overlapping"}
			}
		}
		s.Ranges = append(s.Ranges, [2]uint64{low, high})
		maxHigh = max(maxHigh, high)
		p = rest
	}
	if len(s.Ranges) == 0 {
		return nil, &ConfigError{Msg: "no sampling ranges given"}
	}
	size, tail := readUint(sizeStr)
	if size == 0 || tail != "" {
		return nil, &ConfigError{Msg: "wrong sample size '" + sizeStr + "' for sample range '" + list + "'"}
	}
	if size < maxHigh {
		return nil, &ConfigError{Msg: "sample size " + strconv.FormatUint(size, 10) +
			" should be greater or equal to " + strconv.FormatUint(maxHigh, 10) + " the maximum of the high ranges limits"}
	}
	s.Size = size
	for i := 1; i < len(s.Ranges); i++ {
		for j := i; j > 0 && s.Ranges[j][0] < s.Ranges[j-1][0]; j-- {
			s.Ranges[j], s.Ranges[j-1] = s.Ranges[j-1], s.Ranges[j]
		}
	}
	return s, nil
}

// ParseTarget parses the target word of a `log` line (stdout and stderr
// already mapped to fd@1 and fd@2 by ParseLog; both are accepted here too).
func ParseTarget(raw string) (Target, error) {
	t := Target{Raw: raw}
	switch raw {
	case "stdout":
		raw = "fd@1"
	case "stderr":
		raw = "fd@2"
	}
	if name, ok := strings.CutPrefix(raw, "ring@"); ok {
		t.Kind, t.Ring = TargetRing, name
		return t, nil
	}
	if strings.HasPrefix(raw, "backend@") {
		return t, &ConfigError{Msg: "log backends ('" + raw + "') are not supported"}
	}
	if raw == "" {
		return t, &ConfigError{Msg: "'" + raw + "' resolves to an empty address (environment variable missing?)"}
	}
	if v, ok := strings.CutPrefix(raw, "fd@"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return t, &ConfigError{Msg: "file descriptor '" + v + "' is not a valid integer in '" + raw + "'"}
		}
		t.Kind, t.FD = TargetFD, n
		return t, nil
	}
	prefix, rest, hasPrefix := "", raw, false
	if i := strings.IndexByte(raw, '@'); i > 0 {
		prefix, rest, hasPrefix = raw[:i], raw[i+1:], true
	}
	switch {
	case hasPrefix && (prefix == "unix" || prefix == "uxdg"):
		t.Kind, t.Network, t.Addr = TargetUnixgram, "unixgram", rest
	case hasPrefix && prefix == "uxst":
		t.Kind, t.Network, t.Addr = TargetStream, "unix", rest
	case hasPrefix && prefix == "abns":
		t.Kind, t.Network, t.Addr = TargetUnixgram, "unixgram", "@"+rest
	case !hasPrefix && strings.HasPrefix(raw, "/"):
		t.Kind, t.Network, t.Addr = TargetUnixgram, "unixgram", raw
	default:
		net := "udp"
		kind := TargetUDP
		if hasPrefix {
			switch prefix {
			case "udp", "ipv4", "ipv6", "udp4", "udp6":
				net = map[string]string{"udp": "udp", "ipv4": "udp4", "ipv6": "udp6", "udp4": "udp4", "udp6": "udp6"}[prefix]
			case "tcp", "tcp4", "tcp6":
				net, kind = prefix, TargetStream
			default:
				return t, &ConfigError{Msg: "unknown address family '" + prefix + "' in '" + raw + "'"}
			}
		}
		addr, err := parseHostPort(rest, raw)
		if err != nil {
			return t, err
		}
		t.Kind, t.Network, t.Addr = kind, net, addr
		return t, nil
	}
	if len(t.Addr) > 107 {
		return t, &ConfigError{Msg: "socket path '" + raw + "' too long (max 107)"}
	}
	if t.Addr == "" || t.Addr == "@" {
		return t, &ConfigError{Msg: "'" + raw + "' resolves to an empty address (environment variable missing?)"}
	}
	return t, nil
}

// parseHostPort splits "host[:port]" at the last colon as HAProxy does
// (so "::1:514" is [::1]:514) and defaults the port to 514.
func parseHostPort(s, raw string) (string, error) {
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		if end := strings.IndexByte(s, ']'); end > 0 {
			host, port = s[1:end], strings.TrimPrefix(s[end+1:], ":")
		}
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i+1:]
	}
	if port == "" {
		port = "514"
	}
	for i := 0; i < len(port); i++ {
		c := port[i]
		if c == '-' {
			return "", &ConfigError{Msg: "port range not permitted here in '" + raw + "'"}
		}
		if c < '0' || c > '9' {
			return "", &ConfigError{Msg: "invalid character '" + string(c) + "' in port number '" + port + "' in '" + raw + "'"}
		}
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", &ConfigError{Msg: "invalid port '" + port + "'"}
	}
	if host == "" || host == "*" {
		host = "0.0.0.0"
	}
	if net.ParseIP(host) == nil {
		for i := 0; i < len(host); i++ {
			c := host[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
				return "", &ConfigError{Msg: "invalid address: '" + host + "' in '" + raw + "'"}
			}
		}
	}
	return net.JoinHostPort(host, port), nil
}

// implicitRings numbers the rings made for stream targets ("ring#1", ...).
var implicitRings atomic.Uint64

// Open binds the logger to its sink: the named ring from reg (which may
// have been declared after the `log` line), a new implicit ring with one
// legacy TCP server for stream targets (registered in reg; reg.Start
// launches its forwarder), a UDP socket, a UNIX datagram socket (dialled
// again on failure, at most once a second), or a file descriptor.
func (l *Logger) Open(reg *Registry) error {
	if l.Inherit {
		return nil
	}
	switch l.Target.Kind {
	case TargetRing:
		r, isFD := reg.lookup(l.Target.Ring)
		if isFD {
			return &ConfigError{Msg: "uses incompatible ring '" + l.Target.Ring + "'"}
		}
		if r == nil {
			return &ConfigError{Msg: "uses unknown ring named '" + l.Target.Ring + "'"}
		}
		l.ring = r
	case TargetStream:
		if l.ring != nil { // a clone of an opened logger
			return nil
		}
		r := New("ring#"+strconv.FormatUint(implicitRings.Add(1), 10), DefaultSize)
		r.Implicit = true
		r.Format = FormatUnspec
		r.TimeoutConnect = time.Second
		r.TimeoutServer = 5 * time.Second
		if l.File != "" {
			r.Desc = "created from log directive declared into '" + l.File + "' at line " + strconv.Itoa(l.Line)
		}
		r.Servers = []*Server{{Name: r.Name, Addr: l.Target.Addr, Network: l.Target.Network}}
		if err := reg.Add(r); err != nil {
			return err
		}
		l.ring = r
	case TargetFD:
		switch l.Target.FD {
		case 1:
			l.fd = os.Stdout
		case 2:
			l.fd = os.Stderr
		default:
			l.fd = os.NewFile(uintptr(l.Target.FD), l.Target.Raw)
		}
	case TargetUDP:
		c, err := net.Dial(l.Target.Network, l.Target.Addr)
		if err != nil {
			return &ConfigError{Msg: "cannot reach log server '" + l.Target.Raw + "': " + err.Error()}
		}
		l.conn, l.batch = c, newUDPBatcher(c, &l.dropped)
		if l.batch == nil {
			l.raw = newDgramSender(c)
		}
	case TargetUnixgram:
		l.mu.Lock()
		l.dialLocked()
		l.mu.Unlock()
	}
	return nil
}

// Clone returns an unopened copy of a parsed logger with its own sampling
// position, for a section that takes the global loggers with `log global`
// (HAProxy duplicates them the same way). Open the copy before use; a
// clone of an opened tcp@/uxst@ logger keeps using the original's implicit
// ring.
func (l *Logger) Clone() *Logger {
	c := &Logger{Inherit: l.Inherit, Target: l.Target, Len: l.Len, Format: l.Format, Facility: l.Facility,
		Level: l.Level, MinLevel: l.MinLevel, File: l.File, Line: l.Line}
	if l.Sample != nil {
		c.Sample = &Sample{Ranges: l.Sample.Ranges, Size: l.Sample.Size}
	}
	if l.Target.Kind == TargetStream {
		c.ring = l.ring // one implicit ring and connection per `log` line
	}
	return c
}

// Dropped returns the number of lines dropped because a UDP or UNIX
// datagram target had no room for them (HAProxy's DroppedLogs). Rings
// count their own drops.
func (l *Logger) Dropped() uint64 { return l.dropped.Load() }

// Ring returns the ring the logger writes to, if any.
func (l *Logger) Ring() *Ring { return l.ring }

// dialLocked (re)opens a UNIX datagram socket. l.mu must be held.
func (l *Logger) dialLocked() {
	l.lastDial = time.Now()
	c, err := net.Dial(l.Target.Network, l.Target.Addr)
	if err == nil {
		l.conn, l.raw = c, newDgramSender(c)
	}
}

// Flush sends the lines a UDP target is still gathering.
func (l *Logger) Flush() {
	l.mu.Lock()
	b := l.batch
	l.mu.Unlock()
	if b != nil {
		b.flushNow()
	}
}

// Close releases the logger's socket, after sending what it gathered.
func (l *Logger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.batch != nil {
		l.batch.close()
		l.batch = nil
	}
	if l.conn != nil {
		err := l.conn.Close()
		l.conn, l.raw = nil, nil
		return err
	}
	return nil
}

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// Send emits one event if its level passes the logger's filter and the
// sample takes it. m.Facility < 0 means the logger's facility; the level
// is raised to MinLevel. It never blocks on a ring reader; a datagram that
// cannot be sent is lost.
func (l *Logger) Send(m *Meta, msg []byte) {
	if m.Level > l.Level || l.Inherit {
		return
	}
	if l.Sample != nil && !l.Sample.take() {
		return
	}
	h := *m
	h.Level = max(h.Level, l.MinLevel)
	if h.Facility < 0 {
		h.Facility = l.Facility
	}
	if l.ring != nil {
		l.ring.Log(&h, l.Format, l.Len-1, msg)
		return
	}
	bp := linePool.Get().(*[]byte)
	line := AppendLine((*bp)[:0], l.Format, &h, msg, l.Len-1)
	line = append(line, '\n')
	switch l.Target.Kind {
	case TargetFD:
		if l.fd != nil {
			_, _ = l.fd.Write(line)
		}
	case TargetUDP, TargetUnixgram:
		l.mu.Lock()
		if l.conn == nil && l.Target.Kind == TargetUnixgram && time.Since(l.lastDial) >= time.Second {
			l.dialLocked()
		}
		c, raw, batch := l.conn, l.raw, l.batch
		l.mu.Unlock()
		if batch != nil {
			batch.add(line)
		} else if c != nil {
			var err error
			if raw != nil {
				err = raw.send(line)
			} else {
				_, err = c.Write(line)
			}
			if err == errLogDropped {
				l.dropped.Add(1)
			} else if err != nil && l.Target.Kind == TargetUnixgram {
				l.mu.Lock()
				if l.conn == c {
					l.conn.Close()
					l.conn, l.raw = nil, nil
				}
				l.mu.Unlock()
			}
		}
	}
	*bp = line[:0]
	linePool.Put(bp)
}

// Loggers is the list of `log` lines of a section, in order.
type Loggers []*Logger

// Send gives the event to every logger.
func (ls Loggers) Send(m *Meta, msg []byte) {
	for _, l := range ls {
		l.Send(m, msg)
	}
}
