package check

import (
	"strings"
)

// AgentReply is one parsed agent-check reply line. Words may come in any
// order, separated by spaces, tabs or commas; when a category repeats, the
// last word wins. Texts keep the case the agent sent.
type AgentReply struct {
	Health  string // "up", "down", "stopped" or "fail"; "" if none
	Admin   string // "ready", "drain" or "maint"; "" if none
	Weight  string // the last "<n>%" word, e.g. "75%"
	Maxconn string // the value of the last "maxconn:<n>" word
	Err     string // the first word that was not understood
	Desc    string // the text after '#'
}

// ParseAgentReply parses the first line of an agent's answer. It reports
// false when no line end (CR or LF) arrived yet; a NUL byte before the
// line end also makes the line incomplete, as in HAProxy.
func ParseAgentReply(b []byte) (AgentReply, bool) {
	end := -1
	for i, c := range b {
		if c == 0 {
			return AgentReply{}, false
		}
		if c == '\n' || c == '\r' {
			end = i
			break
		}
	}
	if end < 0 {
		return AgentReply{}, false
	}
	line := string(b[:end])
	var r AgentReply
	i := 0
	for i < len(line) {
		c := line[i]
		if c == ' ' || c == '\t' || c == ',' {
			i++
			continue
		}
		if c == '#' {
			r.Desc = strings.TrimLeft(line[i+1:], " \t")
			break
		}
		j := i + 1
		for j < len(line) && line[j] != ' ' && line[j] != '\t' && line[j] != ',' {
			j++
		}
		w := line[i:j]
		i = j
		lw := strings.ToLower(w)
		switch {
		case lw == "up" || lw == "down" || lw == "stopped" || lw == "fail":
			r.Health = w
		case lw == "ready" || lw == "drain" || lw == "maint":
			r.Admin = w
		case w[0] >= '0' && w[0] <= '9' && strings.IndexByte(w, '%') >= 0:
			r.Weight = w
		case strings.HasPrefix(lw, "maxconn:"):
			r.Maxconn = w[len("maxconn:"):]
		default:
			if r.Err == "" {
				r.Err = w
			}
		}
	}
	return r, true
}

// HealthUp reports whether the reply forces the agent's health to fully up.
func (r *AgentReply) HealthUp() bool { return strings.EqualFold(r.Health, "up") }

// HealthDown reports whether the reply forces the agent's health to 0
// ("down", "stopped" or "fail").
func (r *AgentReply) HealthDown() bool { return r.Health != "" && !r.HealthUp() }

// AgentStatus computes the status and info HAProxy reports for an agent
// reply. warning is the first message returned while applying the weight or
// maxconn the agent asked for ("" if none).
func AgentStatus(r *AgentReply, warning string) (Status, string) {
	st := StatusChecked
	switch {
	case r.HealthUp():
		st = StatusL7OK
	case r.HealthDown():
		st = StatusL7Sts
	}
	if r.Health != "" {
		msg := r.Desc
		if msg == "" || st == StatusL7OK {
			if r.Err != "" {
				msg = r.Err
			} else if warning != "" {
				msg = warning
			}
		}
		desc := "via agent : " + r.Health
		if msg != "" {
			desc += " (" + msg + ")"
		}
		return st, desc
	}
	if r.Err != "" {
		return st, "agent reports an error : " + r.Err
	}
	if warning != "" {
		return st, "agent warns : " + warning
	}
	return st, ""
}

// agentExpect is the custom expect of the "*agent-check" ruleset.
func agentExpect(p *probe, r *Rule, lastRead bool) evalRet {
	rep, ok := ParseAgentReply(p.in)
	if !ok {
		if !lastRead {
			return evalWait
		}
		// An agent that closes after an incomplete line is reported by
		// HAProxy 2.6 as a layer-7 timeout without info (observed); as
		// for any agent failure below L7STS, the health is unchanged.
		p.setStatus(StatusL7TOut, "")
		return evalStop
	}
	p.agentRep = &rep
	p.out.Agent = &rep
	st, desc := AgentStatus(&rep, "")
	p.setStatus(st, desc)
	return evalStop
}
