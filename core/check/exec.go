package check

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"goha/core/http1"
	"goha/core/sample"
)

// bufSize is the receive buffer of a probe, HAProxy's default tune.bufsize.
const bufSize = 16384

// bufPool recycles probe receive buffers: a fleet of checks would
// otherwise allocate bufSize bytes per probe.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, bufSize); return &b }}

// descLen caps the description as HAProxy's HCHK_DESC_LEN does.
const descLen = 127

// Target is where and how one probe connects. The caller fills it from the
// server's settings at the start of each probe, so run-time changes (check
// address, port, agent string) apply to the next probe.
type Target struct {
	Addr      string   // server address (IP or host name), without port
	Port      int      // server service port
	CheckAddr string   // "addr" / check-addr / agent-addr; "" means Addr
	CheckPort int      // "port" / check-port / agent-port; 0 means Port
	SSL       bool     // check-ssl (or the server's ssl, inherited as HAProxy does)
	SNI       string   // check-sni
	ALPN      []string // check-alpn
	SendProxy bool     // check-send-proxy: PROXY v1 header first
	// Socks4 is the server's SOCKS4 proxy ("socks4 <addr>:<port>"), ""
	// without one. The default connect goes through it when ViaSocks4
	// (check-via-socks4) is set, a "connect via-socks4" rule always.
	Socks4    string
	ViaSocks4 bool
	// TLS is the base TLS configuration; nil means no certificate
	// verification (verify none).
	TLS *tls.Config
	// ServerDown tells http-check disable-on-404 that the server is stopped
	// (a 404 then is a failure, not a conditional success).
	ServerDown bool
	// StateHeader is the X-Haproxy-Server-State value sent with
	// "http-check send-state" (see StateHeader).
	StateHeader string
	// Vars are check variables added to the ruleset's presets
	// ("check.agent_string" for agent checks).
	Vars map[string]string
	// Conclude, when set, receives the outcome before the probe's
	// connection is closed; Run still returns it.
	Conclude func(Outcome)
	// Backend and Server name the checked server for be_name and srv_name
	// in log-format strings.
	Backend, Server string
}

// slack is added to a probe's deadline d: HAProxy's event loop sees a
// connection complete as soon as the kernel does, while a probe's
// goroutine on a busy machine may run tens of milliseconds late, and a
// short inter (20ms) would then time out checks of servers that answered
// in time. It is at most 100ms, and small deadlines keep their scale.
func slack(d time.Duration) time.Duration { return min(5*d, 100*time.Millisecond) }

// Timeouts are the probe deadlines: the connection may take up to Inter, or
// min(Inter, Connect) when Check is set; once connected, the rest of the
// probe has Check when set, else what is left of Inter.
type Timeouts struct {
	Inter   time.Duration // the check's inter (not fastinter/downinter)
	Connect time.Duration // backend "timeout connect"
	Check   time.Duration // backend "timeout check"
}

// Outcome is the result of one probe, in HAProxy's terms.
type Outcome struct {
	Status   Status
	Code     int           // check_code: HTTP status, SMTP code, MySQL/LDAP error
	Desc     string        // info text, at most 127 bytes
	Duration time.Duration // check duration; logs and stats print milliseconds
	// Agent is the parsed reply of an agent check, nil otherwise or when no
	// complete line arrived.
	Agent *AgentReply
	// Prior is a result the ruleset reported before its end (spop-check's
	// "SPOA server is ok"). HAProxy applies it, and logs it, on its own
	// before the final result, so it moves the rise/fall counter too.
	Prior *Outcome
}

// Result maps the outcome's status to its effect on the rise/fall counter.
func (o Outcome) Result() Result { return o.Status.Result() }

type evalRet int

const (
	evalContinue evalRet = iota
	evalWait
	evalStop
)

// probe is the state of one run of a ruleset.
type probe struct {
	rules    *Rules
	target   *Target
	to       Timeouts
	ctx      context.Context
	start    time.Time
	deadline time.Time

	conn     net.Conn
	raw      net.Conn // TCP connection under TLS, for linger
	unhook   func() bool
	linger   bool
	l6       bool // TLS handshake in progress
	l4       bool // TCP connect in progress
	cur      *Rule
	in       []byte
	buf      *[]byte // pooled backing array of in
	eof      bool
	vars     sample.Vars
	done     bool
	out      Outcome
	agentRep *AgentReply
	http     *httpResponse
	prior    *Outcome

	// smp is the Request expressions evaluate with; head is the HTTP
	// response head parsed from a copy of in (headBuf) for them, valid
	// while headDone (headOK: it parsed).
	smp              sample.Request
	head             http1.Head
	headBuf          []byte
	headDone, headOK bool
	tmp              sample.Sample
}

// Run runs a check ruleset once against the target and returns HAProxy's
// view of the result. It never blocks past the deadlines in to, and returns
// early with the same statuses when ctx is cancelled.
func Run(ctx context.Context, rules *Rules, t *Target, to Timeouts) Outcome {
	if to.Inter <= 0 {
		to.Inter = DefaultInter
	}
	p := &probe{rules: rules, target: t, to: to, ctx: ctx, start: time.Now()}
	p.run()
	if t.Conclude != nil {
		t.Conclude(p.out)
	}
	if p.conn != nil {
		p.closeConn()
	}
	if p.buf != nil {
		*p.buf = p.in[:0]
		p.in = nil
		bufPool.Put(p.buf)
	}
	return p.out
}

func (p *probe) setStatus(st Status, desc string) {
	if p.done {
		return
	}
	p.done = true
	if i := strings.IndexByte(desc, 0); i >= 0 {
		desc = desc[:i]
	}
	if len(desc) > descLen {
		desc = desc[:descLen]
	}
	p.out.Status = st
	p.out.Desc = desc
	p.out.Duration = time.Since(p.start)
	if p.prior != nil {
		// HAProxy measures a probe once, at its first result.
		p.out.Duration = p.prior.Duration
		p.out.Prior = p.prior
	}
}

// setPrior records a result reported before the end of the ruleset.
func (p *probe) setPrior(st Status, desc string) {
	if p.done || p.prior != nil {
		return
	}
	p.prior = &Outcome{Status: st, Code: p.out.Code, Desc: desc, Duration: time.Since(p.start)}
}

func (p *probe) isTCPProto() bool { return p.rules.Proto == ProtoTCP }

func (p *probe) run() {
	if p.rules == nil || p.rules.Set == nil {
		p.setStatus(StatusSockErr, "")
		return
	}
	p.initVars()
	rules := p.rules.Set.Rules
	mustRead := true
	lastRead := false
	for i := 0; i < len(rules); i++ {
		r := rules[i]
		p.out.Code = 0
		var ret evalRet
		switch r.Action {
		case ActConnect:
			p.cur = r
			ret = p.connect(r)
			lastRead = false
			mustRead = len(p.in) == 0
		case ActSend:
			p.cur = r
			ret = p.send(r)
			mustRead = true
		case ActExpect:
			p.cur = r
			if mustRead {
				if !p.recv(r) {
					return
				}
				lastRead = p.eof || len(p.in) >= bufSize
				mustRead = false
			}
			if p.rules.Proto == ProtoHTTP {
				ret = p.expectHTTP(r, lastRead)
			} else {
				ret = p.expect(r, lastRead)
			}
			if ret == evalWait {
				if lastRead {
					p.setStatus(StatusL7Rsp, "")
					return
				}
				// More data is needed: read, then evaluate again from
				// the head of this chain of expect rules.
				if !p.recv(r) {
					return
				}
				lastRead = p.eof || len(p.in) >= bufSize
				i = r.Expect.headIndex - 1
				continue
			}
		case ActSetVar:
			if r.varExpr.Eval(p.view(), &p.tmp) {
				p.vars.Set(r.varName, &p.tmp)
			} else {
				p.vars.Unset(r.varName)
			}
		case ActUnsetVar:
			p.vars.Unset(r.varName)
		}
		if p.done {
			return
		}
		if ret == evalStop {
			if !p.done {
				p.setStatus(StatusSockErr, "")
			}
			return
		}
	}
	p.finish()
}

// finish sets the status of a ruleset that ran to its end.
func (p *probe) finish() {
	r := p.cur
	switch {
	case r == nil:
		p.setStatus(StatusL7OK, "(tcp-check)")
	case r.Action == ActExpect:
		if p.rules.Disable404 && !p.target.ServerDown && p.out.Code == 404 {
			p.setStatus(StatusL7OKC, "")
			return
		}
		st := r.Expect.OKStatus
		if st == StatusUnknown {
			st = StatusL7OK
		}
		p.setStatus(st, p.expectSuccessMsg(r))
	case r.Action == ActConnect:
		st := StatusL4OK
		if _, ok := p.conn.(*tls.Conn); ok {
			st = StatusL6OK
		}
		desc := "(tcp-check)"
		if r.Connect.Implicit {
			desc = ""
		}
		p.setStatus(st, desc)
	default:
		p.setStatus(StatusL7OK, "(tcp-check)")
	}
}

func (p *probe) closeConn() {
	if !p.linger {
		if tc, ok := p.raw.(*net.TCPConn); ok {
			// HAProxy aborts check connections with a reset unless
			// "linger" is set, so servers keep no TIME_WAIT per probe.
			tc.SetLinger(0)
		}
	}
	if p.unhook != nil {
		p.unhook()
		p.unhook = nil
	}
	p.conn.Close()
	p.conn, p.raw = nil, nil
}

// stepInfo builds the " at step N of tcp-check (...)" suffix HAProxy adds
// to connection errors of tcp-check rulesets.
func (p *probe) stepInfo() string {
	if !p.isTCPProto() {
		return ""
	}
	step := stepID(p.cur)
	if step == 0 {
		return " at initial connection step of tcp-check"
	}
	var b strings.Builder
	fmt.Fprintf(&b, " at step %d of tcp-check", step)
	r := p.cur
	if r == nil {
		return b.String()
	}
	switch r.Action {
	case ActConnect:
		if r.Connect.Port != 0 {
			fmt.Fprintf(&b, " (connect port %d)", r.Connect.Port)
		} else {
			b.WriteString(" (connect)")
		}
	case ActExpect:
		e := r.Expect
		switch e.Kind {
		case ExpectString:
			fmt.Fprintf(&b, " (expect string '%s')", e.Data)
		case ExpectBinary:
			fmt.Fprintf(&b, " (expect binary '%s')", e.Data)
		case ExpectRString:
			b.WriteString(" (expect regex)")
		case ExpectRBinary:
			b.WriteString(" (expect binary regex)")
		case ExpectStringLF:
			b.WriteString(" (expect log-format string)")
		case ExpectBinaryLF:
			b.WriteString(" (expect log-format binary)")
		case ExpectCustom:
			b.WriteString(" (expect custom function)")
		}
	case ActSend:
		b.WriteString(" (send)")
	}
	if r.Comment != "" {
		fmt.Fprintf(&b, " comment: '%s'", r.Comment)
	}
	return b.String()
}

// errnoText renders a socket error as glibc's strerror does.
func errnoText(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		s := en.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return ""
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// connErr reports a connection-level failure the way chk_report_conn_err
// does, from the layer the probe was at.
func (p *probe) connErr(err error, expired bool) {
	info := p.stepInfo()
	msg := info
	if t := errnoText(err); t != "" && !expired {
		msg = t + info
	}
	switch {
	case p.l4:
		if expired {
			p.setStatus(StatusL4TOut, msg)
		} else {
			p.setStatus(StatusL4Con, msg)
		}
	case p.l6:
		if expired {
			p.setStatus(StatusL6TOut, "Timeout during SSL handshake"+info)
		} else {
			p.setStatus(StatusL6Rsp, "SSL handshake failure"+info)
		}
	case expired:
		st := StatusL7TOut
		if p.cur != nil && p.cur.Action == ActExpect && p.cur.Expect.ToutStatus != StatusUnknown {
			st = p.cur.Expect.ToutStatus
		}
		p.setStatus(st, msg)
	default:
		p.setStatus(StatusSockErr, msg)
	}
}

func (p *probe) connect(r *Rule) evalRet {
	if p.conn != nil {
		p.closeConn()
	}
	p.in = p.in[:0]
	p.inChanged()
	p.eof = false
	c := r.Connect
	t := p.target

	host := t.Addr
	if t.CheckAddr != "" {
		host = t.CheckAddr
	}
	port := t.CheckPort
	if port == 0 {
		port = t.Port
	}
	if c.Addr != "" {
		host = c.Addr
		if h, ps, err := net.SplitHostPort(c.Addr); err == nil {
			host = h
			if n, _ := strconv.Atoi(ps); n > 0 {
				port = n
			}
		}
	}
	if c.Port != 0 {
		port = c.Port
	}
	useSSL, sendProxy, sni, alpn := c.SSL, c.SendProxy, c.SNI, c.ALPN
	if c.Default {
		useSSL = useSSL || t.SSL
		sendProxy = sendProxy || t.SendProxy
		if sni == "" {
			sni = t.SNI
		}
		if alpn == nil {
			alpn = t.ALPN
		}
	}
	p.linger = c.Linger
	if host == "" || port <= 0 {
		p.setStatus(StatusSockErr, "")
		return evalStop
	}
	dialAddr := net.JoinHostPort(host, strconv.Itoa(port))
	viaSocks := t.Socks4 != "" && (c.ViaSocks4 || (c.Default && t.ViaSocks4))
	if viaSocks {
		dialAddr = t.Socks4
	}

	now := time.Now()
	p.deadline = now.Add(p.to.Inter + slack(p.to.Inter))
	if p.to.Check > 0 && p.to.Connect > 0 && p.to.Connect < p.to.Inter {
		p.deadline = now.Add(p.to.Connect + slack(p.to.Connect))
	}
	ctx, cancel := context.WithDeadline(p.ctx, p.deadline)
	defer cancel()
	p.l4 = true
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", dialAddr)
	if err != nil {
		// A reset right after the handshake reaches Go's dial as a connect
		// error (it reads SO_ERROR once the RST is in); the connection was
		// established, so HAProxy sees a socket error, not a layer 4 one.
		if errors.Is(err, syscall.ECONNRESET) {
			p.l4 = false
			if viaSocks {
				p.setStatus(StatusSockErr, (&Socks4Error{Text: socks4Aborted, Err: err}).Error()+p.stepInfo())
				return evalStop
			}
		}
		p.connErr(err, isTimeout(err) || ctx.Err() != nil)
		return evalStop
	}
	p.l4 = false
	p.conn, p.raw = conn, conn
	conn.SetDeadline(p.deadline)
	// Cancelling the probe wakes any blocked read or write at once.
	p.unhook = context.AfterFunc(p.ctx, func() { conn.SetDeadline(time.Now()) })
	if viaSocks {
		if !p.socks4(conn, host, port) {
			return evalStop
		}
	}
	if sendProxy {
		if _, err := io.WriteString(conn, proxyHeader(conn)); err != nil {
			p.connErr(err, isTimeout(err))
			return evalStop
		}
	}
	if useSSL {
		cfg := &tls.Config{InsecureSkipVerify: true}
		if t.TLS != nil {
			cfg = t.TLS.Clone()
		}
		if sni != "" {
			cfg.ServerName = sni
		}
		if len(alpn) > 0 {
			cfg.NextProtos = alpn
		}
		tc := tls.Client(conn, cfg)
		p.l6 = true
		err := tc.HandshakeContext(ctx)
		if err != nil {
			p.connErr(err, isTimeout(err) || ctx.Err() != nil)
			return evalStop
		}
		p.l6 = false
		p.conn = tc
	}
	if p.to.Check > 0 {
		p.deadline = time.Now().Add(p.to.Check)
		p.conn.SetDeadline(p.deadline)
	}
	return evalContinue
}

// socks4 runs the SOCKS4 handshake of a check connection, reporting a
// failure as HAProxy does: the connection to the proxy is established, so
// a refused or broken handshake is a socket error, and one the proxy
// leaves unfinished expires as a layer 7 timeout.
func (p *probe) socks4(conn net.Conn, host string, port int) bool {
	ip, _ := netip.ParseAddr(host)
	err := Socks4Connect(conn, netip.AddrPortFrom(ip, uint16(port)))
	if err == nil {
		return true
	}
	var se *Socks4Error
	switch {
	case !errors.As(err, &se):
		p.connErr(err, true)
	case se.Incomplete:
		// HAProxy keeps waiting for the rest of the reply.
		t := time.NewTimer(time.Until(p.deadline))
		select {
		case <-t.C:
		case <-p.ctx.Done():
		}
		t.Stop()
		p.connErr(os.ErrDeadlineExceeded, true)
	default:
		p.setStatus(StatusSockErr, se.Error()+p.stepInfo())
	}
	return false
}

// proxyHeader builds a PROXY protocol v1 line for a check connection.
func proxyHeader(c net.Conn) string {
	l, lok := c.LocalAddr().(*net.TCPAddr)
	r, rok := c.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok {
		return "PROXY UNKNOWN\r\n"
	}
	fam := "TCP4"
	if l.IP.To4() == nil {
		fam = "TCP6"
	}
	return fmt.Sprintf("PROXY %s %s %s %d %d\r\n", fam, l.IP, r.IP, l.Port, r.Port)
}

func (p *probe) send(r *Rule) evalRet {
	if p.conn == nil {
		p.setStatus(StatusSockErr, "")
		return evalStop
	}
	p.in = p.in[:0]
	p.inChanged()
	p.eof = false
	s := r.Send
	var data []byte
	switch s.Kind {
	case SendString, SendBinary:
		if len(s.Data) >= bufSize {
			p.setStatus(StatusL7Rsp, fmt.Sprintf("tcp-check send : string too large (%d) for buffer size (%d) at step %d", len(s.Data), bufSize, stepID(r)))
			return evalStop
		}
		data = s.Data
	case SendStringLF:
		data = p.lf(s.fmt)
	case SendBinaryLF:
		txt := p.lf(s.fmt)
		if len(txt) == 0 {
			return evalContinue
		}
		b, err := parseHexBinary(string(txt))
		if err != nil {
			p.setStatus(StatusL7Rsp, fmt.Sprintf("tcp-check send : failed to build log-format string at step %d", stepID(r)))
			return evalStop
		}
		data = b
	case SendHTTP:
		data = p.buildHTTP(s.HTTP)
	}
	if len(data) == 0 {
		return evalContinue
	}
	if _, err := p.conn.Write(data); err != nil {
		p.connErr(err, isTimeout(err))
		return evalStop
	}
	return evalContinue
}

func (p *probe) buildHTTP(h *HTTPRequest) []byte {
	meth := h.Method
	if meth == "" {
		meth = "OPTIONS"
	}
	uri := h.URI
	if h.uriFmt != nil {
		uri = string(p.lf(h.uriFmt))
	}
	if uri == "" {
		uri = "/"
	}
	vsn := h.Version
	if vsn == "" {
		vsn = "HTTP/1.0"
	}
	body := []byte(h.Body)
	if h.bodyFmt != nil {
		body = p.lf(h.bodyFmt)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s %s\r\n", meth, uri, vsn)
	connHdr := false
	for _, hd := range h.Headers {
		v := p.lf(hd.value)
		if len(v) == 0 {
			continue
		}
		name := strings.ToLower(hd.Name)
		if name == "connection" {
			connHdr = true
		}
		fmt.Fprintf(&b, "%s: %s\r\n", name, v)
	}
	if p.rules.SendState && p.target.StateHeader != "" {
		fmt.Fprintf(&b, "x-haproxy-server-state: %s\r\n", p.target.StateHeader)
	}
	if !connHdr && vsn != "HTTP/1.0" {
		b.WriteString("connection: close\r\n")
	}
	// No content-length for a bodyless OPTIONS, GET, HEAD or DELETE (RFC
	// 9110 8.6; some load balancers reject it), as HAProxy 2.6.12.
	switch {
	case len(body) > 0:
		fmt.Fprintf(&b, "content-length: %d\r\n", len(body))
	case meth != "OPTIONS" && meth != "GET" && meth != "HEAD" && meth != "DELETE":
		b.WriteString("content-length: 0\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// recv reads what the server sent, waiting for at least one byte, the end
// of the stream, an error or the deadline. It returns false when the probe
// is over (its status set).
func (p *probe) recv(r *Rule) bool {
	if p.eof || len(p.in) >= bufSize {
		return true
	}
	if p.conn == nil {
		p.setStatus(StatusSockErr, "")
		return false
	}
	if cap(p.in) < bufSize {
		p.buf = bufPool.Get().(*[]byte)
		p.in = (*p.buf)[:0]
	}
	n, err := p.conn.Read(p.in[len(p.in):bufSize])
	p.in = p.in[:len(p.in)+n]
	p.inChanged()
	if n > 0 {
		return true
	}
	switch {
	case err == nil:
		return true
	case errors.Is(err, io.EOF):
		p.eof = true
		if len(p.in) == 0 {
			msg := fmt.Sprintf("TCPCHK got an empty response at step %d", stepID(r))
			if r.Comment != "" {
				msg += fmt.Sprintf(" comment: '%s'", r.Comment)
			}
			st := StatusL7Rsp
			if r.Expect.ErrStatus != StatusUnknown {
				st = r.Expect.ErrStatus
			}
			p.setStatus(st, msg)
			return false
		}
		return true
	case isTimeout(err) || p.ctx.Err() != nil:
		p.connErr(err, true)
		return false
	default:
		if len(p.in) > 0 {
			// As HAProxy, let the expect rules judge what arrived
			// before a reset.
			p.eof = true
			return true
		}
		p.connErr(err, false)
		return false
	}
}

func (p *probe) applyStatusCode(e *ExpectRule) {
	if e.statusCode == nil {
		return
	}
	v := p.view()
	// HAProxy reads the code from the sample as text, as atol does.
	if e.statusCode.Eval(v, &p.tmp) && sample.Cast(v, &p.tmp, sample.TStr) {
		p.out.Code = int(atolPrefix(string(p.tmp.B)))
	}
}

// expectErrorMsg builds the info of a failed expect rule.
func (p *probe) expectErrorMsg(r *Rule, match bool, info string) string {
	e := r.Expect
	var b strings.Builder
	switch {
	case info != "":
		b.WriteString(info)
	case e.onError != nil:
		b.Write(p.lf(e.onError))
	case !p.isTCPProto():
	default:
		if match {
			b.WriteString("TCPCHK matched unwanted content")
		} else {
			b.WriteString("TCPCHK did not match content")
		}
		step := stepID(r)
		switch e.Kind {
		case ExpectString, ExpectHTTPBody:
			fmt.Fprintf(&b, " '%s' at step %d", e.Data, step)
		case ExpectBinary:
			fmt.Fprintf(&b, " (binary) at step %d", step)
		case ExpectRString, ExpectHTTPRStatus, ExpectHTTPRBody:
			fmt.Fprintf(&b, " (regex) at step %d", step)
		case ExpectRBinary:
			fmt.Fprintf(&b, " (binary regex) at step %d", step)
		case ExpectStringLF, ExpectHTTPBodyLF:
			fmt.Fprintf(&b, " (log-format string) at step %d", step)
		case ExpectBinaryLF:
			fmt.Fprintf(&b, " (log-format binary) at step %d", step)
		case ExpectCustom:
			fmt.Fprintf(&b, " (custom function) at step %d", step)
		case ExpectHTTPStatus:
			fmt.Fprintf(&b, "(status codes) at step %d", step)
		}
	}
	if r.Comment != "" {
		b.WriteString(" comment: ")
		b.WriteString(r.Comment)
	}
	p.applyStatusCode(e)
	return b.String()
}

func (p *probe) expectSuccessMsg(r *Rule) string {
	e := r.Expect
	var out string
	if e.onSuccess != nil {
		out = string(p.lf(e.onSuccess))
	} else if p.isTCPProto() {
		out = "(tcp-check)"
	}
	p.applyStatusCode(e)
	return out
}

func (p *probe) fail(r *Rule, st Status, match bool, info string) evalRet {
	msg := p.expectErrorMsg(r, match, info)
	p.setStatus(st, msg)
	return evalStop
}

func (p *probe) expect(r *Rule, lastRead bool) evalRet {
	e := r.Expect
	if len(p.in) >= bufSize {
		lastRead = true
	}
	if !lastRead {
		if (e.Kind == ExpectString || e.Kind == ExpectBinary) && len(p.in) < len(e.Data) {
			return evalWait
		}
		if e.MinRecv > 0 && len(p.in) < e.MinRecv {
			return evalWait
		}
	}
	match := e.Inverse
	st := e.ErrStatus
	if st == StatusUnknown {
		st = StatusL7Rsp
	}
	switch e.Kind {
	case ExpectString, ExpectBinary:
		match = bytes.Contains(p.in, e.Data)
	case ExpectRString:
		match = e.re.Match(p.in)
	case ExpectRBinary:
		match = e.re.MatchString(strings.ToUpper(fmt.Sprintf("%x", p.in)))
	case ExpectStringLF, ExpectBinaryLF:
		match = false
		pat := p.lf(e.fmt)
		if len(pat) == 0 {
			return p.fail(r, StatusL7Rsp, false, "log-format string evaluated to an empty string")
		}
		if e.Kind == ExpectBinaryLF {
			b, err := parseHexBinary(string(pat))
			if err != nil {
				return p.fail(r, StatusL7Rsp, false, "Failed to parse hexastring resulting of eval of a log-format string")
			}
			pat = b
		}
		if len(p.in) < len(pat) {
			if !lastRead {
				return evalWait
			}
			break
		}
		match = bytes.Contains(p.in, pat)
	case ExpectCustom:
		if e.custom == nil {
			p.setStatus(StatusL7Rsp, "")
			return evalStop
		}
		return e.custom(p, r, lastRead)
	default:
		p.setStatus(StatusL7Rsp, "")
		return evalStop
	}
	if !match && !lastRead && e.MinRecv == -1 {
		return evalWait
	}
	if match != e.Inverse {
		return evalContinue
	}
	return p.fail(r, st, match, "")
}
