//go:build regtest

package proxy

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// TestDefaultsRulesAgainstHAProxy: a named defaults section's http-request
// and http-response rules run for the frontends built from it, before the
// frontend's own, as in HAProxy 2.6; a defaults section that does not name
// one starts without the previous one's rules.
func TestDefaultsRulesAgainstHAProxy(t *testing.T) {
	haproxy := bin.HAProxy(t)
	goha := bin.Path(t, "goha")
	origin := harness.NewOrigin(t, "o", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "path=%s x-order=%s", r.URL.Path, strings.Join(r.Header.Values("X-Order"), ","))
	})
	cfg := `
defaults rules
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
    http-request deny if { path_beg /admin }
    http-request add-header X-Order defaults
    http-response add-header X-Resp defaults

defaults plain
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s

frontend with from rules
    bind "fd@${WITH}"
    http-request add-header X-Order frontend
    http-response add-header X-Resp frontend
    default_backend b

frontend without from plain
    bind "fd@${WITHOUT}"
    default_backend b

backend b from plain
    server s1 ` + origin.Addr + `
`
	run := func(prog string) map[string]string {
		p := harness.Start(t, prog, cfg, "WITH", "WITHOUT")
		out := map[string]string{}
		for _, fe := range []string{"WITH", "WITHOUT"} {
			harness.WaitListening(t, p.Addrs[fe], harness.Patience)
			for _, path := range []string{"/", "/admin/x"} {
				resp := harness.RawRequest(t, p.Addrs[fe], "GET "+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5*time.Second)
				head, body, _ := strings.Cut(resp, "\r\n\r\n")
				status, _, _ := strings.Cut(head, "\r\n")
				var xr []string
				for _, l := range strings.Split(head, "\r\n") {
					if k, v, ok := strings.Cut(l, ": "); ok && strings.EqualFold(k, "X-Resp") {
						xr = append(xr, v)
					}
				}
				if !strings.HasPrefix(status, "HTTP/1.1 200") {
					body = ""
				}
				out[fe+" "+path] = status + " | x-resp=" + strings.Join(xr, ",") + " | " + body
			}
		}
		return out
	}
	want, got := run(haproxy), run(goha)
	if !strings.Contains(want["WITH /admin/x"], " 403 ") || !strings.Contains(want["WITH /"], "x-order=defaults,frontend") {
		t.Fatalf("HAProxy did not run the defaults rules as this test expects: %q", want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: goha %q, HAProxy %q", k, got[k], w)
		}
	}
}
