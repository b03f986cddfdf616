package config

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"goha/core/diag"
)

func fuzzSeeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.txt")
	for _, p := range files {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if i := bytes.Index(raw, []byte(goldenGoha)); i >= 0 {
			raw = raw[:i]
		}
		f.Add(raw)
	}
	for _, s := range []string{
		"global\n  a \"${TWO[*]}\" '${X}' \\x41\\\n",
		"global\n.if defined(WHO) && (streq(\"a\",'a') || !0)\n.elif version_atleast(2.6-dev1)\n.else\n.endif\n",
		"\"${NOPE-a\"b}\" \"${.LINE\x00}\"\r\n[sc]\n",
		"defaults a from b\nbackend x from a y z\n",
	} {
		f.Add([]byte(s))
	}
}

// FuzzParse feeds arbitrary bytes to the tokenizer and preprocessor: no
// panic, no hang, positions within the input, the same result twice, and
// the input left untouched.
func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		opts := Options{Getenv: testEnv, Features: []string{"OPENSSL", "-QUIC"}}
		var d1, d2 diag.Collector
		s1 := Parse("f.cfg", data, opts, &d1)
		if !bytes.Equal(data, orig) {
			t.Fatal("input modified")
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, dg := range d1.All() {
			if dg.Pos.IsZero() {
				continue
			}
			if dg.Pos.File != "f.cfg" || dg.Pos.Line < 1 || dg.Pos.Line > lines {
				t.Fatalf("diagnostic at %v for %d lines: %s", dg.Pos, lines, dg.Msg)
			}
		}
		last := 0
		for _, s := range s1 {
			if s.Pos.Line <= last || !IsSectionKind(s.Kind) {
				t.Fatalf("section %q at %v after line %d", s.Kind, s.Pos, last)
			}
			last = s.Pos.Line
			for _, l := range s.Lines {
				if l.Pos.Line <= last || len(l.Words) == 0 || l.Words[0] == "" {
					t.Fatalf("line %q at %v after line %d", l.Words, l.Pos, last)
				}
				if n := len(l.Words); n > 1 && l.Words[n-1] == "" {
					t.Fatalf("trailing empty word in %q", l.Words)
				}
				if len(l.Words) > maxLineArgs {
					t.Fatalf("%d words", len(l.Words))
				}
				last = l.Pos.Line
			}
		}
		s2 := Parse("f.cfg", data, opts, &d2)
		if !reflect.DeepEqual(withoutEnv(s1), withoutEnv(s2)) || !reflect.DeepEqual(d1.All(), d2.All()) {
			t.Fatal("two parses of the same input differ")
		}
	})
}

// FuzzCondition feeds arbitrary text to the .if expression parser.
func FuzzCondition(f *testing.F) {
	for _, s := range []string{
		"", "1", "!0 && (1 || 0)", "defined(WHO)", `streq("a,b",'c)')`, "version_atleast(2.6-dev18-abc-3)",
		"feature(OPENSSL) || feature", "((((", "1 &&", "streq(a\\", "0x1f && 077 && -1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if strings.IndexByte(expr, 0) >= 0 {
			return // the tokenizer never hands over a NUL
		}
		_, msg, at := evalCondition(expr, testCondEnv)
		if msg != "" && (at < 0 || at > len(expr)) {
			t.Fatalf("error position %d outside %q: %s", at, expr, msg)
		}
		sanitizeForPrinting([]byte(expr), at, 76)
	})
}

// FuzzBestMatch checks the suggestion rule on arbitrary words: a suggestion
// is always one of the candidates and within the distance threshold.
func FuzzBestMatch(f *testing.F) {
	f.Add("defualt_backend", "default_backend", "balance")
	f.Fuzz(func(t *testing.T, w, a, b string) {
		got := diag.BestMatch(w, []string{a, b})
		if got == "" {
			return
		}
		if got != a && got != b {
			t.Fatalf("suggested %q, not a candidate", got)
		}
		fw, fg := diag.WordFingerprint(w), diag.WordFingerprint(got)
		if d := diag.Distance(&fw, &fg); d > 2*len(w) || d > 2*len(got) {
			t.Fatalf("suggested %q at distance %d from %q", got, d, w)
		}
	})
}

// withoutEnv drops the lines' Env functions, which reflect.DeepEqual never
// finds equal; what they answer is tested on its own.
func withoutEnv(secs []Section) []Section {
	for i := range secs {
		for j := range secs[i].Lines {
			secs[i].Lines[j].Env = nil
		}
	}
	return secs
}
