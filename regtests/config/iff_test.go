package config

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// iffConfig lets through the sources a rule's condition names and denies
// everyone else; rule is the allow line, line 9 of the file.
func iffConfig(rule, origin string) string {
	return fmt.Sprintf(`defaults
    mode http
    timeout client 5s
    timeout server 5s
    timeout connect 5s
frontend fe
    bind "fd@${fe}"
    default_backend be
    %s
    http-request deny
backend be
    server s1 %s
`, rule, origin)
}

// A misspelt "if" once dropped the condition: the allow rule let every
// client through and the deny after it never ran. goha must refuse to
// start, as HAProxy does, rather than answer 200.
func TestAllowIffRefusesToStart(t *testing.T) {
	o := harness.NewOrigin(t, "origin", nil)
	p := harness.Start(t, bin.Path(t, "goha"), iffConfig("http-request allow iff { src 127.0.0.0/8 }", o.Addr), "fe")
	deadline := time.Now().Add(20 * time.Second)
	for !p.Exited() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !p.Exited() {
		c := &http.Client{Timeout: 5 * time.Second}
		resp, err := c.Get("http://" + p.Addrs["fe"] + "/")
		if err == nil {
			resp.Body.Close()
			t.Fatalf("goha started and answered %d:\n%s", resp.StatusCode, p.Output())
		}
		t.Fatalf("goha is still running:\n%s", p.Output())
	}
	out := p.Output()
	want := "test.cfg:9]: 'http-request allow' expects either 'if' or 'unless' followed by a condition but found 'iff'."
	if !strings.Contains(out, "[ALERT]") || !strings.Contains(out, want) {
		t.Fatalf("goha exited without the alert %q:\n%s", want, out)
	}
	if o.Reqs.Load() != 0 {
		t.Fatalf("the origin served %d requests", o.Reqs.Load())
	}
}

// With "if" spelt right, the condition decides, in goha as in HAProxy.
func TestAllowIfKeepsCondition(t *testing.T) {
	o := harness.NewOrigin(t, "origin", nil)
	progs := map[string]string{"goha": bin.Path(t, "goha"), "haproxy": bin.HAProxy(t)}
	for _, tc := range []struct {
		src    string
		status int
	}{
		{"127.0.0.0/8", 200},
		{"10.0.0.0/8", 403},
	} {
		for name, prog := range progs {
			t.Run(name+"/"+tc.src, func(t *testing.T) {
				p := harness.Start(t, prog, iffConfig("http-request allow if { src "+tc.src+" }", o.Addr), "fe")
				harness.WaitListening(t, p.Addrs["fe"], 10*time.Second)
				c := &http.Client{Timeout: 10 * time.Second}
				defer c.CloseIdleConnections()
				if st, _ := harness.Get(t, c, p.Addrs["fe"], "/"); st != tc.status {
					t.Fatalf("client 127.0.0.1, allow if { src %s }: %d, want %d\n%s", tc.src, st, tc.status, p.Output())
				}
			})
		}
	}
}
