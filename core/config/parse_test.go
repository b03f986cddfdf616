package config

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"goha/core/diag"
)

func parseString(t *testing.T, src string) ([]Section, *diag.Collector) {
	t.Helper()
	var d diag.Collector
	secs := Parse("t.cfg", []byte(src), Options{Getenv: testEnv, Features: []string{"OPENSSL"}}, &d)
	return secs, &d
}

// sectionShape is a section without positions, for comparisons.
type sectionShape struct {
	Kind, Name, From string
	Args             []string
	Lines            [][]string
}

func shapes(secs []Section) []sectionShape {
	var out []sectionShape
	for _, s := range secs {
		sh := sectionShape{Kind: s.Kind, Name: s.Name, From: s.From, Args: s.Args}
		for _, l := range s.Lines {
			sh.Lines = append(sh.Lines, l.Words)
		}
		out = append(out, sh)
	}
	return out
}

func TestParseSections(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []sectionShape
	}{
		{
			name: "global sections stay separate and ordered",
			src:  "global\n maxconn 1\nglobal\n nbthread 2\ndefaults\nglobal\n maxconn 3\n",
			want: []sectionShape{
				{Kind: "global", Lines: [][]string{{"maxconn", "1"}}},
				{Kind: "global", Lines: [][]string{{"nbthread", "2"}}},
				{Kind: "defaults"},
				{Kind: "global", Lines: [][]string{{"maxconn", "3"}}},
			},
		},
		{
			name: "named defaults and from",
			src: "defaults\ndefaults base\ndefaults from base\ndefaults tcp from base\n" +
				"frontend fe\nfrontend fe2 from tcp\nbackend be from base\nlisten li from tcp\n",
			want: []sectionShape{
				{Kind: "defaults"},
				{Kind: "defaults", Name: "base"},
				{Kind: "defaults", From: "base"},
				{Kind: "defaults", Name: "tcp", From: "base"},
				{Kind: "frontend", Name: "fe"},
				{Kind: "frontend", Name: "fe2", From: "tcp"},
				{Kind: "backend", Name: "be", From: "base"},
				{Kind: "listen", Name: "li", From: "tcp"},
			},
		},
		{
			name: "other sections keep their name and arguments",
			src:  "ring buf\n size 1024\npeers mypeers\n peer a 127.0.0.1:1\nuserlist u\nresolvers dns\nprogram p\nlog-forward lf\nhttp-errors e\nmailers m\ncache c\nfcgi-app f\nnamespace_list\n",
			want: []sectionShape{
				{Kind: "ring", Name: "buf", Lines: [][]string{{"size", "1024"}}},
				{Kind: "peers", Name: "mypeers", Lines: [][]string{{"peer", "a", "127.0.0.1:1"}}},
				{Kind: "userlist", Name: "u"},
				{Kind: "resolvers", Name: "dns"},
				{Kind: "program", Name: "p"},
				{Kind: "log-forward", Name: "lf"},
				{Kind: "http-errors", Name: "e"},
				{Kind: "mailers", Name: "m"},
				{Kind: "cache", Name: "c"},
				{Kind: "fcgi-app", Name: "f"},
				{Kind: "namespace_list"},
			},
		},
		{
			name: "words: quotes, escapes, variables, trailing empties dropped",
			src:  "global\n  description \"hello ${WHO}\" 'it''s' a\\ b \\x41   # comment\n  maxconn \"\"\n  x \"\" y\n\n   \n# c\n",
			want: []sectionShape{
				{Kind: "global", Lines: [][]string{
					{"description", "hello world", "its", "a b", "A"},
					{"maxconn"},
					{"x", "", "y"},
				}},
			},
		},
		{
			name: "a line starting with an empty word is blank",
			src:  "global\n\"\" maxconn 1\n",
			want: []sectionShape{{Kind: "global"}},
		},
		{
			name: "word splitting with [*]",
			src:  "global\n  log \"${TWO[*]}\" local0\n",
			want: []sectionShape{{Kind: "global", Lines: [][]string{{"log", "a", "b", "local0"}}}},
		},
		{
			name: "no and default prefixes are left to the keyword tables",
			src:  "defaults\n  no option httplog\n  default option forwardfor\n",
			want: []sectionShape{{Kind: "defaults", Lines: [][]string{{"no", "option", "httplog"}, {"default", "option", "forwardfor"}}}},
		},
		{
			name: "conditions pick lines, nested",
			src: "global\n.if defined(WHO)\n  a 1\n  .if 0\n  b 2\n  .elif 1\n  c 3\n  .else\n  d 4\n  .endif\n.else\n  e 5\n" +
				"  .if 1\n  f 6\n  .endif\n.endif\n.if feature(OPENSSL) && !feature(QUIC)\n  g 7\n.endif\n",
			want: []sectionShape{{Kind: "global", Lines: [][]string{{"a", "1"}, {"c", "3"}, {"g", "7"}}}},
		},
		{
			name: "sections may open and close inside conditions",
			src:  "global\n.if 0\nbackend hidden\n  x 1\n.endif\n  y 2\n",
			want: []sectionShape{{Kind: "global", Lines: [][]string{{"y", "2"}}}},
		},
		{
			name: "pseudo-variables",
			src:  "global\n  a \"${.LINE}\" \"${.FILE}\" \"${.SECTION}\"\nbackend be\n  b \"${.SECTION}\"\ndefaults from x\n  c \"${.SECTION}\"\n",
			want: []sectionShape{
				{Kind: "global", Lines: [][]string{{"a", "2", "t.cfg", "global"}}},
				{Kind: "backend", Name: "be", Lines: [][]string{{"b", "be"}}},
				{Kind: "defaults", From: "x", Lines: [][]string{{"c", "from"}}},
			},
		},
		{
			name: "setenv and friends in global affect later lines",
			src: "global\n  setenv NEW v1\n  presetenv WHO ignored\n  presetenv P2 p2\n  a \"$NEW\" \"$WHO\" \"$P2\"\n" +
				"  unsetenv WHO\n  b \"${WHO-gone}\"\n  resetenv NEW\n  c \"${NEW}\" \"${P2-reset}\" \"${TWO-reset}\"\n" +
				"backend x\n  setenv LATE no\n  d \"${LATE-unset}\"\n",
			want: []sectionShape{
				{Kind: "global", Lines: [][]string{
					{"setenv", "NEW", "v1"}, {"presetenv", "WHO", "ignored"}, {"presetenv", "P2", "p2"},
					{"a", "v1", "world", "p2"},
					{"unsetenv", "WHO"}, {"b", "gone"},
					{"resetenv", "NEW"}, {"c", "v1", "reset", "reset"},
				}},
				{Kind: "backend", Name: "x", Lines: [][]string{{"setenv", "LATE", "no"}, {"d", "unset"}}},
			},
		},
		{
			name: "CRLF line endings",
			src:  "global\r\n  maxconn 10\r\n",
			want: []sectionShape{{Kind: "global", Lines: [][]string{{"maxconn", "10"}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secs, d := parseString(t, tt.src)
			if d.HasAlert() {
				t.Errorf("unexpected alerts:\n%s", renderDiags(d))
			}
			if got := shapes(secs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParsePositions(t *testing.T) {
	secs, _ := parseString(t, "# head\nglobal\n\n  maxconn 1\nbackend b\n  server s 1.2.3.4:80\n")
	if len(secs) != 2 {
		t.Fatalf("%d sections", len(secs))
	}
	if p := secs[0].Pos; p != (diag.Pos{File: "t.cfg", Line: 2}) {
		t.Errorf("global at %v", p)
	}
	if p := secs[0].Lines[0].Pos; p.Line != 4 {
		t.Errorf("maxconn at %v", p)
	}
	if p := secs[1].Pos; p.Line != 5 {
		t.Errorf("backend at %v", p)
	}
	if p := secs[1].Lines[0].Pos; p.Line != 6 {
		t.Errorf("server at %v", p)
	}
}

type wantDiag struct {
	sev  diag.Severity
	line int
	msg  string // prefix of the message
}

func checkDiags(t *testing.T, d *diag.Collector, want []wantDiag) {
	t.Helper()
	got := d.All()
	if len(got) != len(want) {
		t.Fatalf("%d diagnostics, want %d:\n%s", len(got), len(want), renderDiags(d))
	}
	for i, w := range want {
		g := got[i]
		if g.Sev != w.sev || g.Pos.Line != w.line || !strings.HasPrefix(g.Msg, w.msg) {
			t.Errorf("diagnostic %d: got %v line %d %q, want %v line %d %q", i, g.Sev, g.Pos.Line, g.Msg, w.sev, w.line, w.msg)
		}
	}
}

func TestParseDiagnostics(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []wantDiag
	}{
		{"levels", "global\n.diag d\n.notice n\n.warning w\n.alert a\n", []wantDiag{
			{diag.Diagnostic, 2, "'d'."},
			{diag.Notice, 3, "'n'."},
			{diag.Warning, 4, "'w'."},
			{diag.Alert, 5, "'a'."},
		}},
		{"all problems in one pass", "global\n  a \"x\n  b '\n.foo\n  c \\xZ\n.endif\n", []wantDiag{
			{diag.Alert, 2, "unmatched quote at position 5:"},
			{diag.Alert, 3, "unmatched quote at position 5:"},
			{diag.Alert, 4, "unknown directive '.foo'."},
			{diag.Alert, 5, "truncated or invalid hexadecimal sequence at position 5:"},
			{diag.Alert, 6, "lone '.endif' with no matching '.if'."},
		}},
		{"masked lines still tokenize", "global\n.if 0\n  a \"x\n.endif\n", []wantDiag{
			{diag.Alert, 3, "unmatched quote"},
		}},
		{"masked directives are silent", "global\n.if 0\n.alert x\n.foo\n.endif\n", nil},
		{"conditions in masked blocks are not evaluated", "global\n.if 0\n.if foo(\n.endif\n.elif defined(\n.endif\n", []wantDiag{
			{diag.Alert, 5, "expected ')' in argument 1 of predicate"},
		}},
		{"a .if line that does not tokenize drops its block without cascading", "global\n.if streq(\"a,b)\n  a 1\n.else\n  b 2\n.endif\n", []wantDiag{
			{diag.Alert, 2, "unmatched quote at position 11:"},
		}},
		{"a broken condition drops its whole block", "global\n.if foo\n  a 1\n.else\n  b 2\n.endif\n  c 3\n", []wantDiag{
			{diag.Alert, 2, "unparsable conditional expression 'foo' in '.if' at position 1:"},
		}},
		{"unbalanced .if at end of file", "global\n.if 1\n.if 0\n.endif\n  x 1\n", []wantDiag{
			{diag.Alert, 5, "non-terminated '.if' block."},
		}},
		{"too deep nesting", "global\n" + strings.Repeat(".if 1\n", 100) + strings.Repeat(".endif\n", 100), []wantDiag{
			{diag.Alert, 101, "too many nested '.if', max is 100."},
		}},
		{"out of section", "maxconn 1\nglobal\n", []wantDiag{
			{diag.Alert, 1, "unknown keyword 'maxconn' out of section."},
		}},
		{"directive arguments", "global\n.warning a b\n.else x\n", []wantDiag{
			{diag.Alert, 2, "Unexpected argument 'b' for '.warning'. Use quotes"},
			{diag.Alert, 3, "Unexpected argument 'x' for '.else'."},
			{diag.Alert, 3, "lone '.else' with no matching '.if'."},
		}},
		{"carriage return inside a line", "global\n  maxconn 1\r2\n", []wantDiag{
			{diag.Warning, 2, "carriage return at position 12 ends the line"},
		}},
		{"scope lines", "[ok]\n[]\n[a b]\n[x] y\n", []wantDiag{
			{diag.Alert, 2, "empty scope name is forbidden."},
			{diag.Alert, 3, "character ' ' is not permitted in a scope name."},
			{diag.Alert, 4, "character 'y' is not permitted after scope declaration."},
		}},
		{"too many words", "global\n  x" + strings.Repeat(" w", 64) + "\n", []wantDiag{
			{diag.Alert, 2, "too many words, truncating after word 64, position 127: <w>."},
		}},
		{"global after other sections is a diagnostic-mode remark", "defaults\nglobal\n", []wantDiag{
			{diag.Diagnostic, 2, "global section detected after a non-global one"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, d := parseString(t, tt.src)
			checkDiags(t, d, tt.want)
		})
	}
}

func TestParseAlertStops(t *testing.T) {
	secs, d := parseString(t, "global\n  a 1\n.alert \"stop\"\n  b 2\n.warning w\n")
	checkDiags(t, d, []wantDiag{{diag.Alert, 3, "'stop'."}})
	if got := shapes(secs); len(got) != 1 || len(got[0].Lines) != 1 {
		t.Errorf("lines after .alert were kept: %+v", got)
	}
}

// The rendering is HAProxy's, blank before the colon or not.
func TestParseRendering(t *testing.T) {
	_, d := parseString(t, "global extra\n  a \"x\n")
	got := renderDiags(d)
	want := "[ALERT]    (0) : config : parsing [t.cfg:1] : 'global' cannot handle unexpected argument 'extra'.\n" +
		"[ALERT]    (0) : config : parsing [t.cfg:2]: unmatched quote at position 5:\n" +
		"  a \"x\n" +
		"    ^\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestParseBadInput(t *testing.T) {
	t.Run("1 MB line", func(t *testing.T) {
		word := strings.Repeat("x", 1<<20)
		secs, d := parseString(t, "global\n  description "+word+"\n")
		if d.HasAlert() {
			t.Fatalf("alerts: %v", d.All())
		}
		if got := secs[0].Lines[0].Words[1]; got != word {
			t.Fatalf("word of %d bytes, want %d", len(got), len(word))
		}
	})
	t.Run("1 MB line of words", func(t *testing.T) {
		_, d := parseString(t, "global\n"+strings.Repeat("w ", 1<<19)+"\n")
		checkDiags(t, d, []wantDiag{{diag.Alert, 2, "too many words, truncating after word 64"}})
	})
	t.Run("1 MB unterminated quote", func(t *testing.T) {
		_, d := parseString(t, "global\n  a \""+strings.Repeat("q", 1<<20)+"\n")
		checkDiags(t, d, []wantDiag{{diag.Alert, 2, "unmatched quote at position 5:\n  a \"" + strings.Repeat("q", 77) + "\n"}})
	})
	t.Run("NUL bytes", func(t *testing.T) {
		secs, d := parseString(t, "global\n  maxconn 10\x00garbage\n  nbthread 2\n")
		checkDiags(t, d, []wantDiag{{diag.Alert, 2, "Stray NUL character at position 13."}})
		if got := shapes(secs)[0].Lines; !reflect.DeepEqual(got, [][]string{{"maxconn", "10"}, {"nbthread", "2"}}) {
			t.Errorf("lines %q", got)
		}
	})
	t.Run("missing LF", func(t *testing.T) {
		secs, d := parseString(t, "global\n  maxconn 10")
		checkDiags(t, d, []wantDiag{{diag.Alert, 2, "Missing LF on last line, file might have been truncated at position 13."}})
		if len(secs[0].Lines) != 1 {
			t.Errorf("last line lost")
		}
	})
	t.Run("binary garbage", func(t *testing.T) {
		rnd := rand.New(rand.NewSource(1))
		buf := make([]byte, 256<<10)
		rnd.Read(buf)
		_, d := parseString(t, string(buf))
		if !d.HasAlert() {
			t.Fatal("garbage accepted")
		}
		all := d.All()
		last := all[len(all)-1]
		if !strings.HasPrefix(last.Msg, "too many fatal errors (50), stopping now.") {
			t.Errorf("last diagnostic %q", last.Msg)
		}
		if len(all) > 60 {
			t.Errorf("%d diagnostics for garbage, want the fatal limit to stop them", len(all))
		}
	})
	t.Run("empty input", func(t *testing.T) {
		secs, d := parseString(t, "")
		if len(secs) != 0 || len(d.All()) != 0 {
			t.Errorf("%v %v", secs, d.All())
		}
	})
}

func TestParseDoesNotModifyInput(t *testing.T) {
	src := []byte("global\n  a \"${NOPE-x}\" \"${.BAD}\"\n")
	orig := bytes.Clone(src)
	var d diag.Collector
	Parse("t.cfg", src, Options{Getenv: testEnv}, &d)
	if !bytes.Equal(src, orig) {
		t.Errorf("input changed to %q", src)
	}
}

func TestParseNilCollectorAndDefaults(t *testing.T) {
	secs := Parse("t.cfg", []byte("global\n.if version_atleast(2.6) && !version_atleast(2.7)\n a 1\n.endif\n"), Options{Getenv: testEnv}, nil)
	if len(secs) != 1 || len(secs[0].Lines) != 1 {
		t.Errorf("empty Version should compare as %s: %+v", HAProxyVersion, secs)
	}
	t.Setenv("GOHA_CONFIG_TEST", "from-os")
	secs = Parse("t.cfg", []byte("global\n a \"$GOHA_CONFIG_TEST\"\n"), Options{}, nil)
	if got := secs[0].Lines[0].Words[1]; got != "from-os" {
		t.Errorf("nil Getenv should read the process environment, got %q", got)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "conf.d")
	if err := os.Mkdir(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(conf, "20-backend.cfg"), "backend be\n  x 2\n")
	writeFile(t, filepath.Join(conf, "10-global.cfg"), "global\n  setenv FROM_FILE1 yes\n")
	writeFile(t, filepath.Join(conf, "30-cont.cfg"), "  orphan 1\n  y \"$FROM_FILE1\"\n")
	writeFile(t, filepath.Join(conf, ".hidden.cfg"), "hidden\n")
	writeFile(t, filepath.Join(conf, "notes.txt"), "not config\n")
	writeFile(t, filepath.Join(conf, "a.cfg.cfg"), "skipped like HAProxy\n")
	if err := os.Mkdir(filepath.Join(conf, "sub.cfg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(conf, "20-backend.cfg"), filepath.Join(conf, "25-link.cfg")); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(dir, "main.cfg")
	writeFile(t, main, "defaults\n.if 1\n")

	var d diag.Collector
	secs := Load([]string{main, conf, filepath.Join(dir, "missing.cfg")}, Options{Getenv: testEnv}, &d)

	var kinds []string
	for _, s := range secs {
		kinds = append(kinds, s.Kind+":"+s.Pos.String())
	}
	want := []string{
		"defaults:" + main + ":1",
		"global:" + filepath.Join(conf, "10-global.cfg") + ":1",
		"backend:" + filepath.Join(conf, "20-backend.cfg") + ":1",
		"backend:" + filepath.Join(conf, "25-link.cfg") + ":1",
	}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("sections\n got %q\nwant %q", kinds, want)
	}
	checkDiags(t, &d, []wantDiag{
		{diag.Alert, 0, "Cannot open configuration file/directory " + filepath.Join(dir, "missing.cfg") + " : No such file or directory"},
		{diag.Alert, 2, "non-terminated '.if' block."},
		{diag.Alert, 1, "unknown keyword 'orphan' out of section."},
		{diag.Alert, 2, "unknown keyword 'y' out of section."},
	})
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	// A socket stats as a file but cannot be opened, even by root.
	sock := filepath.Join(dir, "s.cfg")
	l, err := listenUnix(sock)
	if err != nil {
		t.Skip("no unix sockets:", err)
	}
	defer l.Close()
	var d diag.Collector
	secs := Load([]string{sock}, Options{}, &d)
	if len(secs) != 0 {
		t.Errorf("sections from a socket: %v", secs)
	}
	checkDiags(t, &d, []wantDiag{{diag.Alert, 0, "Could not open configuration file " + sock + " : No such device or address"}})
}

func TestStrerror(t *testing.T) {
	_, err := os.Open("/nonexistent/x")
	if got := strerror(err); got != "No such file or directory" {
		t.Errorf("got %q", got)
	}
}

func TestParseBrokenIfLineDropsBlock(t *testing.T) {
	secs, _ := parseString(t, "global\n.if streq(\"a,b)\n  a 1\n.elif 1\n  b 2\n.else\n  c 3\n.endif\n  d 4\n")
	if got := shapes(secs)[0].Lines; !reflect.DeepEqual(got, [][]string{{"d", "4"}}) {
		t.Errorf("lines %q, want only d 4", got)
	}
}
