package stream

import (
	"bytes"
	"strings"
	"testing"
)

// The expected targets are HAProxy 2.6.12's (regtests/vtc/rules/normalize_uri_*.vtc
// run on it), its quirks included: a query found in the authority, an
// empty parameter kept, a trailing one dropped.
func TestNormalizeTarget(t *testing.T) {
	for _, c := range []struct {
		n       normalizer
		in, out string
		ok      bool
	}{
		{normMergeSlashes, "//a///b//", "/a/b/", true},
		{normMergeSlashes, "/a//b?x//y&z=//", "/a/b?x//y&z=//", true},
		{normMergeSlashes, "http://host//a/./b/../c?b&a#f", "http://host/a/./b/../c?b&a#f", true},
		{normMergeSlashes, "*", "*", true},
		{normStripDot, "/./a/./b/.", "/a/b/", true},
		{normStripDot, "/.", "/", true},
		{normStripDot, "/a/.b/..c/.../", "/a/.b/..c/.../", true},
		{normStripDot, "/a/./../b", "/a/../b", true},
		{normStripDotdot, "/a/b/..", "/a/", true},
		{normStripDotdot, "/..", "/../", true},
		{normStripDotdot, "/../..", "/../../", true},
		{normStripDotdot, "/a/../../b", "/../b", true},
		{normStripDotdot, "/a/..//b", "//b", true},
		{normStripDotdot, "/a/b/../../../c/", "/../c/", true},
		{normStripDotdot, "/a/b/c/../../d?x=/../", "/a/d?x=/../", true},
		{normStripDotdot, "//..", "/", true},
		{normStripDotdot, "http://u@h/a/../b", "http://u@h/b", true},
		{normStripDotdot, "a/../b", "a/../b", true},
		{normStripDotdotFull, "/../..", "/", true},
		{normStripDotdotFull, "/a/../../b", "/b", true},
		{normStripDotdotFull, "/a/b/../../../c/", "/c/", true},
		{normQuerySort, "/?", "/?", true},
		{normQuerySort, "/x?a&&b", "/x?&a&b", true},
		{normQuerySort, "/x?a&", "/x?a", true},
		{normQuerySort, "/?b=2&a=1&b=1&a", "/?a=1&a&b=2&b=1", true},
		{normQuerySort, "/?%41=1&a=2&A=3", "/?%41=1&A=3&a=2", true},
		{normQuerySort, "/?ab&a=1&a&aa", "/?a=1&a&aa&ab", true},
		{normQuerySort, "/x?b#f&a", "/x?a&b#f", true},
		{normQuerySort, "host:80", "host:80", true},
		{normQuerySort, "http://a?b/c", "http://a?", true},
		{normQuerySort, "http://a?b/c?z&y", "http://a?y&z", true},
		{normQuerySort, "https://h:1/x/?c=3&b&a=1#z", "https://h:1/x/?a=1#z&b&c=3", true},
		{normPercentUpper, "/%7euser/%2Fx%2fy/%61", "/%7Euser/%2Fx%2Fy/%61", true},
		{normPercentUpper, "/%zz/%4", "/%zz/%4", true},
		{normPercentUpper, "/a?q=%7e%2f%3d", "/a?q=%7E%2F%3D", true},
		{normPercentUpper, "/%g1%1g%", "/%g1%1g%", true},
		{normPercentUpperStrict, "/%7euser/%2Fx%2fy/%61", "/%7Euser/%2Fx%2Fy/%61", true},
		{normPercentUpperStrict, "/%zz/%4", "", false},
		{normPercentUpperStrict, "/%", "", false},
		{normDecodeUnreserved, "/%c3%a9", "/%c3%a9", true},
		{normDecodeUnreserved, "/%41%5a%7e%2D%2e%5F%30", "/AZ~-._0", true},
		{normDecodeUnreserved, "/a?q=%7e%2f%3d", "/a?q=~%2f%3d", true},
		{normDecodeUnreserved, "/%%41", "/%A", true},
		{normDecodeUnreserved, "HTTP://h:80/%7e/%aa", "HTTP://h:80/~/%aa", true},
		{normDecodeUnreservedStrict, "/%41%5a%7e%2D%2e%5F%30", "/AZ~-._0", true},
		{normDecodeUnreservedStrict, "/%%41", "", false},
		{normFragmentStrip, "/a#b#c", "/a", true},
		{normFragmentStrip, "/#", "/", true},
		{normFragmentStrip, "/a?x#y?z", "/a?x", true},
		{normFragmentEncode, "/a#b#c", "/a%23b%23c", true},
		{normFragmentEncode, "/a?q#f", "/a?q%23f", true},
		{normFragmentEncode, "/#", "/%23", true},
	} {
		_, out, ok := normalizeTarget(nil, []byte(c.in), c.n)
		if ok != c.ok || ok && string(out) != c.out {
			t.Errorf("normalizer %d on %q: %q, %v; want %q, %v", c.n, c.in, out, ok, c.out, c.ok)
		}
	}
}

// The normalize-uri words, with HAProxy 2.6's messages (haproxy -c).
func TestCompileNormalize(t *testing.T) {
	for _, c := range []struct {
		args string
		n    normalizer
		msg  string
	}{
		{"", 0, "missing argument <normalizer>"},
		{"foo", 0, "unknown normalizer 'foo'"},
		{"path-strip-dotdot foo", 0, "unknown argument 'foo' for 'path-strip-dotdot' normalizer"},
		{"percent-to-uppercase full", 0, "unknown argument 'full' for 'percent-to-uppercase' normalizer"},
		{"percent-decode-unreserved y", 0, "unknown argument 'y' for 'percent-decode-unreserved' normalizer"},
		{"path-strip-dotdot full", normStripDotdotFull, ""},
		{"percent-to-uppercase strict", normPercentUpperStrict, ""},
		{"percent-decode-unreserved", normDecodeUnreserved, ""},
		{"fragment-encode", normFragmentEncode, ""},
	} {
		r := &httpRule{}
		err := compileNormalize(r, strings.Fields(c.args))
		if c.msg != "" && (err == nil || err.Error() != c.msg) || c.msg == "" && (err != nil || r.norm != c.n) {
			t.Errorf("%q: %v (normalizer %d)", c.args, err, r.norm)
		}
	}
}

// No target makes a normalizer panic; each one's output keeps what
// precedes the path (but query-sort-by-name, which replaces from the
// first '?', as HAProxy's), and those that only remove bytes never grow
// it.
func FuzzNormalizeTarget(f *testing.F) {
	for _, s := range []string{"/a//b/../c/./d?b&a#f", "http://h?x/y?b&a", "/%7e%zz%", "*", "/..", "/?&&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		for n := normMergeSlashes; n <= normFragmentEncode; n++ {
			_, out, ok := normalizeTarget(nil, []byte(u), n)
			if !ok {
				continue
			}
			at, found := uriPath([]byte(u))
			if !found {
				if string(out) != u {
					t.Fatalf("normalizer %d changed %q without a path: %q", n, u, out)
				}
				continue
			}
			if n != normQuerySort && !bytes.HasPrefix(out, []byte(u[:at])) {
				t.Fatalf("normalizer %d on %q: %q lost what precedes the path", n, u, out)
			}
			if n != normFragmentEncode && n != normStripDotdot && len(out) > len(u) {
				t.Fatalf("normalizer %d grew %q to %q", n, u, out)
			}
		}
	})
}
