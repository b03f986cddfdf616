package ring

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ParseMessage parses a received syslog message the way HAProxy's
// log-forward does and returns the message body. It fills m with what it
// found: the PRI (Facility and Level, -1 when absent), then either the
// rfc5424 fields (time, host, app-name as Tag, procid as PID, msgid,
// structured data; "-" values left empty except the time) or the rfc3164
// ones (time, host, and the tag and pid when the tag ends with ": "). When
// the header after the PRI is malformed only the PRI is kept and the body
// is everything after it. The fields of m point into buf.
func ParseMessage(buf []byte, m *Meta) []byte {
	*m = Meta{Facility: -1, Level: -1}
	if len(buf) < 2 || buf[0] != '<' {
		return buf
	}
	// RFC 5424 PRI: one to three digits, at most 191. Anything else is
	// not a PRI and the whole message is kept as the body.
	v, p := 0, 1
	for ; p < len(buf) && buf[p] != '>'; p++ {
		c := buf[p]
		if c < '0' || c > '9' || p > 3 {
			return buf
		}
		v = v*10 + int(c-'0')
	}
	if p >= len(buf) || p == 1 || v > 191 {
		return buf
	}
	m.Facility, m.Level, m.Prio = v>>3, v&7, true
	rest := buf[p+1:]
	n := len(rest)

	bad := func() []byte {
		m.RawTime, m.Host, m.Tag, m.PID, m.MsgID, m.SD = nil, nil, nil, nil, nil, nil
		return rest
	}
	// field reads a space-terminated field starting at q; ok is false when
	// it is empty or runs to the end of the message.
	field := func(q int) (f []byte, next int, ok bool) {
		if q >= n || rest[q] == ' ' {
			return nil, q, false
		}
		start := q
		for rest[q] != ' ' {
			q++
			if q >= n {
				return nil, q, false
			}
		}
		f = rest[start:q]
		if len(f) == 1 && f[0] == '-' {
			f = nil
		}
		return f, q, true
	}

	if n > 2 && rest[0] == '1' && rest[1] == ' ' {
		q := 2
		switch {
		case n-2 > 2 && rest[q] == '-' && rest[q+1] == ' ':
			m.RawTime = rest[q : q+1]
			q++
		case n-2 > isoTimeMinLen:
			start := q
			q += 19
			if rest[q] == '.' {
				q++
				if q >= n {
					return bad()
				}
				for rest[q] != 'Z' && rest[q] != '+' && rest[q] != '-' {
					if rest[q] < '0' || rest[q] > '9' {
						return bad()
					}
					q++
					if q >= n {
						return bad()
					}
				}
			}
			if rest[q] == 'Z' {
				q++
			} else {
				q += 6
			}
			if q >= n || rest[q] != ' ' {
				return bad()
			}
			m.RawTime = rest[start:q]
		default:
			return bad()
		}
		var ok bool
		if m.Host, q, ok = field(q + 1); !ok {
			return bad()
		}
		if m.Tag, q, ok = field(q + 1); !ok {
			return bad()
		}
		if m.PID, q, ok = field(q + 1); !ok {
			return bad()
		}
		if m.MsgID, q, ok = field(q + 1); !ok {
			return bad()
		}
		q++
		if q >= n || rest[q] == ' ' {
			return bad()
		}
		start := q
		switch rest[q] {
		case '[':
			elem := false
			for {
				if elem {
					// "]" may be escaped inside a parameter value.
					if rest[q] == ']' && rest[q-1] != '\\' {
						elem = false
					}
				} else if rest[q] == '[' {
					elem = true
				} else if rest[q] == ' ' {
					break
				} else {
					return bad()
				}
				q++
				if q >= n {
					return bad()
				}
			}
		case '-':
			q++
			if q >= n || rest[q] != ' ' {
				return bad()
			}
		default:
			return bad()
		}
		m.SD = rest[start:q]
		if len(m.SD) == 1 && m.SD[0] == '-' {
			m.SD = nil
		}
		return rest[q+1:]
	}

	if n > legacyTimeLen {
		month := false
		for _, name := range monthNames {
			if string(rest[:3]) == name {
				month = true
				break
			}
		}
		if !month {
			return bad()
		}
		m.RawTime = rest[:legacyTimeLen]
		q := legacyTimeLen
		if rest[q] != ' ' {
			return bad()
		}
		host, q, ok := field(q + 1)
		if !ok {
			return bad()
		}
		m.Host = rest[q-len(host) : q]
		if len(host) == 0 { // a "-" hostname is kept as written in rfc3164
			m.Host = rest[q-1 : q]
		}
		body := rest[q+1:]
		// A tag is "TAG: " or "TAG[PID]: " made of non-space bytes.
		t := 0
		for t < len(body) && body[t] != ' ' && body[t] != ':' {
			t++
		}
		if t+1 >= len(body) || body[t] != ':' || body[t+1] != ' ' {
			return body
		}
		tagLen, pidStart := -1, -1
		i := 0
		for ; body[i] != ':'; i++ {
			if body[i] == '[' {
				tagLen, pidStart = i, i+1
			} else if body[i] == ']' && pidStart >= 0 {
				if body[i+1] != ':' {
					m.Tag = body[:max(tagLen, 0)]
					return body
				}
				m.PID = body[pidStart:i]
			}
		}
		if tagLen <= 0 {
			tagLen = i
		}
		m.Tag = body[:tagLen]
		return body[i+2:]
	}
	return rest
}

// HostOption is log-forward's `option host`: what to do with the sender's
// address.
type HostOption uint8

const (
	// HostFill sets the sender's address as hostname when the message has
	// none (the default).
	HostFill HostOption = iota
	// HostKeep never touches the hostname.
	HostKeep
	// HostReplace always sets the sender's address.
	HostReplace
	// HostAppend appends ",<address>" to the hostname, or sets it.
	HostAppend
)

// DefaultMaxFrame is the largest message log-forward accepts (HAProxy's
// bufsize).
const DefaultMaxFrame = 16384

// FrameReader splits a log-forward TCP stream into messages. Each
// message's framing is detected from its first byte: "<" means
// non-transparent framing (up to LF, one CR before it dropped), 1-9 octet
// counting ("LEN SP" then LEN bytes). Both may be mixed on one stream.
type FrameReader struct {
	br *bufio.Reader
	// AssumeLF reads every message as LF-terminated
	// (`option assume-rfc6587-ntf`).
	AssumeLF bool
	max      int
	buf      []byte
}

// NewFrameReader reads frames of at most max bytes (DefaultMaxFrame when
// max <= 0) from r.
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	return &FrameReader{br: bufio.NewReaderSize(r, max+1), max: max, buf: make([]byte, max)}
}

// Next returns the next message, valid until the following call. It
// returns io.EOF at a clean end of stream, ErrFraming or ErrFrameTooLarge
// for a stream that cannot be parsed (the connection should be closed),
// or the read error.
func (fr *FrameReader) Next() ([]byte, error) {
	c, err := fr.br.ReadByte()
	if err != nil {
		return nil, err
	}
	switch {
	case c == '<' || fr.AssumeLF:
		_ = fr.br.UnreadByte()
		line, err := fr.br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, ErrFrameTooLarge
			}
			if err == io.EOF {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line = line[:len(line)-1]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		return line, nil
	case c >= '1' && c <= '9':
		n := int(c - '0')
		for {
			d, err := fr.br.ReadByte()
			if err != nil {
				if err == io.EOF {
					return nil, io.ErrUnexpectedEOF
				}
				return nil, err
			}
			if d == ' ' {
				break
			}
			if d < '0' || d > '9' {
				return nil, ErrFraming
			}
			n = n*10 + int(d-'0')
			if n > fr.max {
				return nil, ErrFrameTooLarge
			}
		}
		if _, err := io.ReadFull(fr.br, fr.buf[:n]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		return fr.buf[:n], nil
	}
	return nil, ErrFraming
}

// LogForward is a `log-forward <name>` section: a syslog relay that
// receives on TCP (`bind`) and UDP (`dgram-bind`) and re-emits every
// message through its `log` lines, keeping the message's facility and
// level.
type LogForward struct {
	Name          string
	Binds         []string // TCP listen addresses (host:port)
	DgramBinds    []string // UDP listen addresses (host:port)
	Loggers       Loggers
	MaxConn       int // concurrent TCP clients, default 10
	Backlog       int
	TimeoutClient time.Duration // TCP inactivity limit, 0: none
	Host          HostOption
	DontParse     bool // `option dont-parse-log`
	AssumeLF      bool // `option assume-rfc6587-ntf`

	received  atomic.Uint64
	failedReq atomic.Uint64
}

// Received returns the number of messages received.
func (lf *LogForward) Received() uint64 { return lf.received.Load() }

// FailedRequests returns the number of TCP streams closed for bad framing.
func (lf *LogForward) FailedRequests() uint64 { return lf.failedReq.Load() }

// ParseLogForward opens a `log-forward <name>` section.
func ParseLogForward(args []string) (*LogForward, error) {
	name := arg(args, 1)
	if name == "" {
		return nil, &ConfigError{Msg: "missing name for log-forward section."}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-') {
			return nil, &ConfigError{Msg: "character '" + string(c) + "' is not permitted in 'log-forward' name '" + name + "'."}
		}
	}
	return &LogForward{Name: name, MaxConn: 10}, nil
}

// LogForwardKeywords lists the keywords of a `log-forward` section.
var LogForwardKeywords = []string{"backlog", "bind", "dgram-bind", "log", "maxconn", "no", "option", "timeout"}

// ParseKeyword applies one line of the section (args[0] is the keyword).
// `log` lines are parsed with ParseLog; call Open once all rings exist.
func (lf *LogForward) ParseKeyword(args []string) error {
	kw, a1 := arg(args, 0), arg(args, 1)
	switch kw {
	case "bind", "dgram-bind":
		if a1 == "" {
			return &ConfigError{Msg: "missing address for '" + kw + "'"}
		}
		addr, err := listenAddr(a1)
		if err != nil {
			return err
		}
		if kw == "bind" {
			for _, p := range args[2:] {
				if p == "ssl" {
					return &ConfigError{Msg: "'bind " + a1 + "' : TLS is not supported on log-forward listeners"}
				}
			}
			lf.Binds = append(lf.Binds, addr)
		} else {
			lf.DgramBinds = append(lf.DgramBinds, addr)
		}
	case "log":
		l, err := ParseLog(args, false)
		if err != nil {
			return err
		}
		if l.Inherit {
			return &ConfigError{Msg: "'log global' is not supported in a log-forward section"}
		}
		lf.Loggers = append(lf.Loggers, l)
	case "no":
		if a1 != "log" {
			return &ConfigError{Msg: "unknown keyword 'no " + a1 + "' in log-forward section"}
		}
		if err := ParseNoLog(args); err != nil {
			return err
		}
		lf.Loggers = nil
	case "maxconn", "backlog":
		n := atoi(a1)
		if a1 == "" || n <= 0 {
			return &ConfigError{Msg: "'" + kw + "' expects an integer argument."}
		}
		if kw == "maxconn" {
			lf.MaxConn = n
		} else {
			lf.Backlog = n
		}
	case "timeout":
		if a1 != "client" {
			return &ConfigError{Msg: "'timeout' supports 'client' (got '" + a1 + "')."}
		}
		if arg(args, 2) == "" {
			return &ConfigError{Msg: "'timeout client' expects <time> as argument."}
		}
		d, err := parseTimeout(args[2], "timeout", "client")
		if err != nil {
			return err
		}
		lf.TimeoutClient = d
	case "option":
		switch a1 {
		case "host":
			opts := map[string]HostOption{"fill": HostFill, "keep": HostKeep, "replace": HostReplace, "append": HostAppend}
			h, ok := opts[arg(args, 2)]
			if !ok {
				return &ConfigError{Msg: "'option host' requires one of 'replace', 'fill', 'keep', 'append'."}
			}
			lf.Host = h
		case "dont-parse-log":
			lf.DontParse = true
		case "assume-rfc6587-ntf":
			lf.AssumeLF = true
		default:
			return &ConfigError{Msg: "unknown option '" + a1 + "' in log-forward section."}
		}
	default:
		return &ConfigError{Msg: "unknown keyword '" + kw + "' in log-forward section"}
	}
	return nil
}

// listenAddr turns "[ipv4@|ipv6@|udp@|tcp@...]host:port" into host:port.
func listenAddr(raw string) (string, error) {
	s := raw
	if i := strings.IndexByte(s, '@'); i > 0 {
		switch s[:i] {
		case "fd":
			// An inherited socket, as test runners and process managers
			// pass them.
			if _, err := strconv.Atoi(s[i+1:]); err != nil {
				return "", &ConfigError{Msg: "invalid file descriptor in '" + raw + "'"}
			}
			return s, nil
		case "ipv4", "ipv6", "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6":
			s = s[i+1:]
		default:
			return "", &ConfigError{Msg: "unsupported address family in '" + raw + "'"}
		}
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 || i == len(s)-1 {
		return "", &ConfigError{Msg: "missing port specification in '" + raw + "'"}
	}
	if s[i+1:] == "0" { // any free port
		hp, err := parseHostPort(s[:i+1]+"1", raw)
		if err != nil {
			return "", err
		}
		return hp[:len(hp)-1] + "0", nil
	}
	return parseHostPort(s, raw)
}

// Open opens the section's loggers against reg.
func (lf *LogForward) Open(reg *Registry) error {
	for _, l := range lf.Loggers {
		if err := l.Open(reg); err != nil {
			return err
		}
	}
	return nil
}

// Process relays one received message. src is the sender's address as
// text ("192.0.2.7"), nil when unknown (a UNIX socket); see AddrText.
func (lf *LogForward) Process(src []byte, buf []byte) {
	lf.received.Add(1)
	var m Meta
	msg := buf
	if lf.DontParse {
		m.Facility, m.Level = -1, -1
	} else {
		msg = ParseMessage(buf, &m)
		if len(src) > 0 && lf.Host != HostKeep {
			addr := src
			switch {
			case lf.Host == HostReplace:
				m.Host = addr
			case lf.Host == HostFill && len(m.Host) == 0:
				m.Host = addr
			case lf.Host == HostAppend:
				if len(m.Host) > 0 {
					m.Host = append(append(append([]byte(nil), m.Host...), ','), addr...)
				} else {
					m.Host = addr
				}
			}
		}
	}
	lf.Loggers.Send(&m, msg)
}

// AddrText returns the text HAProxy uses for a sender's address (IPv4
// addresses mapped into IPv6 shown as IPv4), nil for an invalid one.
func AddrText(a netip.Addr) []byte {
	if !a.IsValid() {
		return nil
	}
	return a.Unmap().AppendTo(nil)
}

// ServePacket relays every datagram received on pc until ctx is done or
// pc fails. One datagram is one message. On Linux a UDP socket is read
// several datagrams per system call (recvmmsg), in arrival order.
func (lf *LogForward) ServePacket(ctx context.Context, pc net.PacketConn) error {
	stop := context.AfterFunc(ctx, func() { pc.Close() })
	defer stop()
	udp, _ := pc.(*net.UDPConn)
	// The text of the last sender's address, kept while senders repeat.
	var last netip.Addr
	var lastText []byte
	if udp != nil {
		if br := newBatchReader(udp); br != nil {
			for {
				n, err := br.read()
				if err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
				for i := range n {
					msg, src := br.msg(i)
					if src != last {
						last, lastText = src, AddrText(src)
					}
					lf.Process(lastText, msg)
				}
			}
		}
	}
	buf := make([]byte, 65536)
	for {
		var n int
		var src netip.Addr
		var err error
		if udp != nil {
			var ap netip.AddrPort
			n, ap, err = udp.ReadFromUDPAddrPort(buf)
			src = ap.Addr()
		} else {
			n, _, err = pc.ReadFrom(buf)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if src != last {
			last, lastText = src, AddrText(src)
		}
		lf.Process(lastText, buf[:n])
	}
}

// ServeStream accepts TCP clients on ln, at most MaxConn at once, until
// ctx is done or ln fails, and relays their messages.
func (lf *LogForward) ServeStream(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	maxConn := lf.MaxConn
	if maxConn <= 0 {
		maxConn = 10
	}
	slots := make(chan struct{}, maxConn)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		c, err := ln.Accept()
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			lf.serveConn(ctx, c)
		}()
	}
}

// serveConn relays the messages of one TCP client and closes it.
func (lf *LogForward) serveConn(ctx context.Context, c net.Conn) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer c.Close()
	var src []byte
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		src = AddrText(ta.AddrPort().Addr())
	}
	fr := NewFrameReader(c, DefaultMaxFrame)
	fr.AssumeLF = lf.AssumeLF
	var deadline time.Time
	for {
		if lf.TimeoutClient > 0 && time.Until(deadline) < lf.TimeoutClient-time.Second {
			// Re-armed at most once a second: coarse but cheap.
			deadline = time.Now().Add(lf.TimeoutClient)
			_ = c.SetReadDeadline(deadline)
		}
		msg, err := fr.Next()
		if err != nil {
			if errors.Is(err, ErrFraming) || errors.Is(err, ErrFrameTooLarge) {
				lf.failedReq.Add(1)
			}
			return
		}
		lf.Process(src, msg)
	}
}

// ListenAndServe binds every `bind` and `dgram-bind` address and serves
// them until ctx is done. It returns the first bind error at once.
func (lf *LogForward) ListenAndServe(ctx context.Context) error {
	var lns []net.Listener
	var pcs []net.PacketConn
	fail := func(err error) error {
		for _, l := range lns {
			l.Close()
		}
		for _, p := range pcs {
			p.Close()
		}
		return err
	}
	var lc net.ListenConfig
	for _, a := range lf.Binds {
		var ln net.Listener
		var err error
		if f := inheritedFile(a); f != nil {
			ln, err = net.FileListener(f)
			f.Close()
		} else {
			ln, err = lc.Listen(ctx, "tcp", a)
		}
		if err != nil {
			return fail(err)
		}
		lns = append(lns, ln)
	}
	for _, a := range lf.DgramBinds {
		var pc net.PacketConn
		var err error
		if f := inheritedFile(a); f != nil {
			pc, err = net.FilePacketConn(f)
			f.Close()
		} else {
			pc, err = lc.ListenPacket(ctx, "udp", a)
		}
		if err != nil {
			return fail(err)
		}
		pcs = append(pcs, pc)
	}
	var wg sync.WaitGroup
	for _, ln := range lns {
		wg.Add(1)
		go func() { defer wg.Done(); _ = lf.ServeStream(ctx, ln) }()
	}
	for _, pc := range pcs {
		wg.Add(1)
		go func() { defer wg.Done(); _ = lf.ServePacket(ctx, pc) }()
	}
	wg.Wait()
	return nil
}

// inheritedFile opens the descriptor of an "fd@N" address, or returns nil.
func inheritedFile(a string) *os.File {
	n, ok := strings.CutPrefix(a, "fd@")
	if !ok {
		return nil
	}
	fd, err := strconv.Atoi(n)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), a)
}
