package stream

import (
	"bytes"
	"fmt"
	"goha/core"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"goha/core/diag"
	"goha/core/sample"
)

// Custom access log formats: `log-format <string>` in HAProxy's language
// (configuration.txt 8.2.4). A format is compiled once per frontend when the
// configuration is built, into a list of nodes; at log time the nodes are
// evaluated one after the other into the pooled line buffer, so a line costs
// no allocation.
//
// Spaces in a format are separators: a run of them prints as one space, and
// only after something was printed, so a variable that prints nothing (%hr
// without captures) leaves no double space behind.

// The HAProxy formats behind option tcplog, option httplog and option
// httplog clf.
const (
	tcpLogFormat  = "%ci:%cp [%t] %ft %b/%s %Tw/%Tc/%Tt %B %ts %ac/%fc/%bc/%sc/%rc %sq/%bq"
	httpLogFormat = "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r"
	// option httpslog: httplog's fields and the TLS layer's.
	httpsLogFormat = httpLogFormat + " %[fc_err]/%[ssl_fc_err,hex]/%[ssl_c_err]/%[ssl_c_ca_err]/%[ssl_fc_is_resumed] %[ssl_fc_sni]/%sslv/%sslc"
	clfLogFormat   = "%{+Q}o %{-Q}ci - - [%trg] %r %ST %B \"\" \"\" %cp %ms %ft %b %s %TR %Tw %Tc %Tr %Ta %tsc %ac %fc %bc %sc %rc %sq %bq %CC %CS %hrl %hsl"
)

// lfOpt are a node's flags: %{+M,+Q,+X,+E}.
type lfOpt uint8

const (
	lfMandatory lfOpt = 1 << iota // print "-" for an empty value
	lfQuote                       // surround text values with double quotes
	lfHex                         // addresses, ports and counters in hexadecimal
	lfEsc                         // escape '"', '\' and ']' with a backslash
)

type lfKind uint8

const (
	lfText lfKind = iota
	lfSep
	lfExprNode
	lfClientIP   // %ci
	lfClientPort // %cp
	lfFrontIP    // %fi
	lfFrontPort  // %fp
	lfBackIP     // %bi
	lfBackPort   // %bp
	lfServerIP   // %si
	lfServerPort // %sp
	lfDate       // %t
	lfReqDate    // %tr
	lfDateGMT    // %T
	lfReqDateGMT // %trg
	lfDateLocal  // %Tl
	lfReqDateLoc // %trl
	lfTs         // %Ts
	lfMs         // %ms
	lfFrontend   // %f
	lfFrontXprt  // %ft
	lfBackend    // %b
	lfServer     // %s
	lfTh         // %Th
	lfTi         // %Ti
	lfTR         // %TR
	lfTq         // %Tq
	lfTw         // %Tw
	lfTc         // %Tc
	lfTr         // %Tr
	lfTd         // %Td
	lfTa         // %Ta
	lfTt         // %Tt
	lfTu         // %Tu
	lfStatus     // %ST
	lfBytesOut   // %B
	lfBytesIn    // %U
	lfCookieCli  // %CC
	lfCookieSrv  // %CS
	lfTermState  // %ts
	lfTermCookie // %tsc
	lfActConn    // %ac
	lfFeConn     // %fc
	lfBeConn     // %bc
	lfSrvConn    // %sc
	lfRetries    // %rc
	lfSrvQueue   // %sq
	lfBackQueue  // %bq
	lfHdrReq     // %hr
	lfHdrReqList // %hrl
	lfHdrRsp     // %hs
	lfHdrRspList // %hsl
	lfRequest    // %r
	lfMethod     // %HM
	lfURI        // %HU
	lfPath       // %HP
	lfPathOnly   // %HPO
	lfQuery      // %HQ
	lfVersion    // %HV
	lfCounter    // %rt
	lfLogCount   // %lc
	lfHostname   // %H
	lfPID        // %pid
	lfUniqueID   // %ID
	lfSSLCipher  // %sslc
	lfSSLVersion // %sslv
	lfGlobal     // %o: sets the default flags of the nodes that follow
)

// lfVars are the variables HAProxy 2.6 knows, and whether they need an
// HTTP frontend.
var lfVars = map[string]struct {
	kind lfKind
	http bool
}{
	"o": {lfGlobal, false},
	"B": {lfBytesOut, false}, "CC": {lfCookieCli, true}, "CS": {lfCookieSrv, true},
	"H": {lfHostname, false}, "ID": {lfUniqueID, false}, "ST": {lfStatus, false},
	"T": {lfDateGMT, false}, "Ta": {lfTa, true}, "Tc": {lfTc, false},
	"Th": {lfTh, false}, "Ti": {lfTi, true}, "Tl": {lfDateLocal, false},
	"Tq": {lfTq, true}, "Tr": {lfTr, true}, "TR": {lfTR, true},
	"Td": {lfTd, false}, "Ts": {lfTs, false}, "Tt": {lfTt, false},
	"Tu": {lfTu, false}, "Tw": {lfTw, false}, "U": {lfBytesIn, false},
	"ac": {lfActConn, false}, "b": {lfBackend, false}, "bc": {lfBeConn, false},
	"bi": {lfBackIP, false}, "bp": {lfBackPort, false}, "bq": {lfBackQueue, false},
	"ci": {lfClientIP, false}, "cp": {lfClientPort, false}, "f": {lfFrontend, false},
	"fc": {lfFeConn, false}, "fi": {lfFrontIP, false}, "fp": {lfFrontPort, false},
	"ft": {lfFrontXprt, false}, "hr": {lfHdrReq, false}, "hrl": {lfHdrReqList, false},
	"hs": {lfHdrRsp, false}, "hsl": {lfHdrRspList, false}, "HM": {lfMethod, true},
	"HP": {lfPath, true}, "HPO": {lfPathOnly, true}, "HQ": {lfQuery, true},
	"HU": {lfURI, true}, "HV": {lfVersion, true}, "lc": {lfLogCount, false},
	"ms": {lfMs, false}, "pid": {lfPID, false}, "r": {lfRequest, true},
	"rc": {lfRetries, false}, "rt": {lfCounter, false}, "s": {lfServer, false},
	"sc": {lfSrvConn, false}, "si": {lfServerIP, false}, "sp": {lfServerPort, false},
	"sq": {lfSrvQueue, false}, "sslc": {lfSSLCipher, false}, "sslv": {lfSSLVersion, false},
	"t": {lfDate, false}, "tr": {lfReqDate, true}, "trg": {lfReqDateGMT, true},
	"trl": {lfReqDateLoc, true}, "ts": {lfTermState, false}, "tsc": {lfTermCookie, false},
}

type lfNode struct {
	kind lfKind
	opts lfOpt
	text string // literal text
	smp  *sample.SampleExpr
}

// logFormat is a compiled access log format. Before the build's post-check
// it is only a placeholder that remembers where the directive was written
// and which one it was (see trackLogFormatDirectives).
type logFormat struct {
	pos   diag.Pos
	src   string
	kind  string // "log-format", "option httplog", "option httplog clf", "option tcplog"
	nodes []lfNode
	// needsLogCount: the shared line counter is touched only by the
	// formats that print it (%lc).
	needsLogCount bool
	hasExpr       bool // some node is a %[...] expression
	// dynSeps: the format prints captures, which may print nothing (a
	// request refused before its head): its separators are decided as
	// the line is built.
	dynSeps bool

	logCount atomic.Uint64                  // %lc: lines built so far
	frontIP  atomic.Pointer[netip.AddrPort] // %fi/%fp, found once the listeners exist
	frontOK  atomic.Bool                    // frontIP was looked up
}

var logHostname = func() string {
	h, _ := os.Hostname()
	return h
}()

// compileLogFormat compiles s for a frontend in HTTP mode (http) or TCP
// mode. The error is HAProxy's message, without its "failed to parse
// log-format" prefix.
func compileLogFormat(env *sample.Env, s string, http bool) (*logFormat, error) {
	return compileLogFormatCaps(env, s, http, false)
}

// compileLogFormatCaps compiles s for a frontend that has capture slots
// (caps) or not: %hr, %hs, %hrl and %hsl print only with slots, and then
// the separators around them are decided as the line is built.
func compileLogFormatCaps(env *sample.Env, s string, http, caps bool) (*logFormat, error) {
	return compileLF(env, s, http, caps, lfGone)
}

// compileLF compiles s for a place where the fetches that need what gone
// says are refused.
func compileLF(env *sample.Env, s string, http, caps bool, gone func(sample.Need) bool) (*logFormat, error) {
	f := &logFormat{src: s}
	opts := lfMandatory
	var text []byte
	flush := func() {
		if len(text) > 0 {
			f.nodes = append(f.nodes, lfNode{kind: lfText, text: string(text)})
			text = text[:0]
		}
	}
	addSep := func() {
		flush()
		if n := len(f.nodes); n == 0 || f.nodes[n-1].kind != lfSep {
			f.nodes = append(f.nodes, lfNode{kind: lfSep})
		}
	}
	i := 0
	for i < len(s) {
		c := s[i]
		if c == ' ' {
			addSep()
			i++
			continue
		}
		if c != '%' {
			text = append(text, c)
			i++
			continue
		}
		i++
		if i >= len(s) {
			return nil, fmt.Errorf("truncated line after '%%'")
		}
		var arg string
		hasArg := false
		c = s[i]
		switch {
		case c == '%':
			text = append(text, '%')
			i++
			continue
		case c == '{':
			end := strings.IndexByte(s[i+1:], '}')
			if end < 0 {
				return nil, fmt.Errorf("truncated line after '%s'", s[i+1:])
			}
			arg, hasArg = s[i+1:i+1+end], true
			i += end + 2
			if i >= len(s) || (s[i] != '[' && !isAlnum(s[i])) {
				return nil, fmt.Errorf("parse argument modifier without variable name near '%%{%s}'", arg)
			}
		case c == '[' || isAlpha(c):
		case isDigit(c) || c == ' ' || c == '\t':
			return nil, fmt.Errorf("unexpected variable name near '%c' at position %d line : '%s'. Maybe you want to write a single '%%', use the syntax '%%%%'", c, i, s)
		default:
			// HAProxy drops a '%' followed by anything else and keeps
			// the character as text.
			continue
		}
		flush()
		nodeOpts := opts
		if hasArg {
			nodeOpts = applyLFFlags(nodeOpts, arg)
		}
		if s[i] == '[' {
			e, end, err := parseLFSample(env, s, i+1, gone)
			if err != nil {
				return nil, err
			}
			f.hasExpr = true
			f.nodes = append(f.nodes, lfNode{kind: lfExprNode, opts: nodeOpts, smp: e})
			i = end + 1
			continue
		}
		j := i
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
		name := s[i:j]
		v, ok := lfVars[name]
		if !ok {
			return nil, fmt.Errorf("no such format variable '%s'. If you wanted to emit the '%%' character verbatim, you need to use '%%%%'", name)
		}
		if v.http && !http {
			return nil, fmt.Errorf("format variable '%s' is reserved for HTTP mode", name)
		}
		i = j
		if v.kind == lfGlobal {
			opts = nodeOpts
			continue
		}
		f.needsLogCount = f.needsLogCount || v.kind == lfLogCount
		if v.kind == lfSSLCipher || v.kind == lfSSLVersion {
			// The client connection's TLS state, as the fetches read it.
			fetch := "ssl_fc_cipher"
			if v.kind == lfSSLVersion {
				fetch = "ssl_fc_protocol"
			}
			if e, err := sample.CompileExpr(env, fetch); err == nil {
				f.hasExpr = true
				f.nodes = append(f.nodes, lfNode{kind: lfExprNode, opts: nodeOpts, smp: e})
				continue
			}
		}
		f.nodes = append(f.nodes, lfNode{kind: v.kind, opts: nodeOpts})
	}
	flush()
	if caps && hasCaptureNodes(f.nodes) {
		f.dynSeps = true
		return f, nil
	}
	f.nodes = resolveSeparators(f.nodes)
	return f, nil
}

// resolveSeparators turns the separators into text once and for all. A
// separator prints a space only after something that was not a space; every
// node but the header captures counts as printed, even when it is empty; in
// a frontend without capture slots %hr, %hs, %hrl and %hsl print nothing and
// are dropped: what a separator prints is then known at compile time.
// Adjacent texts are merged.
func resolveSeparators(in []lfNode) []lfNode {
	out := in[:0:0]
	lastSpace := true
	for _, n := range in {
		switch n.kind {
		case lfHdrReq, lfHdrReqList, lfHdrRsp, lfHdrRspList:
			continue
		case lfSep:
			if lastSpace {
				continue
			}
			n = lfNode{kind: lfText, text: " "}
			lastSpace = true
		default:
			lastSpace = false
		}
		if k := len(out) - 1; n.kind == lfText && k >= 0 && out[k].kind == lfText {
			out[k].text += n.text
			continue
		}
		out = append(out, n)
	}
	return out
}

func isCaptureNode(k lfKind) bool {
	return k == lfHdrReq || k == lfHdrReqList || k == lfHdrRsp || k == lfHdrRspList
}

func hasCaptureNodes(nodes []lfNode) bool {
	for _, n := range nodes {
		if isCaptureNode(n.kind) {
			return true
		}
	}
	return false
}

// applyLFFlags applies a %{...} modifier list: comma-separated +X or -X
// with X one of M, Q, X, E. Anything else is ignored, as HAProxy does.
func applyLFFlags(o lfOpt, arg string) lfOpt {
	for _, w := range strings.Split(arg, ",") {
		k := strings.LastIndexAny(w, "+-")
		if k < 0 {
			continue
		}
		var bit lfOpt
		switch w[k+1:] {
		case "M":
			bit = lfMandatory
		case "Q":
			bit = lfQuote
		case "X":
			bit = lfHex
		case "E":
			bit = lfEsc
		default:
			continue
		}
		if w[k] == '+' {
			o |= bit
		} else {
			o &^= bit
		}
	}
	return o
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isAlpha(c) || isDigit(c) }

// lfGone is what a log line cannot read: the messages' heads and bytes
// are gone when it is built.
func lfGone(n sample.Need) bool {
	switch n {
	case sample.NeedReqHdr, sample.NeedResHdr, sample.NeedHdr, sample.NeedReqBuf, sample.NeedResBuf:
		return true
	}
	return false
}

// parseLFSample parses the expression that starts at s[start] (after
// "%[") with the sample engine and returns it with the position of its
// closing ']'.
func parseLFSample(env *sample.Env, s string, start int, gone func(sample.Need) bool) (*sample.SampleExpr, int, error) {
	rest := s[start:]
	e, n, err := sample.ParseExpr(env, rest)
	if err != nil {
		return nil, 0, fmt.Errorf("failed to parse sample expression <%s> : %v", rest, err)
	}
	if need := e.Need(); gone(need) {
		return nil, 0, fmt.Errorf("sample fetch <%s> may not be reliably used here because it needs '%s' which is not available here", rest, need)
	}
	i := start + n
	if i >= len(s) || s[i] != ']' {
		if i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
			return nil, 0, fmt.Errorf("expected ']' after '%s', but found '%c'", s[start:i], s[i])
		}
		return nil, 0, fmt.Errorf("missing ']' after '%s'", s[start:i])
	}
	return e, i, nil
}

// Encoding maps, as HAProxy's: %r and the %H* variables encode '"', '#'
// and non-printable bytes as #XX; under +E, '"', '\' and ']' take a
// backslash (in %r and %H*, the ones that are not already #XX).
var (
	urlEncodeMap [256]bool
	escMap       [256]bool
	// urlClass combines both: 0 plain, 1 #XX, 2 backslash under +E.
	urlClass [256]uint8
)

func init() {
	for i := 0; i < 256; i++ {
		urlEncodeMap[i] = i < 32 || i >= 127
	}
	urlEncodeMap['"'], urlEncodeMap['#'] = true, true
	escMap['"'], escMap['\\'], escMap[']'] = true, true, true
	for i := 0; i < 256; i++ {
		switch {
		case urlEncodeMap[i]:
			urlClass[i] = 1
		case escMap[i]:
			urlClass[i] = 2
		}
	}
}

const hexDigits = "0123456789ABCDEF"

// appendLFText writes a text value as HAProxy's lf_text: quoted under +Q,
// escaped under +E, "-" when empty under +M without +Q.
func appendLFText[T string | []byte](b []byte, v T, o lfOpt) []byte {
	if o&lfQuote != 0 {
		b = append(b, '"')
	}
	if len(v) > 0 {
		if o&lfEsc != 0 {
			for i := 0; i < len(v); i++ {
				if escMap[v[i]] {
					b = append(b, '\\')
				}
				b = append(b, v[i])
			}
		} else {
			b = append(b, v...)
		}
	} else if o&(lfQuote|lfMandatory) == lfMandatory {
		b = append(b, '-')
	}
	if o&lfQuote != 0 {
		b = append(b, '"')
	}
	return b
}

// appendLFEncoded writes v with the bytes of the URL map as #XX (and, under
// +E, the backslash escapes). Quotes are the caller's.
func appendLFEncoded(b, v []byte, o lfOpt) []byte {
	limit := uint8(1)
	if o&lfEsc != 0 {
		limit = 2
	}
	run := 0 // start of the bytes not written yet
	for i, c := range v {
		k := urlClass[c]
		if k == 0 || k > limit {
			continue
		}
		b = append(b, v[run:i]...)
		run = i + 1
		if k == 1 {
			b = append(b, '#', hexDigits[c>>4], hexDigits[c&15])
		} else {
			b = append(b, '\\', c)
		}
	}
	return append(b, v[run:]...)
}

// appendLFHTTP writes one of %r, %HM, %HU, %HP, %HPO, %HQ, %HV.
func appendLFHTTP(b []byte, kind lfKind, line []byte, o lfOpt) []byte {
	if o&lfQuote != 0 {
		b = append(b, '"')
	}
	if v, ok := httpPart(kind, line); ok {
		b = appendLFEncoded(b, v, o)
	} else {
		b = append(b, "<BADREQ>"...)
	}
	if o&lfQuote != 0 {
		b = append(b, '"')
	}
	return b
}

// httpPart cuts the part of the request line a %H variable prints; false
// when the line has no such part (HAProxy prints <BADREQ>).
func httpPart(kind lfKind, line []byte) ([]byte, bool) {
	if len(line) == 0 {
		return nil, false
	}
	isSp := func(c byte) bool { return c == ' ' || c == '\t' }
	i := 0
	for i < len(line) && !isSp(line[i]) {
		i++
	}
	method := line[:i]
	spaces := 0
	for i < len(line) && isSp(line[i]) {
		i++
		spaces++
	}
	u := i
	for i < len(line) && !isSp(line[i]) {
		i++
	}
	uri := line[u:i]
	switch kind {
	case lfRequest:
		return line, true
	case lfMethod:
		return method, len(method) < len(line)
	case lfQuery:
		if q := bytes.IndexByte(uri, '?'); q >= 0 {
			return uri[q:], true
		}
		return nil, true
	}
	if spaces == 0 {
		return nil, false
	}
	switch kind {
	case lfURI:
		return uri, true
	case lfPath:
		if q := bytes.IndexByte(uri, '?'); q >= 0 {
			return uri[:q], true
		}
		return uri, true
	case lfPathOnly:
		p := uri
		if len(p) > 0 && p[0] != '/' {
			// The absolute form: skip the scheme and the authority.
			p = nil
			if k := bytes.Index(uri, schemeSep); k >= 0 {
				if s := bytes.IndexByte(uri[k+3:], '/'); s >= 0 {
					p = uri[k+3+s:]
				}
			}
		}
		if q := bytes.IndexByte(p, '?'); q >= 0 {
			p = p[:q]
		}
		return p, true
	case lfVersion:
		for i < len(line) && isSp(line[i]) {
			i++
		}
		if i == len(line) {
			return http09, true
		}
		return line[i:], true
	}
	return nil, false
}

var (
	http09    = []byte("HTTP/0.9")
	schemeSep = []byte("://")
)

// clientAddr is the client's address as a log line shows it (IPv4-mapped
// addresses as IPv4).
func clientAddr(a net.Addr) (netip.AddrPort, bool) {
	if ta, ok := a.(*net.TCPAddr); ok {
		ip, ok := netip.AddrFromSlice(ta.IP)
		if !ok {
			return netip.AddrPort{}, false
		}
		return netip.AddrPortFrom(ip.Unmap(), uint16(ta.Port)), true
	}
	return netip.AddrPort{}, false
}

func appendLFIP(b []byte, ip netip.Addr, o lfOpt) []byte {
	if o&lfHex != 0 {
		if ip.Is4() {
			a := ip.As4()
			for _, x := range a {
				b = append(b, hexDigits[x>>4], hexDigits[x&15])
			}
		} else {
			a := ip.As16()
			for _, x := range a {
				b = append(b, hexDigits[x>>4], hexDigits[x&15])
			}
		}
		return b
	}
	if o&(lfQuote|lfEsc) != 0 {
		var tmp [64]byte
		return appendLFText(b, ip.AppendTo(tmp[:0]), o)
	}
	return ip.AppendTo(b)
}

func appendLFPort(b []byte, port uint16, o lfOpt) []byte {
	if o&lfHex != 0 {
		return append(b, hexDigits[port>>12], hexDigits[port>>8&15], hexDigits[port>>4&15], hexDigits[port&15])
	}
	return strconv.AppendUint(b, uint64(port), 10)
}

// appendLFHex writes v as %04X (at least four digits).
func appendLFHex(b []byte, v uint64, width int) []byte {
	var tmp [16]byte
	s := strconv.AppendUint(tmp[:0], v, 16)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	for _, c := range s {
		if c >= 'a' {
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// appendGMTDate writes 29/Nov/2026:23:00:00 +0000.
func appendGMTDate(b []byte, t time.Time) []byte {
	return appendZonedDate(b, t.UTC())
}

// appendZonedDate writes 29/Nov/2026:23:00:00 +0100 in t's zone.
func appendZonedDate(b []byte, t time.Time) []byte {
	b = appendPad(b, t.Day(), 2)
	b = append(b, '/')
	b = append(b, t.Month().String()[:3]...)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(t.Year()), 10)
	b = append(b, ':')
	b = appendPad(b, t.Hour(), 2)
	b = append(b, ':')
	b = appendPad(b, t.Minute(), 2)
	b = append(b, ':')
	b = appendPad(b, t.Second(), 2)
	_, off := t.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	b = append(b, ' ', sign)
	b = appendPad(b, off/3600, 2)
	return appendPad(b, off/60%60, 2)
}

func appendMsLF(b []byte, d time.Duration, valid bool) []byte {
	if !valid {
		return append(b, "-1"...)
	}
	return strconv.AppendInt(b, ms(d), 10)
}

// frontAddr is the frontend's listening address when it has only one
// (%fi, %fp); the stream does not keep its own local address.
func (f *logFormat) frontAddr(proc *Process, fe *proxy) (netip.AddrPort, bool) {
	if !f.frontOK.Load() {
		var found netip.AddrPort
		n := 0
		proc.lmu.Lock()
		for _, l := range proc.listeners {
			if l.fe != fe || l.ln == nil {
				continue
			}
			ap, ok := clientAddr(l.ln.Addr())
			if !ok || (n > 0 && ap != found) {
				n = 2
				break
			}
			found, n = ap, 1
		}
		proc.lmu.Unlock()
		if n == 1 && !found.Addr().IsUnspecified() {
			ap := found
			f.frontIP.Store(&ap)
		}
		if n > 0 {
			f.frontOK.Store(true)
		}
	}
	if p := f.frontIP.Load(); p != nil {
		return *p, true
	}
	return netip.AddrPort{}, false
}

// appendLine evaluates f for the stream si.
func (f *logFormat) appendLine(b []byte, proc *Process, si *streamInfo) []byte {
	return f.build(b, proc, si, nil)
}

// build evaluates f for the stream si; its expressions read live, with
// the messages as they are now, or when live is nil the stream's view
// with the heads put aside.
func (f *logFormat) build(b []byte, proc *Process, si *streamInfo, live *sample.Request) []byte {
	fe := si.fe
	be := si.be
	if be == nil {
		be = fe
	}
	// r is what the expressions read: the stream's, with the messages'
	// heads put aside, as they are gone in HAProxy when it logs.
	r := live
	if f.hasExpr && r == nil {
		r = si.logView(proc)
		head, req, status := r.Head, r.Req, r.Status
		r.Head, r.Req, r.Status = nil, nil, 0
		defer func() { r.Head, r.Req, r.Status = head, req, status }()
	}
	lastSpace := true // dynamic separators: the last thing printed was one
	for i := range f.nodes {
		n := &f.nodes[i]
		o := n.opts
		if f.dynSeps {
			switch {
			case n.kind == lfSep:
				if !lastSpace {
					b = append(b, ' ')
					lastSpace = true
				}
				continue
			case isCaptureNode(n.kind):
				if si.caps == nil || len(si.caps.req) == 0 && (n.kind == lfHdrReq || n.kind == lfHdrReqList) ||
					len(si.caps.rsp) == 0 && (n.kind == lfHdrRsp || n.kind == lfHdrRspList) {
					continue
				}
			}
			lastSpace = false
		}
		switch n.kind {
		case lfHdrReq:
			b = appendCapBlock(b, si.caps.req, o)
		case lfHdrRsp:
			b = appendCapBlock(b, si.caps.rsp, o)
		case lfHdrReqList:
			b = appendCapList(b, si.caps.req, o)
		case lfHdrRspList:
			b = appendCapList(b, si.caps.rsp, o)
		case lfText:
			b = append(b, n.text...)
		case lfExprNode:
			b = appendLFSample(b, n.smp, r, &si.logSmp, o)
		case lfClientIP:
			if ap, ok := clientAddr(si.client); ok {
				b = appendLFIP(b, ap.Addr(), o)
			} else if si.client != nil && si.client.Network() == "unix" {
				b = appendLFText(b, "unix", o)
			} else {
				b = appendLFText(b, "", o)
			}
		case lfClientPort:
			if ap, ok := clientAddr(si.client); ok {
				b = appendLFPort(b, ap.Port(), o)
			} else if si.client != nil && si.client.Network() == "unix" {
				b = append(b, '1')
			} else {
				b = appendLFText(b, "", o)
			}
		case lfFrontIP, lfFrontPort:
			ap, ok := f.frontAddr(proc, fe)
			switch {
			case !ok:
				b = appendLFText(b, "", o)
			case n.kind == lfFrontIP:
				b = appendLFIP(b, ap.Addr(), o)
			default:
				b = appendLFPort(b, ap.Port(), o)
			}
		case lfBackIP, lfBackPort:
			b = appendLFText(b, "", o)
		case lfServerIP, lfServerPort:
			var a *core.ServerAddr
			if si.srv != nil {
				a = si.srv.Addr()
			}
			switch {
			case a == nil || !a.IP.IsValid():
				b = appendLFText(b, "", o)
			case n.kind == lfServerIP:
				b = appendLFIP(b, a.IP.Unmap(), o)
			default:
				port := uint16(a.Port)
				if port == 0 {
					if ap, ok := clientAddr(si.client); ok {
						port = ap.Port()
					}
				}
				b = appendLFPort(b, port, o)
			}
		case lfDate, lfReqDate:
			b = appendLogDate(b, si.accept)
		case lfDateGMT, lfReqDateGMT:
			b = appendGMTDate(b, si.accept)
		case lfDateLocal, lfReqDateLoc:
			b = appendZonedDate(b, si.accept)
		case lfTs:
			if o&lfHex != 0 {
				b = appendLFHex(b, uint64(si.accept.Unix()), 4)
			} else {
				b = strconv.AppendInt(b, si.accept.Unix(), 10)
			}
		case lfMs:
			msec := si.accept.Nanosecond() / 1e6
			if o&lfHex != 0 {
				b = appendLFHex(b, uint64(msec), 2)
			} else {
				b = appendPad(b, msec, 3)
			}
		case lfFrontend:
			b = appendLFText(b, fe.Name, o)
		case lfFrontXprt:
			if o&lfQuote != 0 {
				b = append(b, '"')
			}
			b = append(b, fe.Name...)
			if tlsFrontend(fe) {
				b = append(b, '~')
			}
			if o&lfQuote != 0 {
				b = append(b, '"')
			}
		case lfBackend:
			b = appendLFText(b, be.Name, o)
		case lfServer:
			switch {
			case si.srv != nil:
				b = appendLFText(b, si.srv.Name, o)
			case si.cached:
				b = appendLFText(b, "<CACHE>", o)
			default:
				b = appendLFText(b, "<NOSRV>", o)
			}
		case lfTh, lfTi:
			b = append(b, '0')
		case lfTR, lfTq:
			b = appendMsLF(b, si.trq, si.hasTR())
		case lfTw:
			b = appendMsLF(b, si.tw, si.srv != nil || si.cached || si.term[1] == 'Q')
		case lfTc:
			b = appendMsLF(b, si.tc, si.connected)
		case lfTr:
			b = appendMsLF(b, si.tr, si.gotResp)
		case lfTd:
			if fe.Mode == core.ModeHTTP {
				b = appendMsLF(b, si.tt-si.trq-si.tw-si.tc-si.tr, si.gotResp)
			} else {
				b = appendMsLF(b, si.tt-si.tw-si.tc, si.connected)
			}
		case lfTa:
			b = strconv.AppendInt(b, ms(si.ta), 10)
		case lfTt, lfTu:
			b = strconv.AppendInt(b, ms(si.tt), 10)
		case lfStatus:
			b = strconv.AppendInt(b, int64(si.status), 10)
		case lfBytesOut:
			b = strconv.AppendInt(b, si.bytesOut, 10)
		case lfBytesIn:
			b = strconv.AppendInt(b, si.bytesIn, 10)
		case lfUniqueID:
			id, _ := si.uniqueID(proc, nil)
			b = appendLFText(b, id, o)
		case lfCookieCli, lfCookieSrv, lfSSLCipher, lfSSLVersion:
			b = appendLFText(b, "", o)
		case lfTermState:
			b = append(b, si.term[0], si.term[1])
		case lfTermCookie:
			c1, c2 := si.cookieChars()
			b = append(b, si.term[0], si.term[1], c1, c2)
		case lfActConn:
			b = strconv.AppendInt(b, proc.curConns.Load(), 10)
		case lfFeConn:
			b = strconv.AppendInt(b, fe.FE.Scur.Load(), 10)
		case lfBeConn:
			b = strconv.AppendInt(b, si.beConns(), 10)
		case lfSrvConn:
			b = strconv.AppendInt(b, si.srvConns(), 10)
		case lfRetries:
			if si.redisp {
				b = append(b, '+')
			}
			b = strconv.AppendInt(b, int64(si.retries), 10)
		case lfSrvQueue:
			b = append(b, '0')
		case lfBackQueue:
			if si.be != nil {
				b = strconv.AppendInt(b, si.be.BE.Qcur.Load(), 10)
			} else {
				b = append(b, '0')
			}
		case lfRequest, lfMethod, lfURI, lfPath, lfPathOnly, lfQuery, lfVersion:
			b = appendLFHTTP(b, n.kind, si.reqLine, o)
		case lfCounter:
			v := proc.reqSeq.Add(1) - 1
			if o&lfHex != 0 {
				b = appendLFHex(b, v, 4)
			} else {
				b = strconv.AppendUint(b, v, 10)
			}
		case lfLogCount:
			v := f.logCount.Load()
			if o&lfHex != 0 {
				b = appendLFHex(b, v, 4)
			} else {
				b = strconv.AppendUint(b, v, 10)
			}
		case lfHostname:
			b = appendLFText(b, logHostname, o)
		case lfPID:
			if o&lfHex != 0 {
				b = appendLFHex(b, uint64(proc.PID), 4)
			} else {
				b = strconv.AppendInt(b, int64(proc.PID), 10)
			}
		}
	}
	if f.needsLogCount {
		f.logCount.Add(1)
	}
	return b
}

// appendLFSample evaluates e and writes its text as the flags o ask; an
// absent sample is an empty text.
func appendLFSample(b []byte, e *sample.SampleExpr, r *sample.Request, smp *sample.Sample, o lfOpt) []byte {
	if !e.Eval(r, smp) {
		return appendLFText(b, "", o)
	}
	start := len(b)
	b = sample.AppendText(b, r, smp)
	if o&(lfQuote|lfEsc) == 0 && (len(b) > start || o&lfMandatory == 0) {
		return b
	}
	// The raw text is followed by its quoted and escaped copy, which
	// then takes its place: no scratch space is needed.
	raw := len(b) - start
	b = appendLFText(b, b[start:start+raw], o)
	n := copy(b[start:], b[start+raw:])
	return b[:start+n]
}

// logView is the sample.Request a log line's expressions read: the
// stream's own, or for a stream that has none (headless errors, tests) one
// made for the line.
func (si *streamInfo) logView(proc *Process) *sample.Request {
	if si.view != nil {
		return si.view
	}
	ss := newSampleStream(proc, si, nil, nil, false, 0)
	return &sample.Request{Client: si.client, Stream: &ss}
}

// logDirective is the log-format, option httplog or option tcplog that
// applies to p: its own last one, else its defaults section's.
func logDirective(p *core.Proxy) *core.LogFormatDef {
	for q, n := p, 0; q != nil && n < 64; q, n = q.Template(), n+1 {
		if q.LogFmt != nil {
			return q.LogFmt
		}
	}
	return nil
}

// compileLogFormats compiles the log format of every frontend, once its
// loggers are known. HAProxy's messages: an ALERT for a bad format at its
// line, a WARNING for a format without any log target.
func (proc *Process) compileLogFormats(dc *diag.Collector) {
	for _, p := range proc.proxies {
		d := logDirective(p.Proxy)
		p.logFmt = nil
		if p.Cap&core.CapFE == 0 {
			continue
		}
		kind := "frontend"
		if p.Cap&core.CapBE != 0 {
			kind = "proxy"
		}
		if d != nil && p.Mode != core.ModeHTTP && (d.Kind == "option httplog" || d.Kind == "option httplog clf") {
			dc.Add(diag.Diag{Sev: diag.Warning, Pos: d.Pos, Parsing: true,
				Msg: fmt.Sprintf("'option httplog' not usable with %s '%s' (needs 'mode http'). Falling back to 'option tcplog'.", kind, p.Name)})
		}
		if d != nil && p.Mode != core.ModeHTTP && d.Kind == "option httpslog" {
			dc.Add(diag.Diag{Sev: diag.Warning, Pos: d.Pos, Parsing: true,
				Msg: fmt.Sprintf("'option httpslog' not usable with %s '%s' (needs 'mode http'). Falling back to 'option tcplog'.", kind, p.Name)})
		}
		src, pos := "", p.Pos
		switch {
		case d != nil && d.Kind == "log-format":
			src, pos = p.LogFormat, d.Pos
		case d != nil && d.Kind == "option httpslog" && p.Mode == core.ModeHTTP:
			src = httpsLogFormat
		case d != nil && d.Kind == "option httplog clf" && p.Mode == core.ModeHTTP:
			src = clfLogFormat
		case d != nil && d.Kind == "option httplog" && p.Mode == core.ModeHTTP && len(p.ReqCaps)+len(p.RspCaps) > 0:
			// The fast path has no captures.
			src = httpLogFormat
		case d == nil && p.LogFormat != "":
			src = p.LogFormat
		}
		if src != "" {
			f, err := compileLogFormatCaps(proc.env, src, p.Mode == core.ModeHTTP, len(p.ReqCaps)+len(p.RspCaps) > 0)
			if err != nil {
				dc.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Parsing [%s:%d]: failed to parse log-format : %s.", pos.File, pos.Line, err)})
				continue
			}
			p.logFmt = f
		}
		if !p.HasLoggers() && (src != "" || p.HTTPLog || p.TCPLog) {
			dc.Add(diag.Diag{Sev: diag.Warning, Msg: fmt.Sprintf("log format ignored for %s '%s' since it has no log address.", kind, p.Name)})
		}
	}
}

func appendLogDate(b []byte, t time.Time) []byte {
	// 29/Nov/2026:23:00:00.123
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	b = appendPad(b, d, 2)
	b = append(b, '/')
	b = append(b, mo.String()[:3]...)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(y), 10)
	b = append(b, ':')
	b = appendPad(b, h, 2)
	b = append(b, ':')
	b = appendPad(b, mi, 2)
	b = append(b, ':')
	b = appendPad(b, sec, 2)
	b = append(b, '.')
	b = appendPad(b, t.Nanosecond()/1e6, 3)
	return b
}

// appendPad writes v (not negative) in at least width digits; it does
// not allocate, where strconv.Itoa does for values of 100 and more.
func appendPad(b []byte, v, width int) []byte {
	var d [20]byte
	i := len(d)
	for v >= 10 || len(d)-i < width-1 {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	d[i] = byte('0' + v)
	return append(b, d[i:]...)
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// tlsFrontend says whether every bind of fe is a TLS one: %ft then ends in
// '~'. (The stream does not say which bind accepted it.)
func tlsFrontend(fe *proxy) bool {
	for _, b := range fe.Binds {
		if b.TLS() == nil {
			return false
		}
	}
	return len(fe.Binds) > 0
}
