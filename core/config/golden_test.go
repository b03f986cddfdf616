package config

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"goha/core/diag"
)

// Golden files under testdata/golden hold a configuration, then the
// diagnostics goha prints for it, then (where HAProxy was run on it) what
// HAProxy 2.6.12 printed:
//
//	<configuration>
//	---------- goha
//	<diagnostics, pid shown as 0>
//	---------- haproxy
//	<HAProxy's diagnostics, pid shown as 0>
//
// Every HAProxy line must appear in goha's output, in the same order; goha
// may print more, since it goes on where HAProxy stops reading. Where goha
// deliberately differs, the separator reads "---------- haproxy, differs:
// <why>" and the capture is kept for the record only.
//
//	go test ./core/config -run Golden -update     rewrites the goha part
//	GOHA_CAPTURE_HAPROXY=1 go test ./core/config -run Golden
//	                                             re-captures the HAProxy part

var update = flag.Bool("update", false, "rewrite the goha part of golden files")

const (
	goldenGoha    = "---------- goha\n"
	goldenHAProxy = "---------- haproxy\n"
)

// goldenEnv is the whole environment both goha and HAProxy see.
var goldenEnv = map[string]string{
	"TWO":   "a b",
	"EMPTY": "",
	"SP":    " lead",
	"WHO":   "world",
}

func goldenGetenv(name string) (string, bool) {
	v, ok := goldenEnv[name]
	return v, ok
}

// goldenFeatures matches the Debian build of HAProxy 2.6.12 the captures
// were made with, for the features the golden files ask about.
var goldenFeatures = []string{"OPENSSL", "LUA", "LINUX_SPLICE", "-QUIC", "-ZLIB"}

func renderDiags(d *diag.Collector) string {
	var b strings.Builder
	for _, x := range d.All() {
		b.WriteString(x.Line(0))
		b.WriteByte('\n')
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".txt")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			text := string(raw)
			gi := strings.Index(text, goldenGoha)
			if gi < 0 {
				t.Fatalf("%s: no %q separator", path, strings.TrimSpace(goldenGoha))
			}
			input := text[:gi]
			rest := text[gi+len(goldenGoha):]
			want, hap, hapSep := rest, "", ""
			hasHAProxy, differs := false, false
			if hi := strings.Index(rest, goldenHAProxy[:len(goldenHAProxy)-1]); hi >= 0 {
				nl := strings.IndexByte(rest[hi:], '\n')
				if nl < 0 {
					t.Fatalf("%s: unterminated haproxy separator", path)
				}
				hapSep = rest[hi : hi+nl+1]
				want, hap, hasHAProxy = rest[:hi], rest[hi+nl+1:], true
				differs = strings.HasPrefix(hapSep, "---------- haproxy, differs:")
			}

			var d diag.Collector
			Parse(name+".cfg", []byte(input), Options{Getenv: goldenGetenv, Features: goldenFeatures}, &d)
			got := renderDiags(&d)

			if os.Getenv("GOHA_CAPTURE_HAPROXY") != "" {
				hap, hasHAProxy = captureHAProxy(t, name, input), true
			}
			if *update || os.Getenv("GOHA_CAPTURE_HAPROXY") != "" {
				out := input + goldenGoha + got
				if hasHAProxy {
					if hapSep == "" {
						hapSep = goldenHAProxy
					}
					out += hapSep + hap
				}
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				want = got
			}
			if got != want {
				t.Errorf("diagnostics differ\n--- got\n%s--- want\n%s", got, want)
			}
			if hasHAProxy && !differs {
				checkSubsequence(t, got, hap)
			}
		})
	}
}

// checkSubsequence wants every line of hap, in order, among the lines of got.
func checkSubsequence(t *testing.T, got, hap string) {
	t.Helper()
	g := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	k := 0
	for _, h := range strings.Split(strings.TrimSuffix(hap, "\n"), "\n") {
		if h == "" {
			continue
		}
		for k < len(g) && g[k] != h {
			k++
		}
		if k == len(g) {
			t.Errorf("HAProxy printed a line goha does not (in this order):\n%s", h)
			return
		}
		k++
	}
}

var (
	pidRe       = regexp.MustCompile(`^(\[[A-Z]+\] +)\(\d+\)`)
	summaryLine = regexp.MustCompile(`haproxy version is|path to executable is|Error\(s\) found in configuration file|Fatal errors found in configuration|Configuration file (has no error|is valid)|^Warnings were found`)
)

// captureHAProxy runs the real HAProxy on input and returns its
// diagnostics in goha's rendering (pid 0), without the summary lines that
// cmd/goha, not this package, prints.
func captureHAProxy(t *testing.T, name, input string) string {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name+".cfg"), []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-dD", "-c", "-f", name+".cfg")
	cmd.Dir = dir
	for k, v := range goldenEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, _ := cmd.CombinedOutput()
	var b strings.Builder
	for _, l := range strings.Split(string(out), "\n") {
		if summaryLine.MatchString(l) || strings.TrimSpace(l) == "" {
			continue
		}
		b.WriteString(pidRe.ReplaceAllString(l, "${1}(0)"))
		b.WriteByte('\n')
	}
	return b.String()
}
