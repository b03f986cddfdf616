package checks

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

// TestObserveLayer7MarkDown: with observe layer7, error-limit 3 and
// on-error mark-down, an origin answering 500 to traffic (while its
// health check passes) is marked DOWN by live traffic alone.
func TestObserveLayer7MarkDown(t *testing.T) {
	evs, views := map[string]string{}, map[string]string{}
	for _, pr := range proxies(t) {
		t.Run(pr.name, func(t *testing.T) { observeMarkDown(t, pr, evs, views) })
	}
	compare(t, "state lines", evs)
	compare(t, "views", views)
}

var activeSessions = regexp.MustCompile(`\d+ sessions active`)

func observeMarkDown(t *testing.T, pr prog, evs, views map[string]string) {
	bad := harness.NewOrigin(t, "bad", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			io.WriteString(w, "ok\n")
			return
		}
		w.WriteHeader(500)
		io.WriteString(w, "bad\n")
	})
	good := newSwitchable(t, "good")
	r := start(t, pr, fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    balance roundrobin
    option httpchk GET /health
    server s1 %s check inter 2s rise 2 fall 2 observe layer7 error-limit 3 on-error mark-down
    server s2 %s check inter 2s rise 2 fall 2
`, bad.Addr, good.addr))
	r.waitView("be", "s1", 5*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L7OK" })
	m := r.hits(6)
	if m["500"] != 3 || m["good"] != 3 {
		t.Errorf("%s: before the error limit, traffic %v", pr.name, m)
	}
	down := r.waitStatus("be", "s1", "DOWN", 2*time.Second)
	r.waitEvent("Server be/s1 is DOWN", time.Second)
	if m := r.hits(6); m["good"] != 6 {
		t.Errorf("%s: s1 marked down, traffic %v", pr.name, m)
	}
	if want := `stat="DOWN"/"HANA"/""`; !strings.HasPrefix(down.String(), want) {
		t.Errorf("%s: down: %v, want %s", pr.name, down, want)
	}
	info := r.stat("be", "s1")["last_chk"]
	if want := "Detected 3 consecutive errors, last one was: Wrong http response"; info != want {
		t.Errorf("%s: last_chk %q, want %q", pr.name, info, want)
	}
	// The health check, which passes, brings it back.
	r.waitStatus("be", "s1", "UP", 8*time.Second)
	// How many sessions a stream still counts when the third error comes
	// depends on when the previous request's stream ended, on either
	// proxy: the count is left out.
	evs[pr.name] = activeSessions.ReplaceAllString(strings.Join(r.events(), "\n"), "N sessions active")
	views[pr.name] = down.String() + " / " + info
	r.p.Stop()
}
