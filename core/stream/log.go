package stream

import (
	"net"
	"strconv"
	"time"
)

// Access logs in HAProxy's tcplog and httplog formats, or in the frontend's
// log-format (logformat.go). The line is built in a pooled buffer and handed
// to the process's log sinks.

func appendClient(b []byte, a net.Addr) []byte {
	if ap, ok := clientAddr(a); ok {
		b = ap.Addr().AppendTo(b)
		b = append(b, ':')
		return strconv.AppendUint(b, uint64(ap.Port()), 10)
	}
	return append(b, "unix:1"...)
}

func appendMs(b []byte, d time.Duration, valid bool) []byte {
	if !valid {
		return append(b, "-1"...)
	}
	return strconv.AppendInt(b, ms(d), 10)
}

func (si *streamInfo) appendNames(b []byte) []byte {
	b = append(b, si.fe.Name...)
	if tlsFrontend(si.fe) {
		b = append(b, '~')
	}
	b = append(b, ' ')
	if si.be != nil {
		b = append(b, si.be.Name...)
	} else {
		b = append(b, si.fe.Name...)
	}
	b = append(b, '/')
	switch {
	case si.srv != nil:
		b = append(b, si.srv.Name...)
	case si.cached:
		b = append(b, "<CACHE>"...)
	default:
		b = append(b, "<NOSRV>"...)
	}
	return b
}

func (proc *Process) appendConnCounts(b []byte, si *streamInfo) []byte {
	b = strconv.AppendInt(b, proc.curConns.Load(), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, si.fe.FE.Scur.Load(), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, si.beConns(), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, si.srvConns(), 10)
	b = append(b, '/')
	if si.redisp {
		b = append(b, '+')
	}
	b = strconv.AppendInt(b, int64(si.retries), 10)
	b = append(b, ' ')
	b = append(b, '0', '/')
	if si.be != nil {
		b = strconv.AppendInt(b, si.be.BE.Qcur.Load(), 10)
	} else {
		b = append(b, '0')
	}
	return b
}

// logTCP emits a tcplog line:
// %ci:%cp [%t] %ft %b/%s %Tw/%Tc/%Tt %B %ts %ac/%fc/%bc/%sc/%rc %sq/%bq
func (proc *Process) logTCP(si *streamInfo) {
	// option dontlognull: a connection that brought no byte from the
	// client is not logged. (An HTTP connection closed before its first
	// byte is never logged: it has no request.)
	if !proc.wantsLog(si.fe) || si.fe.DontLogNull && si.bytesIn == 0 || si.logLevel == logSilent {
		return
	}
	if si.fe.logFmt != nil {
		proc.logCustom(si)
		return
	}
	bp := logBufs.Get()
	b := (*bp)[:0]
	b = appendClient(b, si.client)
	b = append(b, " ["...)
	b = appendLogDate(b, si.accept)
	b = append(b, "] "...)
	b = si.appendNames(b)
	b = append(b, ' ')
	b = appendMs(b, si.tw, si.srv != nil || si.cached || si.term[1] == 'Q')
	b = append(b, '/')
	b = appendMs(b, si.tc, si.connected)
	b = append(b, '/')
	b = strconv.AppendInt(b, ms(si.tt), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, si.bytesOut, 10)
	b = append(b, ' ', si.term[0], si.term[1], ' ')
	b = proc.appendConnCounts(b, si)
	proc.emitLog(si.fe, b, si.level())
	*bp = b
	logBufs.Put(bp)
}

// logHTTP emits an httplog line:
// %ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc
// %ac/%fc/%bc/%sc/%rc %sq/%bq %{+Q}r
func (proc *Process) logHTTP(si *streamInfo) {
	if !proc.wantsLog(si.fe) || si.logLevel == logSilent {
		return
	}
	if si.fe.logFmt != nil {
		proc.logCustom(si)
		return
	}
	bp := logBufs.Get()
	b := (*bp)[:0]
	b = appendClient(b, si.client)
	b = append(b, " ["...)
	b = appendLogDate(b, si.accept)
	b = append(b, "] "...)
	b = si.appendNames(b)
	b = append(b, ' ')
	// No request head: HAProxy's TR is -1 (timeouts, aborts, bad requests).
	b = appendMs(b, si.trq, si.hasTR())
	b = append(b, '/')
	b = appendMs(b, si.tw, si.srv != nil || si.cached || si.term[1] == 'Q')
	b = append(b, '/')
	b = appendMs(b, si.tc, si.connected)
	b = append(b, '/')
	b = appendMs(b, si.tr, si.gotResp)
	b = append(b, '/')
	b = strconv.AppendInt(b, ms(si.ta), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(si.status), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, si.bytesOut, 10)
	b = append(b, " - - "...)
	c1, c2 := si.cookieChars()
	b = append(b, si.term[0], si.term[1], c1, c2, ' ')
	b = proc.appendConnCounts(b, si)
	b = append(b, ' ', '"')
	if len(si.reqLine) > 0 {
		b = appendLFEncoded(b, si.reqLine, 0)
	} else {
		b = append(b, "<BADREQ>"...)
	}
	b = append(b, '"')
	proc.emitLog(si.fe, b, si.level())
	*bp = b
	logBufs.Put(bp)
}

// logCustom emits a line in the frontend's log-format.
func (proc *Process) logCustom(si *streamInfo) {
	bp := logBufs.Get()
	b := si.fe.logFmt.appendLine((*bp)[:0], proc, si)
	proc.emitLog(si.fe, b, si.level())
	*bp = b
	logBufs.Put(bp)
}

func (proc *Process) wantsLog(fe *proxy) bool {
	return proc.LogOut != nil || proc.LogSink != nil || fe.HasLoggers()
}

// emitLog hands a finished line to the sinks. LogSink, when set, gets the
// message without a trailing newline (the logging layer frames it).
func (proc *Process) emitLog(fe *proxy, line []byte, level int) {
	if fe.HasLoggers() {
		fe.SendLog(line, level)
	}
	if proc.LogSink != nil {
		proc.LogSink(fe.Proxy, line)
	}
	if proc.LogOut != nil {
		proc.logMu.Lock()
		proc.LogOut.Write(append(line, '\n'))
		proc.logMu.Unlock()
	}
}

// logBufs recycles the buffers of log lines; 512 bytes is their size
// when made, and they grow with the lines.
var logBufs = newCountedPool("log_buf", 512, func() *[]byte { b := make([]byte, 0, 512); return &b })
