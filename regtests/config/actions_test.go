//go:build regtest

package config

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"goha/regtests/internal/bin"
)

// TestRuleActionTypos: a misspelt http-request or http-response action is
// refused at its line in HAProxy 2.6's shape, with the nearest action as a
// suggestion. goha lists only the actions it runs, so the lists are masked
// before comparing.
func TestRuleActionTypos(t *testing.T) {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed")
	}
	goha := bin.Path(t, "goha")
	list := regexp.MustCompile(`expects ('[^']*', )+but got`)
	for _, c := range []struct{ name, line string }{
		{"request", "http-request dney if TRUE"},
		{"response", "http-response set-hdr X-A b"},
		{"missing", "http-request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := "defaults\n    mode http\n    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\n" +
				"frontend f\n    bind 127.0.0.1:80\n    " + c.line + "\n    default_backend b\nbackend b\n    server s 127.0.0.1:1\n"
			path := filepath.Join(dir, "t.cfg")
			if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			alert := func(prog string) string {
				cmd := exec.Command(prog, "-c", "-f", "t.cfg")
				cmd.Dir = dir
				out, _ := cmd.CombinedOutput()
				for _, l := range strings.Split(string(out), "\n") {
					if strings.Contains(l, "parsing [t.cfg:8]") {
						_, msg, _ := strings.Cut(l, " : config : ")
						return list.ReplaceAllString(msg, "expects <actions>, but got")
					}
				}
				t.Fatalf("%s printed no alert at line 8:\n%s", prog, out)
				return ""
			}
			if g, h := alert(goha), alert(haproxy); g != h {
				t.Errorf("goha:    %s\nhaproxy: %s", g, h)
			}
		})
	}
}

// TestRuleDiagnosticsInLineOrder: what compiling a rule finds is reported
// at its line, among the diagnostics of reading the file and before those
// of the checks that follow reading, as HAProxy (which parses rules as it
// reads) prints them; goha -c's whole output is HAProxy's.
func TestRuleDiagnosticsInLineOrder(t *testing.T) {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed")
	}
	goha := bin.Path(t, "goha")
	for _, c := range []struct{ name, cfg, first string }{
		// A rule's warning at its line, before the post-reading checks'.
		{"rule", "defaults\n    mode http\nfrontend f\n    bind 127.0.0.1:80\n" +
			"    http-request return content-type text/plain if { path /a }\n" +
			"    http-request deny if { path /b }\n    default_backend b\nbackend b\n    server s 127.0.0.1:1\n",
			"config : parsing [t.cfg:5] : content-type"},
		// A log format is read after the sections: its alert is not a
		// reading error ("Error(s) found" is not printed).
		{"log-format", "defaults\n    mode http\n    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\n" +
			"frontend f\n    bind 127.0.0.1:80\n    log stdout local0\n    log-format \"%[bogus_fetch]\"\n" +
			"    default_backend b\nbackend b\n    server s 127.0.0.1:1\n",
			"config : Parsing [t.cfg:9]: failed to parse log-format"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "t.cfg"), []byte(c.cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		output := func(prog string) string {
			cmd := exec.Command(prog, "-c", "-f", "t.cfg")
			cmd.Dir = dir
			out, _ := cmd.CombinedOutput()
			var keep []string
			for _, l := range strings.Split(string(out), "\n") {
				if strings.Contains(l, "[NOTICE]") {
					continue
				}
				if _, msg, ok := strings.Cut(l, ") : "); ok {
					l = msg
				}
				keep = append(keep, l)
			}
			return strings.Join(keep, "\n")
		}
		g, h := output(goha), output(haproxy)
		if !strings.HasPrefix(h, c.first) {
			t.Fatalf("%s: HAProxy's output is not what this test expects:\n%s", c.name, h)
		}
		if g != h {
			t.Errorf("%s: goha:\n%s\nhaproxy:\n%s", c.name, g, h)
		}
	}
}
