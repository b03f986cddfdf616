package checks

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAgentReplies: an agent answering weights, admin states, health and
// maxconn; after each reply, the weight, state and maxconn shown in show
// stat and show servers state are HAProxy's.
func TestAgentReplies(t *testing.T) {
	steps := []struct {
		reply string
		what  string
		until func(m map[string]string) bool
	}{
		{"75%", "weight 75", func(m map[string]string) bool { return m["weight"] == "75" }},
		{"drain", "DRAIN", func(m map[string]string) bool { return strings.HasPrefix(m["status"], "DRAIN") }},
		{"ready 100%", "UP at weight 100", func(m map[string]string) bool { return m["status"] == "UP" && m["weight"] == "100" }},
		{"down", "DOWN (agent)", func(m map[string]string) bool { return m["status"] == "DOWN (agent)" }},
		{"up", "UP", func(m map[string]string) bool { return m["status"] == "UP" }},
		{"maxconn:10", "maxconn 10", func(m map[string]string) bool { return m["slim"] == "10" }},
		{"maint", "MAINT", func(m map[string]string) bool { return m["status"] == "MAINT" }},
	}
	got, evs := map[string]string{}, map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		s2 := newSwitchable(t, "s2")
		agent := newResponder(t, always("up\n"))
		agent.greet.Store(true)
		r := start(t, pr, fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    server s1 %s weight 100 check inter 500 rise 1 fall 1 agent-check agent-port %s agent-inter 100
    server s2 %s weight 100
`, s1.addr, port(agent.addr), s2.addr))
		r.waitStatus("be", "s1", "UP", 3*time.Second)
		var seen []string
		for _, st := range steps {
			agent.set(always(st.reply + "\n"))
			deadline := time.Now().Add(3 * time.Second)
			for {
				m := r.stat("be", "s1")
				if st.until(m) {
					state := r.state("be", "s1")
					if st.reply == "maint" {
						// The agent state column in maintenance is
						// TestAgentRunsInMaint's.
						state = state[:strings.LastIndexByte(state, ' ')]
					}
					// agent_status is left out: whether the reply
					// seen moved the agent's health (L7OK/L7STS) or
					// repeated it (CHECKED) depends on timing.
					line := fmt.Sprintf("%s: status=%q weight=%s slim=%q state=%q",
						st.reply, m["status"], m["weight"], m["slim"], state)
					seen = append(seen, line)
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: agent reply %q: waited for %s, have status=%q weight=%q slim=%q\n%s",
						pr.name, st.reply, st.what, m["status"], m["weight"], m["slim"], r.p.Output())
				}
				time.Sleep(25 * time.Millisecond)
			}
			switch st.reply {
			case "drain":
				if m := r.hits(6); m["s2"] != 6 {
					t.Errorf("%s: s1 draining, traffic %v", pr.name, m)
				}
			case "down", "maint":
				if m := r.hits(6); m["s2"] != 6 {
					t.Errorf("%s: s1 %s, traffic %v", pr.name, st.reply, m)
				}
			}
		}
		// In maintenance the agent is paused; the operator brings the
		// server back.
		agent.set(always("up\n"))
		r.cli("set server be/s1 state ready")
		v := r.waitStatus("be", "s1", "UP", 3*time.Second)
		seen = append(seen, "ready: "+v.String())
		got[pr.name] = strings.Join(seen, "\n")
		// Lines of the admin state changes (drain, maintenance) are
		// TestAdminStateLines'; the agent's health changes are compared.
		var lines []string
		for _, e := range r.events() {
			if strings.Contains(e, ", reason: ") {
				lines = append(lines, e)
			}
		}
		if len(lines) != 2 {
			t.Errorf("%s: agent down/up lines: %q", pr.name, lines)
		}
		evs[pr.name] = strings.Join(lines, "\n")
		r.p.Stop()
	}
	compare(t, "agent steps", got)
	compare(t, "state lines", evs)
}

// TestAgentRunsInMaint: maintenance pauses the health check but not the
// agent (HAProxy 2.6 keeps probing it, and show servers state shows its
// state without the paused bit, 22).
func TestAgentRunsInMaint(t *testing.T) {
	for _, pr := range proxies(t) {
		t.Run(pr.name, func(t *testing.T) { agentRunsInMaint(t, pr) })
	}
}

func agentRunsInMaint(t *testing.T, pr prog) {
	s1 := newSwitchable(t, "s1")
	agent := newResponder(t, always("up\n"))
	agent.greet.Store(true)
	r := start(t, pr, fmt.Sprintf(`
backend be
    server s1 %s weight 100 check inter 500 rise 1 fall 1 agent-check agent-port %s agent-inter 100
`, s1.addr, port(agent.addr)))
	r.waitStatus("be", "s1", "UP", 3*time.Second)
	r.cli("set server be/s1 state maint")
	v := r.waitStatus("be", "s1", "MAINT", 3*time.Second)
	if f := strings.Fields(v.State); f[6] != "14" || f[7] != "22" {
		t.Errorf("check/agent state in maintenance %s/%s, want 14/22", f[6], f[7])
	}
	n := agent.conns.Load()
	deadline := time.Now().Add(3 * time.Second)
	for agent.conns.Load() < n+2 {
		if time.Now().After(deadline) {
			t.Fatal("the agent is not probed in maintenance")
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestDisableEnableAgent: with the agent disabled, its "down" no longer
// keeps the server down; enabled again, it does.
func TestDisableEnableAgent(t *testing.T) {
	got := map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		agent := newResponder(t, always("down\n"))
		agent.greet.Store(true)
		r := start(t, pr, fmt.Sprintf(`
backend be
    server s1 %s check inter 200 rise 1 fall 1 agent-check agent-port %s agent-inter 200
`, s1.addr, port(agent.addr)))
		var seen []string
		see := func(what string, v view) { seen = append(seen, what+": "+v.String()) }
		see("agent down", r.waitStatus("be", "s1", "DOWN (agent)", 3*time.Second))
		if out := r.cli("disable agent be/s1"); strings.TrimSpace(out) != "" {
			t.Errorf("%s: disable agent: %q", pr.name, out)
		}
		see("agent disabled", r.waitStatus("be", "s1", "UP", 3*time.Second))
		r.cli("enable agent be/s1")
		see("agent enabled", r.waitStatus("be", "s1", "DOWN (agent)", 3*time.Second))
		got[pr.name] = strings.Join(seen, "\n")
		r.p.Stop()
	}
	compare(t, "views", got)
}
