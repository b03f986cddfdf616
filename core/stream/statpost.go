package stream

import (
	"bytes"

	"goha/core"
)

// The stats page's admin form: `b=<backend>&s=<server>&...&action=<verb>`,
// read as HAProxy's stats_process_http_post reads it. Parameters are read
// from the last one back: the last b and the last action count; the
// servers named before both are known are handled once they are.

// formParam is one parameter of the form, decoded.
type formParam struct {
	key, value string
	tooLong    bool // longer than HAProxy's line: the form is refused
	bad        bool // an invalid %-escape: HAProxy stops reading there
}

// maxFormParam is the longest parameter HAProxy reads (its LINESIZE,
// the terminating NUL included).
const maxFormParam = 2048 - 1

// parseStatsForm splits body into its parameters, last first.
func parseStatsForm(body []byte) []formParam {
	if len(body) == 0 {
		return nil
	}
	parts := bytes.Split(body, []byte("&"))
	out := make([]formParam, 0, len(parts))
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		if len(p) > maxFormParam {
			out = append(out, formParam{tooLong: true})
			continue
		}
		k, v, _ := bytes.Cut(p, []byte("="))
		key, ok1 := formDecode(k)
		val, ok2 := formDecode(v)
		out = append(out, formParam{key: key, value: val, bad: !ok1 || !ok2})
	}
	return out
}

// formDecode decodes a form field: '+' is a space, %XX a byte; false for
// a bad escape. A decoded NUL ends the text, as in C.
func formDecode(b []byte) (string, bool) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '+':
			out = append(out, ' ')
		case '%':
			if i+2 >= len(b) {
				return "", false
			}
			if !isHex(b[i+1]) || !isHex(b[i+2]) {
				return "", false
			}
			out = append(out, unhex(b[i+1])<<4|unhex(b[i+2]))
			i += 2
		default:
			out = append(out, c)
		}
	}
	if i := bytes.IndexByte(out, 0); i >= 0 {
		out = out[:i]
	}
	return string(out), true
}

// statsActions are the form's action values.
var statsActions = map[string]bool{
	"ready": true, "drain": true, "maint": true, "shutdown": true,
	"dhlth": true, "ehlth": true, "hrunn": true, "hnolb": true, "hdown": true,
	"dagent": true, "eagent": true, "arunn": true, "adown": true,
	"disable": true, "enable": true, "stop": true, "start": true,
}

// webReason is the cause state changes from the page report.
const webReason = "changed from Web interface"

// statsPost applies an admin form and returns the outcome the redirect
// reports: NONE (no server named), DONE (each one changed), PART (some),
// ERRP (none, or a bad backend, action or parameter).
func (proc *Process) statsPost(body []byte) string {
	params := parseStatsForm(body)
	var px *core.Proxy
	action := ""
	firstS := -1
	total, altered := 0, 0
	for i := 0; i < len(params); i++ {
		p := &params[i]
		if p.tooLong {
			return "ERRP"
		}
		if p.bad {
			break
		}
		switch {
		case px == nil && p.key == "b":
			if px = proc.Conf.FindBackendRef(p.value); px == nil {
				return "ERRP"
			}
		case action == "" && p.key == "action":
			if !statsActions[p.value] {
				return "ERRP"
			}
			action = p.value
		case p.key == "s":
			if px == nil || action == "" {
				if firstS < 0 {
					firstS = i
				}
				break
			}
			s := px.FindServer(p.value)
			if s == nil {
				// Unknown: counted, not changed.
				total++
				break
			}
			if statsApply(s, px, action) {
				total++
				altered++
			}
		}
		if firstS >= 0 && px != nil && action != "" {
			i = firstS - 1
			firstS = -1
		}
	}
	switch {
	case total == 0:
		return "NONE"
	case altered == 0:
		return "ERRP"
	case altered == total:
		return "DONE"
	}
	return "PART"
}

// statsApply runs action on s; it says whether the action applied (an
// action that does not is not counted at all, as in HAProxy).
func statsApply(s *core.Server, px *core.Proxy, action string) bool {
	adm := s.AdminState()
	checkConf := s.CheckState.Load()&core.ChkStConfigured != 0
	agentConf := s.AgentState.Load()&core.ChkStConfigured != 0
	agentOn := s.AgentState.Load()&core.ChkStEnabled != 0
	switch action {
	case "disable":
		if adm&core.AdminFMaint != 0 {
			return false
		}
		s.SetForcedMaint(true)
	case "enable":
		if adm&core.AdminFMaint == 0 {
			return false
		}
		s.SetForcedMaint(false)
	case "stop":
		if adm&core.AdminFDrain != 0 {
			return false
		}
		s.SetForcedDrain(true)
	case "start":
		if adm&core.AdminFDrain == 0 {
			return false
		}
		s.SetForcedDrain(false)
	case "dhlth":
		if !checkConf {
			return false
		}
		s.DisableHealth()
	case "ehlth":
		if !checkConf {
			return false
		}
		s.EnableHealth()
	case "hrunn", "hnolb", "hdown":
		if s.Track != "" {
			return false
		}
		h := map[string]int{"hrunn": core.HealthUp, "hnolb": core.HealthStopping, "hdown": core.HealthDown}[action]
		s.SetHealthBy(h, webReason)
	case "dagent":
		if !agentConf {
			return false
		}
		s.DisableAgent()
	case "eagent":
		if !agentConf {
			return false
		}
		s.EnableAgent()
	case "arunn", "adown":
		if !agentOn {
			return false
		}
		s.SetAgent(action == "arunn")
	case "ready":
		s.SetReady()
	case "drain":
		s.SetDrain()
	case "maint":
		s.SetMaint()
	case "shutdown":
		if px.Disabled || px.FrontendStopped() {
			return false
		}
		s.ShutdownSessions()
	}
	return true
}
