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

// TestOriginalToAgainstHAProxy: option originalto adds the address the
// client connected to, under the backend's header name else the
// frontend's, unless that address is in an except network, as HAProxy 2.6
// does; a header the request already carries does not stop it.
func TestOriginalToAgainstHAProxy(t *testing.T) {
	haproxy := bin.HAProxy(t)
	goha := bin.Path(t, "goha")
	origin := harness.NewOrigin(t, "o", func(w http.ResponseWriter, r *http.Request) {
		var got []string
		for _, name := range []string{"X-Original-To", "X-Dst", "X-Be", "X-Forwarded-For"} {
			for _, v := range r.Header.Values(name) {
				got = append(got, strings.ToLower(name)+"="+v)
			}
		}
		fmt.Fprint(w, strings.Join(got, ";"))
	})
	cases := []struct{ name, fe, be string }{
		{"plain", "option originalto", ""},
		{"except-dst", "option originalto except 127.0.0.0/8", ""},
		{"except-other", "option originalto except 10.0.0.0/8", ""},
		{"header", "option originalto header X-Dst", ""},
		{"backend-header-wins", "option originalto header X-Dst", "option originalto header X-Be"},
		{"backend-except", "option originalto", "option originalto except 127.0.0.1"},
		{"backend-only", "", "option originalto"},
		{"with-forwardfor", "option forwardfor\n    option originalto", ""},
	}
	var b strings.Builder
	b.WriteString("defaults\n    mode http\n    timeout connect 2s\n    timeout client 5s\n    timeout server 5s\n")
	var names []string
	for _, c := range cases {
		fmt.Fprintf(&b, "frontend f-%s\n    bind \"fd@${%s}\"\n    %s\n    default_backend b-%s\n", c.name, env(c.name), c.fe, c.name)
		fmt.Fprintf(&b, "backend b-%s\n    %s\n    server s1 %s\n", c.name, c.be, origin.Addr)
		names = append(names, env(c.name))
	}
	cfg := b.String()
	run := func(prog string) map[string]string {
		p := harness.Start(t, prog, cfg, names...)
		out := map[string]string{}
		for _, c := range cases {
			harness.WaitListening(t, p.Addrs[env(c.name)], harness.Patience)
			for _, req := range []struct{ tag, extra string }{
				{"bare", ""},
				{"has-header", "X-Original-To: 192.0.2.1\r\n"},
			} {
				resp := harness.RawRequest(t, p.Addrs[env(c.name)],
					"GET / HTTP/1.1\r\nHost: x\r\n"+req.extra+"Connection: close\r\n\r\n", 5*time.Second)
				_, body, _ := strings.Cut(resp, "\r\n\r\n")
				out[c.name+"/"+req.tag] = body
			}
		}
		return out
	}
	want := run(haproxy)
	if !strings.Contains(want["plain/bare"], "x-original-to=127.0.0.1") {
		t.Fatalf("HAProxy did not add the header as this test expects: %q", want["plain/bare"])
	}
	got := run(goha)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: goha forwarded %q, HAProxy %q", k, got[k], w)
		}
	}
}
