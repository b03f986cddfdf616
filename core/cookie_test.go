package core

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"goha/core/config"
	"goha/core/diag"
)

// The files under testdata/cookie hold a configuration, then the
// diagnostics goha gives it, then what HAProxy 2.6.12 printed for it
// (captured with GOHA_CAPTURE_HAPROXY=1):
//
//	<configuration>
//	---------- goha
//	<diagnostics, pid shown as 0>
//	---------- haproxy
//	<HAProxy's diagnostics, pid shown as 0>
//
// Every HAProxy line must be among goha's, in the same order.

const (
	ckGoha    = "---------- goha\n"
	ckHAProxy = "---------- haproxy\n"
)

func TestCookieDiagnostics(t *testing.T) {
	files, _ := filepath.Glob("testdata/cookie/*.txt")
	if len(files) == 0 {
		t.Fatal("no cases")
	}
	capture := os.Getenv("GOHA_CAPTURE_HAPROXY") != ""
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".txt")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			text := string(raw)
			gi := strings.Index(text, ckGoha)
			if gi < 0 {
				t.Fatalf("no %q separator", ckGoha)
			}
			input, rest := text[:gi], text[gi+len(ckGoha):]
			want, hap, hasHAProxy := rest, "", false
			if hi := strings.Index(rest, ckHAProxy); hi >= 0 {
				want, hap, hasHAProxy = rest[:hi], rest[hi+len(ckHAProxy):], true
			}
			var d diag.Collector
			secs := config.Parse(name+".cfg", []byte(input), config.Options{}, &d)
			Build(secs, &d)
			var b strings.Builder
			for _, x := range d.All() {
				b.WriteString(x.Line(0))
				b.WriteByte('\n')
			}
			got := b.String()
			if capture {
				hap, hasHAProxy = captureHAProxyDiags(t, name, input), true
				if err := os.WriteFile(path, []byte(input+ckGoha+got+ckHAProxy+hap), 0o644); err != nil {
					t.Fatal(err)
				}
				want = got
			}
			if got != want {
				t.Errorf("diagnostics differ\n--- got\n%s--- want\n%s", got, want)
			}
			if !hasHAProxy {
				t.Fatal("no HAProxy capture to compare with")
			}
			g := strings.Split(got, "\n")
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
		})
	}
}

var (
	ckPidRe   = regexp.MustCompile(`^(\[[A-Z]+\] +)\(\d+\)`)
	ckSummary = regexp.MustCompile(`haproxy version is|path to executable is|Error\(s\) found in configuration file|Fatal errors found in configuration|Configuration file (has no error|is valid)|^Warnings were found`)
)

// captureHAProxyDiags runs the real HAProxy's -c on input and returns its
// diagnostics as goha renders them (pid 0), without the summary lines.
func captureHAProxyDiags(t *testing.T, name, input string) string {
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
	out, _ := cmd.CombinedOutput()
	var b strings.Builder
	for _, l := range strings.Split(string(out), "\n") {
		if ckSummary.MatchString(l) || strings.TrimSpace(l) == "" {
			continue
		}
		b.WriteString(ckPidRe.ReplaceAllString(l, "${1}(0)"))
		b.WriteByte('\n')
	}
	return b.String()
}
