package comp

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strings"
	"testing"
)

func choose(fields []string, algos ...Algo) (string, bool) {
	var c Choice
	for _, f := range fields {
		c.Field([]byte(f), algos)
	}
	if !c.Found {
		return "", false
	}
	return c.Algo.Name(), true
}

func TestChoice(t *testing.T) {
	// Lists as HAProxy keeps them: `compression algo gzip deflate` is
	// deflate then gzip.
	gd := []Algo{Deflate, Gzip}
	cases := []struct {
		fields []string
		algos  []Algo
		want   string // "" for none
	}{
		{[]string{"gzip"}, gd, "gzip"},
		{[]string{"GZIP"}, gd, "gzip"},
		{[]string{"br"}, gd, ""},
		{[]string{"invalid"}, []Algo{Gzip}, ""},
		{[]string{"*;q=0, gzip;q=0.750, deflate;q=0.500"}, gd, "gzip"},
		{[]string{"*;q=0, gzip;q=0.500, deflate;q=0.750"}, gd, "deflate"},
		// Equal q-values: the first element wins.
		{[]string{"gzip, deflate"}, gd, "gzip"},
		{[]string{"deflate", "gzip"}, gd, "deflate"},
		// "*" is the list's first algorithm.
		{[]string{"*"}, gd, "deflate"},
		{[]string{"gzip;q=0"}, gd, ""},
		{[]string{"gzip;q=0.001"}, gd, "gzip"},
		{[]string{"gzip ; level=1 ; q=0.2, deflate;q=0.1"}, gd, "gzip"},
		{[]string{"gzip;q=0.2", "deflate"}, gd, "deflate"},
		{[]string{"gzip;q=2"}, gd, "gzip"},
		// raw-deflate answers to deflate.
		{[]string{"deflate"}, []Algo{RawDeflate}, "raw-deflate"},
		{[]string{"identity"}, []Algo{Identity, Gzip}, "identity"},
		{[]string{""}, gd, ""},
		{[]string{`gzip;x="a,b";q=0.5, deflate;q=0.4`}, gd, "gzip"},
	}
	for _, c := range cases {
		got, ok := choose(c.fields, c.algos...)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("%q over %v: got %q (%v), want %q", c.fields, c.algos, got, ok, c.want)
		}
	}
}

func TestQValue(t *testing.T) {
	for in, want := range map[string]int{"1": 1000, "0": 0, "0.5": 500, "0.125": 125, "0.1234": 123,
		"1.000": 1000, "9": 1000, "": 1000, "x": 1000, "0.": 0, "0.x": 0} {
		if got := parseQValue([]byte(in)); got != want {
			t.Errorf("q=%q: got %d, want %d", in, got, want)
		}
	}
}

func TestBadUserAgent(t *testing.T) {
	cases := map[string]bool{
		"Mozilla/4":                       true,
		"Mozilla/5.0 (X11; Linux x86_64)": false,
		"Mozilla/4.0 (compatible; MSIE 5.5; Windows NT 5.0)":      true,
		"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)":      true,
		"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)": false,
		"Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)":      false,
		"curl/8.0": false,
		"":         false,
	}
	for ua, want := range cases {
		if got := BadUserAgent([]byte(ua)); got != want {
			t.Errorf("%q: got %v, want %v", ua, got, want)
		}
	}
}

func TestETags(t *testing.T) {
	kinds := map[string]int{
		`"123"`: ETagStrong, `W/"456"`: ETagWeak, `"W/789"`: ETagStrong, `""`: ETagStrong,
		`W/""`: ETagWeak, `"invalid`: ETagInvalid, `invalid"`: ETagInvalid, `invalid`: ETagInvalid,
		`W/"invalid`: ETagInvalid, `W/invalid"`: ETagInvalid, `W/invalid`: ETagInvalid, `"`: ETagInvalid,
	}
	for v, want := range kinds {
		if got := ETagKind([]byte(v)); got != want {
			t.Errorf("ETagKind(%s) = %d, want %d", v, got, want)
		}
	}
	for in, want := range map[string]string{`"123"`: `W/"123"`, `W/"456"`: `W/"456"`, `"W/789"`: `W/"W/789"`, `""`: `W/""`} {
		if got := string(WeakETag(nil, []byte(in))); got != want {
			t.Errorf("WeakETag(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestNoTransform(t *testing.T) {
	for v, want := range map[string]bool{
		"no-transform": true, "No-Transform": true, "max-age=3, no-transform": true,
		"no-transform=1": false, "no-transformer": false, "private": false, `x="a,no-transform"`: false,
	} {
		if got := NoTransform([]byte(v)); got != want {
			t.Errorf("NoTransform(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestTypeAllowed(t *testing.T) {
	types := []string{"text/plain", "text/html"}
	cases := []struct {
		ct    string
		has   bool
		types []string
		want  bool
	}{
		{"text/plain", true, types, true},
		{"Text/HTML; charset=utf-8", true, types, true},
		{"text/css", true, types, false},
		{"multipart/mixed; boundary=x", true, nil, false},
		{"Multipart/form-data", true, []string{"multipart"}, false},
		{"application/json", true, nil, true},
		{"", false, nil, true},
		{"", false, types, false},
		{"text", true, types, false},
	}
	for _, c := range cases {
		if got := TypeAllowed([]byte(c.ct), c.has, c.types); got != c.want {
			t.Errorf("TypeAllowed(%q, %v, %v) = %v, want %v", c.ct, c.has, c.types, got, c.want)
		}
	}
}

// TestEncoders compresses a body in pieces, flushing between them as the
// stream does, and reads it back with the matching decoder; an encoder
// from the pool starts afresh.
func TestEncoders(t *testing.T) {
	body := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 500))
	readers := map[Algo]func(io.Reader) (io.Reader, error){
		Identity:   func(r io.Reader) (io.Reader, error) { return r, nil },
		Deflate:    func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) },
		RawDeflate: func(r io.Reader) (io.Reader, error) { return flate.NewReader(r), nil },
		Gzip:       func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
	}
	for algo, open := range readers {
		for round := 0; round < 2; round++ {
			e := Get(algo, 1)
			var out []byte
			for p := body; len(p) > 0; {
				n := min(len(p), 3000)
				e.Write(p[:n])
				out = e.Flush(out)
				p = p[n:]
			}
			out = e.Close(out)
			Put(e)
			r, err := open(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("%s: %v", algo.Name(), err)
			}
			got, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("%s round %d: %d bytes back (%v), want %d", algo.Name(), round, len(got), err, len(body))
			}
			if algo != Identity && len(out) >= len(body) {
				t.Errorf("%s: %d bytes from %d", algo.Name(), len(out), len(body))
			}
		}
	}
}

func TestParseAlgo(t *testing.T) {
	for _, n := range []string{"identity", "deflate", "raw-deflate", "gzip"} {
		if a, ok := ParseAlgo(n); !ok || a.Name() != n {
			t.Errorf("ParseAlgo(%q) = %v, %v", n, a, ok)
		}
	}
	for _, n := range []string{"GZIP", "br", "", "x-gzip"} {
		if _, ok := ParseAlgo(n); ok {
			t.Errorf("ParseAlgo(%q) accepted", n)
		}
	}
}

// FuzzAcceptEncoding feeds the Accept-Encoding reader any field value: it
// never panics, and what it chooses is one of the proxy's algorithms.
func FuzzAcceptEncoding(f *testing.F) {
	for _, s := range []string{"gzip", "*;q=0, gzip;q=0.750, deflate;q=0.500", "gzip;q", "gzip;q=", ";;;", `a;b="x,y";q=1.0`,
		"deflate ;q=0.5 ; q=1", ",,,", "*", "identity;q=0", "gzip;\tq=0.1234567"} {
		f.Add(s)
	}
	algos := []Algo{Identity, Deflate, Gzip}
	f.Fuzz(func(t *testing.T, v string) {
		var c Choice
		c.Field([]byte(v), algos)
		if c.Found && c.Algo != Identity && c.Algo != Deflate && c.Algo != Gzip {
			t.Fatalf("%q chose %v", v, c.Algo)
		}
		if c.Found && (c.best <= 0 || c.best > 1000) {
			t.Fatalf("%q: q %d", v, c.best)
		}
		NoTransform([]byte(v))
		ETagKind([]byte(v))
		BadUserAgent([]byte(v))
	})
}
