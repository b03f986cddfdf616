// Package config runs goha -c over a corpus of configuration files and,
// when HAProxy is installed, compares the exit status and the lines that
// each reports in alerts with haproxy -c.
package config

import (
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"goha/regtests/internal/bin"
)

var posRe = regexp.MustCompile(`\[[^\]]*:(\d+)\]`)

// check runs prog -c -f file and returns the exit status and the sorted
// line numbers named by ALERT lines.
func check(t *testing.T, prog, file string) (int, []int, string) {
	return checkIn(t, prog, "testdata", file)
}

// checkIn is check with file in dir.
func checkIn(t *testing.T, prog, dir, file string) (int, []int, string) {
	cmd := exec.Command(prog, "-c", "-f", file)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/root"}
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	var lines []int
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "[ALERT]") {
			continue
		}
		for _, m := range posRe.FindAllStringSubmatch(l, -1) {
			n, _ := strconv.Atoi(m[1])
			if !slices.Contains(lines, n) {
				lines = append(lines, n)
			}
		}
	}
	slices.Sort(lines)
	return code, lines, string(out)
}

func TestCorpus(t *testing.T) {
	goha := bin.Path(t, "goha")
	files, _ := filepath.Glob("testdata/*.cfg")
	if len(files) < 40 {
		t.Fatalf("corpus has %d files, want at least 40", len(files))
	}
	haproxy := ""
	if p, err := exec.LookPath("haproxy"); err == nil {
		haproxy = p
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			code, lines, out := check(t, goha, name)
			wantValid := strings.HasPrefix(name, "valid-")
			if wantValid && code != 0 {
				t.Fatalf("goha -c exit %d, want 0:\n%s", code, out)
			}
			if !wantValid && code == 0 {
				t.Fatalf("goha -c accepted an invalid configuration:\n%s", out)
			}
			if !strings.Contains(out, "PANIC") && strings.Contains(out, "goroutine ") {
				t.Fatalf("goha crashed:\n%s", out)
			}
			if haproxy == "" {
				return
			}
			hcode, hlines, hout := check(t, haproxy, name)
			if hcode != code {
				t.Errorf("exit status: goha %d, haproxy %d\ngoha:\n%s\nhaproxy:\n%s", code, hcode, out, hout)
			}
			if !slices.Equal(lines, hlines) {
				t.Errorf("alert lines: goha %v, haproxy %v\ngoha:\n%s\nhaproxy:\n%s", lines, hlines, out, hout)
			}
		})
	}
}
