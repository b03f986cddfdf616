//go:build regtest

package proxy

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

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
	cases := []headerCase{
		{"plain", "option originalto", ""},
		{"except-dst", "option originalto except 127.0.0.0/8", ""},
		{"except-other", "option originalto except 10.0.0.0/8", ""},
		{"header", "option originalto header X-Dst", ""},
		{"backend-header-wins", "option originalto header X-Dst", "option originalto header X-Be"},
		{"backend-except", "option originalto", "option originalto except 127.0.0.1"},
		{"backend-only", "", "option originalto"},
		{"with-forwardfor", "option forwardfor\n    option originalto", ""},
	}
	want, got := headerCases(t, haproxy, goha, origin.Addr, cases, []headerRequest{
		{"bare", ""},
		{"has-header", "X-Original-To: 192.0.2.1\r\n"},
	})
	if !strings.Contains(want["plain/bare"], "x-original-to=127.0.0.1") {
		t.Fatalf("HAProxy did not add the header as this test expects: %q", want["plain/bare"])
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: goha forwarded %q, HAProxy %q", k, got[k], w)
		}
	}
}
