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

// TestForwardForAgainstHAProxy: option forwardfor's except, header and
// if-none decide whether the header is added, and under which name, as in
// HAProxy 2.6, for a client inside and outside the except network and for
// a request that already carries the header.
func TestForwardForAgainstHAProxy(t *testing.T) {
	haproxy := bin.HAProxy(t)
	goha := bin.Path(t, "goha")
	// The origin answers with every forwarded-for field it received.
	origin := harness.NewOrigin(t, "o", func(w http.ResponseWriter, r *http.Request) {
		var got []string
		for _, name := range []string{"X-Forwarded-For", "X-Client", "X-Be"} {
			for _, v := range r.Header.Values(name) {
				got = append(got, strings.ToLower(name)+"="+v)
			}
		}
		fmt.Fprint(w, strings.Join(got, ";"))
	})
	cases := []headerCase{
		{"plain", "option forwardfor", ""},
		{"except-client", "option forwardfor except 127.0.0.0/8", ""},
		{"except-other", "option forwardfor except 10.0.0.0/8", ""},
		{"except-host", "option forwardfor except 127.0.0.1", ""},
		{"header", "option forwardfor header X-Client", ""},
		{"if-none", "option forwardfor if-none", ""},
		{"if-none-header", "option forwardfor header X-Client if-none", ""},
		{"backend-header-wins", "option forwardfor header X-Client", "option forwardfor header X-Be"},
		{"backend-except", "option forwardfor", "option forwardfor except 127.0.0.0/8"},
		{"one-if-none", "option forwardfor if-none", "option forwardfor"},
		{"both-if-none", "option forwardfor if-none", "option forwardfor if-none"},
		{"backend-only", "", "option forwardfor"},
	}
	want, got := headerCases(t, haproxy, goha, origin.Addr, cases, []headerRequest{
		{"bare", ""},
		{"has-xff", "X-Forwarded-For: 192.0.2.1\r\n"},
		{"has-client", "X-Client: 192.0.2.2\r\n"},
	})
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: goha forwarded %q, HAProxy %q", k, got[k], w)
		}
	}
}

// headerCase is a frontend and its backend, with the lines each adds.
type headerCase struct{ name, fe, be string }

// headerRequest is a request variant: a tag and the header lines it adds.
type headerRequest struct{ tag, extra string }

// headerCases runs every case as one frontend and backend pair on HAProxy,
// then on goha, sends each request variant through it to origin and
// returns what the origin answered, by "case/tag".
func headerCases(t *testing.T, haproxy, goha, origin string, cases []headerCase, reqs []headerRequest) (want, got map[string]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("defaults\n    mode http\n    timeout connect 2s\n    timeout client 5s\n    timeout server 5s\n")
	var names []string
	for _, c := range cases {
		fmt.Fprintf(&b, "frontend f-%s\n    bind \"fd@${%s}\"\n    %s\n    default_backend b-%s\n", c.name, env(c.name), c.fe, c.name)
		fmt.Fprintf(&b, "backend b-%s\n    %s\n    server s1 %s\n", c.name, c.be, origin)
		names = append(names, env(c.name))
	}
	cfg := b.String()
	run := func(prog string) map[string]string {
		p := harness.Start(t, prog, cfg, names...)
		out := map[string]string{}
		for _, c := range cases {
			harness.WaitListening(t, p.Addrs[env(c.name)], harness.Patience)
			for _, req := range reqs {
				resp := harness.RawRequest(t, p.Addrs[env(c.name)],
					"GET / HTTP/1.1\r\nHost: x\r\n"+req.extra+"Connection: close\r\n\r\n", 5*time.Second)
				_, body, _ := strings.Cut(resp, "\r\n\r\n")
				out[c.name+"/"+req.tag] = body
			}
		}
		return out
	}
	return run(haproxy), run(goha)
}

func env(name string) string { return strings.ReplaceAll(name, "-", "_") }
