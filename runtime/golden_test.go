package runtime

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files' expected replies")

const (
	caseSep  = "==========\n"
	replySep = "----------\n"
)

// TestGolden replays every testdata/golden/*.txt file against a fresh
// process built from testdata/golden.cfg. A file holds cases separated by
// "==========" lines; a case is the bytes sent on one connection, a
// "----------" line, and the exact reply, where <n> stands for any integer
// and <*> for any text up to the end of the line. The level is admin, or
// the one the file name starts with (user_, operator_).
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.txt")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	cfg := readFile(t, "testdata/golden.cfg")
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			level := LevelAdmin
			for _, l := range []Level{LevelUser, LevelOperator} {
				if strings.HasPrefix(name, l.String()+"_") {
					level = l
				}
			}
			ts := startServer(t, newProc(t, cfg))
			cases := strings.Split(readFile(t, f), caseSep)
			for i, c := range cases {
				in, want, ok := strings.Cut(c, replySep)
				if !ok {
					t.Fatalf("case %d: no %q separator", i, strings.TrimSpace(replySep))
				}
				got := normalize(ts.send(t, level, in))
				if *update {
					if !matchGolden(want, got) {
						cases[i] = in + replySep + got
					}
					continue
				}
				if !matchGolden(want, got) {
					t.Errorf("case %d: %q\n--- got:\n%s--- want:\n%s", i, in, got, want)
				}
			}
			if *update {
				os.WriteFile(f, []byte(strings.Join(cases, caseSep)), 0o644)
			}
		})
	}
}

var goldenToken = regexp.MustCompile(`<n>|<\*>`)

func matchGolden(want, got string) bool {
	if !strings.Contains(want, "<n>") && !strings.Contains(want, "<*>") {
		return want == got
	}
	var re strings.Builder
	re.WriteString(`\A`)
	last := 0
	for _, m := range goldenToken.FindAllStringIndex(want, -1) {
		re.WriteString(regexp.QuoteMeta(want[last:m[0]]))
		if want[m[0]:m[1]] == "<n>" {
			re.WriteString(`(?:-?[0-9]+(?:\.[0-9]+)?|<n>)`)
		} else {
			re.WriteString(`[^\n]*`)
		}
		last = m[1]
	}
	re.WriteString(regexp.QuoteMeta(want[last:]))
	re.WriteString(`\z`)
	return regexp.MustCompile(re.String()).MatchString(got)
}

// volatile are values that change with time or the machine; normalize
// turns them into <n> / <*> so that golden files stay stable.
var volatile = []*regexp.Regexp{
	regexp.MustCompile(`(?m)^((?:Pid|Uptime_sec|Start_time_sec|Ulimit-n|Maxsock): )[0-9]+$`),
	regexp.MustCompile(`(?m)^((?:Uptime|node|date_now): ).*$`),
	regexp.MustCompile(`(?m)^(Total events captured on \[)[^]]*`),
}

func normalize(s string) string {
	for _, re := range volatile[:1] {
		s = re.ReplaceAllString(s, "${1}<n>")
	}
	for _, re := range volatile[1:] {
		s = re.ReplaceAllString(s, "${1}<*>")
	}
	lines := strings.Split(s, "\n")
	for i, ln := range lines {
		switch {
		case strings.Count(ln, ",") > 100 && !strings.HasPrefix(ln, "#"):
			f := strings.Split(ln, ",")
			for _, j := range []int{23, 24} {
				if f[j] != "" {
					f[j] = "<n>"
				}
			}
			lines[i] = strings.Join(f, ",")
		case strings.Contains(ln, ".23.lastchg.1:") || strings.Contains(ln, ".24.downtime.1:"):
			lines[i] = ln[:strings.LastIndexByte(ln, ':')+1] + "<n>"
		default:
			if f := strings.Split(ln, " "); len(f) == 25 && ln[0] >= '0' && ln[0] <= '9' {
				f[9] = "<n>"
				lines[i] = strings.Join(f, " ")
			}
		}
	}
	return strings.Join(lines, "\n")
}
