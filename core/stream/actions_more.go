package stream

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"goha/core/http1"
	"goha/core/sample"
	"goha/ring"
)

// The actions of this file: set-log-level, strict-mode, disable-l7-retry,
// set-nice, set-mark, set-tos, early-hint and reject.
const (
	actSetLogLevel ruleAction = iota + 100
	actNoop                   // disable-l7-retry, set-nice
	actSetMark
	actSetTOS
	actEarlyHint
	actStrictMode
	actReject
)

// logSilent is set-log-level silent in streamInfo.logLevel; other values
// are a level plus one, 0 the default.
const logSilent = -1

// compileOther compiles the actions of this file; handled false for
// another action.
func compileOther(r *httpRule, args []string, env *sample.Env, resp bool) (handled bool, err error) {
	switch args[0] {
	case "early-hint", "disable-l7-retry", "reject":
		if resp {
			return false, nil
		}
	}
	switch args[0] {
	case "set-log-level":
		r.act = actSetLogLevel
		if len(args) < 2 {
			return true, fmt.Errorf("expects exactly 1 argument (log level name or 'silent').")
		}
		if args[1] == "silent" {
			r.status = logSilent
		} else if l, ok := ring.ParseLevel(args[1]); ok {
			r.status = l + 1
		} else {
			return true, fmt.Errorf("expects exactly 1 argument (log level name or 'silent').")
		}
	case "strict-mode":
		// Off, a header addition that does not fit in the message's
		// buffer is skipped rather than an error (see rewrite_room.go).
		r.act = actStrictMode
		if len(args) < 2 {
			return true, fmt.Errorf("expects exactly 1 arguments.")
		}
		if args[1] != "on" && args[1] != "off" {
			return true, fmt.Errorf("Unexpected value '%s'. Only 'on' and 'off' are supported.", args[1])
		}
		if args[1] == "off" {
			r.status = 1
		}
	case "reject":
		// Ends the stream at once: the connection is reset with no reply.
		r.act = actReject
	case "disable-l7-retry":
		// goha has no retry-on: there are no layer 7 retries to disable.
		r.act = actNoop
	case "set-nice":
		if len(args) < 2 {
			return true, fmt.Errorf("expects exactly 1 argument (integer value).")
		}
		r.act = actNoop
		r.warn = fmt.Sprintf("'%s' has no effect in goha: streams are not scheduled by priority.", args[0])
	case "set-mark", "set-tos":
		r.act = actSetMark
		if args[0] == "set-tos" {
			r.act = actSetTOS
		}
		if len(args) < 2 {
			return true, fmt.Errorf("expects exactly 1 argument (integer/hex value).")
		}
		v, ok := parseUintC(args[1])
		if !ok {
			return true, fmt.Errorf("invalid character starting at '%s' (integer/hex value expected).", args[1])
		}
		r.status = int(v)
	case "early-hint":
		r.act = actEarlyHint
		if len(args) < 3 {
			return true, fmt.Errorf("expects exactly 2 arguments.")
		}
		r.name = args[1]
		r.value, err = sample.CompileLF(env, args[2])
	default:
		if resp && args[0] == "normalize-uri" {
			return false, nil
		}
		return compileRest(r, args, resp)
	}
	return true, err
}

// parseUintC reads a number as C's strtoul with base 0 does (decimal,
// 0x hexadecimal, 0 octal), up to 32 bits; ok false when anything
// follows it.
func parseUintC(s string) (uint32, bool) {
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil && strings.HasPrefix(s, "0") && !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
		return 0, false
	}
	return uint32(v), err == nil
}

// applyOther runs an action of this file; resp says a response is
// handled (early-hint is a request action only).
func (hc *hconn) applyOther(r *httpRule, v *sample.Request) {
	switch r.act {
	case actSetLogLevel:
		hc.si.logLevel = int8(r.status)
	case actSetMark:
		setClientSockopt(hc.raw.Conn, unix.SOL_SOCKET, unix.SO_MARK, r.status)
	case actSetTOS:
		setClientSockopt(hc.raw.Conn, unix.IPPROTO_IP, unix.IP_TOS, r.status)
	case actEarlyHint:
		hc.earlyHint(r, v)
	case actStrictMode:
		if hc.room != nil {
			hc.room.soft = r.status == 1
		}
	case actStick:
		// An http-request rule runs before any response (Status 0).
		r.sa.run(v, &hc.track, &hc.track.strm, &hc.rs.smp, v.Status == 0, v.Status)
	}
}

// setClientSockopt sets an option of the client socket; as in HAProxy a
// failure (no CAP_NET_ADMIN for SO_MARK, a unix socket) is ignored. TOS
// is the traffic class on an IPv6 socket.
func setClientSockopt(c net.Conn, level, opt, value int) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	if opt == unix.IP_TOS {
		if ap, ok := addrPortOf(c.LocalAddr()); ok && ap.Addr().Is6() && !ap.Addr().Is4In6() {
			level, opt = unix.IPPROTO_IPV6, unix.IPV6_TCLASS
		}
	}
	rc.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), level, opt, value)
	})
}

// markHintGroups marks the early-hint rules that end a run of them: the
// run's headers go out in one 103 response, sent by its last rule. As in
// HAProxy, a rule with a condition starts a new run.
func markHintGroups(rules []*httpRule) {
	for i, r := range rules {
		if r.act == actEarlyHint && (i+1 == len(rules) || rules[i+1].act != actEarlyHint || rules[i+1].cond != nil) {
			r.match = 'l'
		}
	}
}

// earlyHint adds a header to the 103 (Early Hints) interim response the
// run of early-hint rules builds, and sends it at the run's last rule.
// As in HAProxy, HTTP/1.0 clients get none.
func (hc *hconn) earlyHint(r *httpRule, v *sample.Request) {
	if hc.req.Flags&http1.FlagVer11 == 0 {
		return
	}
	if len(hc.hints) == 0 {
		hc.hints = append(hc.hints, "HTTP/1.1 103 Early Hints\r\n"...)
	}
	hc.hints = append(hc.hints, r.name...)
	hc.hints = append(hc.hints, ": "...)
	hc.hints = r.value.AppendTo(hc.hints, v)
	hc.hints = append(hc.hints, "\r\n"...)
	if r.match == 'l' {
		hc.hints = append(hc.hints, "\r\n"...)
		if n, err := hc.ss.conn.Write(hc.hints); err == nil {
			hc.si.bytesOut += int64(n)
		}
		hc.hints = hc.hints[:0]
	}
}

// level is the syslog level of the stream's log line.
func (si *streamInfo) level() int {
	if si.logLevel > 0 {
		return int(si.logLevel) - 1
	}
	return ring.LevelInfo
}
