//go:build regtest

package security

import (
	"strings"
	"testing"
)

// teFields returns the TE fields of the first request head in raw, one
// "te: value" line each: names are compared in any case, values exactly.
func teFields(raw string) []string {
	head, _, _ := strings.Cut(raw, "\r\n\r\n")
	var out []string
	for _, l := range strings.Split(head, "\r\n")[1:] {
		if name, value, ok := strings.Cut(l, ":"); ok && strings.EqualFold(strings.TrimSpace(name), "te") {
			out = append(out, "te:"+value)
		}
	}
	return out
}

// TE is hop-by-hop: the codings a client accepts in a response are its
// own business with the proxy, which re-frames the response anyway, so
// only its "trailers" token is passed on, as HAProxy does.
func TestTEReducedToTrailers(t *testing.T) {
	vecs := []struct {
		name, fields, version string
		want                  string // the TE fields the server receives, joined by "|"
	}{
		{"trailers-gzip", "TE: trailers, gzip\r\n", "1.1", "te: trailers"},
		{"gzip", "TE: gzip\r\n", "1.1", ""},
		{"trailers-param", "TE: trailers;q=0.5\r\n", "1.1", ""},
		{"gzip-trailers", "TE: gzip;q=0.3, trailers\r\n", "1.1", "te: trailers"},
		{"upper", "TE: TRAILERS\r\n", "1.1", ""},
		{"mixed", "TE: Trailers, gzip\r\n", "1.1", ""},
		{"twice", "TE: trailers\r\nTE: trailers\r\n", "1.1", "te: trailers|te: trailers"},
		{"blanks", "TE:  gzip ,  trailers  \r\n", "1.1", "te: trailers"},
		{"two-fields", "TE: gzip\r\nTE: trailers\r\n", "1.1", "te: trailers"},
		{"only-trailers", "TE: trailers\r\n", "1.1", "te: trailers"},
		{"empty", "TE: \r\n", "1.1", ""},
		{"http10", "TE: trailers, deflate\r\n", "1.0", "te: trailers"},
	}
	each(t, baseCfg, recordOrigin, func(t *testing.T, addr string, o *origin) {
		for _, v := range vecs {
			cl := dial(t, addr)
			cl.send("GET /c HTTP/" + v.version + "\r\nHost: a\r\n" + v.fields + "Connection: close\r\n\r\n")
			st, _ := cl.response()
			cl.c.Close()
			if st != 200 {
				t.Errorf("%s: %d, want 200", v.name, st)
				continue
			}
			got := strings.Join(teFields(o.received(o.numConns())), "|")
			if got != v.want {
				t.Errorf("%s: the server received TE %q, want %q", v.name, got, v.want)
			}
		}
	})
}
