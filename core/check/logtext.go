package check

import (
	"fmt"
	"strings"
	"time"
)

// StateEvent is a server state transition that HAProxy logs.
type StateEvent uint8

const (
	EventDown     StateEvent = iota // "Server be/s is DOWN"
	EventUp                         // "Server be/s is UP"
	EventStopping                   // "Server be/s is stopping"
)

// Reason says why a server changed state, as srv_append_status prints it:
// a check result, else a free text, else the tracked server.
type Reason struct {
	// Check is the check result that caused the change, nil if none.
	Check *Outcome
	// Text is a plain reason ("changed from CLI"), used when Check is nil.
	Text string
	// Via is the tracked "backend/server", used when Check and Text are empty.
	Via string
}

// Counts are the numbers core knows at the time of the transition.
type Counts struct {
	Active   int // usable active servers left in the backend
	Backup   int // usable backup servers
	Sessions int // current sessions on the server (DOWN form)
	Xferred  int // sessions requeued (DOWN) or taken from the backend queue (UP)
	Queue    int // server queue length
}

// asciiEncode quotes a description as HAProxy's chunk_asciiencode: bytes
// that are not printable ASCII, '<', '>' and the quote become "<HH>".
func asciiEncode(b *strings.Builder, s string, q byte) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '<' || c == '>' || c == q {
			fmt.Fprintf(b, "<%02X>", c)
			continue
		}
		b.WriteByte(c)
	}
}

func appendCheckStatus(b *strings.Builder, o *Outcome) {
	fmt.Fprintf(b, ", reason: %s", o.Status.Desc())
	if o.Status.HasCode() {
		fmt.Fprintf(b, ", code: %d", o.Code)
	}
	if o.Desc != "" {
		b.WriteString(`, info: "`)
		asciiEncode(b, o.Desc, '"')
		b.WriteByte('"')
	}
	if o.Duration >= 0 {
		fmt.Fprintf(b, ", check duration: %dms", o.Duration/time.Millisecond)
	}
}

// StateChangeText returns the log line of a server state change, without
// the trailing newline, e.g.
//
//	Server be/s1 is DOWN, reason: Layer4 connection problem, info: "Connection refused", check duration: 0ms. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.
//
// HAProxy prints it as a WARNING on stderr and logs it at ALERT (DOWN from
// a running server), NOTICE (DOWN from stopping/drain, UP, stopping).
func StateChangeText(ev StateEvent, backup bool, backend, server string, why Reason, n Counts) string {
	var b strings.Builder
	if backup {
		b.WriteString("Backup ")
	}
	fmt.Fprintf(&b, "Server %s/%s ", backend, server)
	switch ev {
	case EventDown:
		b.WriteString("is DOWN")
	case EventUp:
		b.WriteString("is UP")
	default:
		b.WriteString("is stopping")
	}
	switch {
	case why.Check != nil:
		appendCheckStatus(&b, why.Check)
	case why.Text != "":
		fmt.Fprintf(&b, ", %s", why.Text)
	case why.Via != "":
		fmt.Fprintf(&b, " via %s", why.Via)
	}
	onBackup := ""
	if n.Backup > 0 && n.Active == 0 {
		onBackup = " Running on backup."
	}
	if ev == EventDown {
		fmt.Fprintf(&b, ". %d active and %d backup servers left.%s %d sessions active, %d requeued, %d remaining in queue.",
			n.Active, n.Backup, onBackup, n.Sessions, n.Xferred, n.Queue)
	} else {
		fmt.Fprintf(&b, ". %d active and %d backup servers online.%s %d sessions requeued, %d total in queue.",
			n.Active, n.Backup, onBackup, n.Xferred, n.Queue)
	}
	return b.String()
}

// CheckLogText returns the "option log-health-checks" line, e.g.
//
//	Health check for server be/s1 failed, reason: Layer4 connection problem, info: "Connection refused", check duration: 2ms, status: 0/2 DOWN.
//
// It is due when Report.Logged is true. drained is true when the server's
// user weight is 0 (the state then reads DRAIN instead of UP).
func CheckLogText(r *Report, backup bool, backend, server string, drained bool) string {
	var b strings.Builder
	if r.Agent {
		b.WriteString("Agent")
	} else {
		b.WriteString("Health")
	}
	b.WriteString(" check for ")
	if backup {
		b.WriteString("backup ")
	}
	fmt.Fprintf(&b, "server %s/%s ", backend, server)
	res := r.Outcome.Status.Result()
	if res == ResultCondPass {
		b.WriteString("conditionally ")
	}
	if res >= ResultPassed {
		b.WriteString("succeeded")
	} else {
		b.WriteString("failed")
	}
	o := r.Outcome
	appendCheckStatus(&b, &o)
	if r.Health >= r.Rise {
		st := "UP"
		if drained {
			st = "DRAIN"
		}
		fmt.Fprintf(&b, ", status: %d/%d %s.", r.Health-r.Rise+1, r.Fall, st)
	} else {
		fmt.Fprintf(&b, ", status: %d/%d DOWN.", r.Health, r.Rise)
	}
	return b.String()
}

// NoServerText is the alert printed when a backend loses its last server
// ("backend 'be' has no server available!"); the syslog form has no quotes
// ("backend be has no server available!").
func NoServerText(kind, backend string, syslog bool) string {
	if syslog {
		return fmt.Sprintf("%s %s has no server available!", kind, backend)
	}
	return fmt.Sprintf("%s '%s' has no server available!", kind, backend)
}

// StatusColumn returns the `show stat` status text of a server that is not
// in maintenance: "UP", "UP 1/3", "DRAIN", "DRAIN (agent)", "NOLB 1/3",
// "DOWN", "DOWN 1/2", "DOWN (agent)" or "no check". health, rise and fall
// are the health check's (or the tracked server's); agentHealth is the
// agent's.
func StatusColumn(op OpState, drain, checkEnabled bool, health, rise, fall int, agentEnabled bool, agentHealth int) string {
	goingDown := checkEnabled && health < rise+fall-1
	switch op {
	case OpRunning, OpStarting:
		switch {
		case drain && agentEnabled:
			return "DRAIN (agent)"
		case drain && goingDown:
			return fmt.Sprintf("DRAIN %d/%d", health-rise+1, fall)
		case drain:
			return "DRAIN"
		case goingDown:
			return fmt.Sprintf("UP %d/%d", health-rise+1, fall)
		case !checkEnabled:
			return "no check"
		}
		return "UP"
	case OpStopping:
		if !checkEnabled || health == rise+fall-1 {
			return "NOLB"
		}
		return fmt.Sprintf("NOLB %d/%d", health-rise+1, fall)
	}
	switch {
	case agentEnabled && agentHealth == 0:
		return "DOWN (agent)"
	case checkEnabled && health == 0:
		return "DOWN"
	case agentEnabled || checkEnabled:
		return fmt.Sprintf("DOWN %d/%d", health, rise)
	}
	return "DOWN"
}

// StateHeader builds the X-Haproxy-Server-State value of "http-check
// send-state", e.g. "UP 2/3; address=10.0.0.1; port=80; name=be/s1;
// node=host; weight=1/2; scur=0/0; qcur=0". throttle is the slowstart
// percentage, or 0 when not ramping up.
func StateHeader(op OpState, checked bool, health, rise, fall int, addr string, port int, backend, server, node string,
	weight, totWeight, scur, beConn, qcur, throttle int) string {
	var b strings.Builder
	switch {
	case !checked:
		b.WriteString("no check")
	case op != OpStopped:
		up := health == rise+fall-1
		name := "UP"
		if op == OpStopping {
			name = "NOLB"
		}
		if up {
			b.WriteString(name)
		} else {
			fmt.Fprintf(&b, "%s %d/%d", name, health-rise+1, fall)
		}
	case health != 0:
		fmt.Fprintf(&b, "DOWN %d/%d", health, rise)
	default:
		b.WriteString("DOWN")
	}
	ps := ""
	if port > 0 {
		ps = fmt.Sprint(port)
	}
	fmt.Fprintf(&b, "; address=%s; port=%s; name=%s/%s; node=%s; weight=%d/%d; scur=%d/%d; qcur=%d",
		addr, ps, backend, server, node, weight, totWeight, scur, beConn, qcur)
	if throttle > 0 {
		fmt.Fprintf(&b, "; throttle=%d%%", throttle)
	}
	return b.String()
}
