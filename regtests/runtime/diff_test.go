//go:build regtest

// Package runtime_test compares goha's stats socket with HAProxy 2.6's on
// the same configuration: it starts the real haproxy (-db) and serves
// goha's socket in-process, sends both the same commands and compares the
// replies, with times and the version string masked.
package runtime_test

import (
	"fmt"
	"goha/core/stream"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"goha/core"
	"goha/core/config"
	"goha/core/diag"
	"goha/regtests/internal/harness"
	"goha/runtime"
)

type pair struct {
	hap, goha map[string]string // level -> socket path
}

const cfgTmpl = `global
    maxconn 1000
    nbthread 2
%s
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe1
    bind 127.0.0.1:%d
    default_backend be1
backend be1
    balance roundrobin
    server s1 127.0.0.1:%d
    server s2 127.0.0.1:%d weight 50
    server s3 127.0.0.1:%d weight 10 maxconn 20
backend be2
    balance source
    server t1 127.0.0.1:%d
    server t2 127.0.0.1:%d disabled
backend be3
    balance leastconn
    server u1 127.0.0.1:%d backup
    server u2 [::1]:%d weight 3
`

var levels = []string{"admin", "operator", "user"}

// start runs haproxy and goha on the same configuration; state changes
// made through one are never seen by the other.
func start(t *testing.T) *pair { return startWith(t, cfgTmpl) }

func startWith(t *testing.T, tmpl string) *pair {
	hap, err := exec.LookPath("haproxy")
	if err != nil {
		hap = "/usr/sbin/haproxy"
		if _, err := os.Stat(hap); err != nil {
			t.Skip("haproxy not installed")
		}
	}
	dir := t.TempDir()
	ports := make([]any, 0, 8)
	for i := 0; i < 8; i++ {
		ports = append(ports, harness.FreePort(t))
	}
	sockLines := func(prefix string) string {
		var b strings.Builder
		for _, l := range levels {
			fmt.Fprintf(&b, "    stats socket %s level %s\n", filepath.Join(dir, prefix+l+".sock"), l)
		}
		return b.String()
	}
	if !strings.Contains(tmpl, "%[") {
		ports = ports[:strings.Count(tmpl, "%d")]
	}
	hcfg := fmt.Sprintf(tmpl, append([]any{sockLines("h-")}, ports...)...)
	gcfg := fmt.Sprintf(tmpl, append([]any{sockLines("g-")}, ports...)...)
	os.WriteFile(filepath.Join(dir, "h.cfg"), []byte(hcfg), 0o644)
	cmd := exec.Command(hap, "-db", "-f", filepath.Join(dir, "h.cfg"))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	d := &diag.Collector{}
	cfg := core.Build(config.Parse("g.cfg", []byte(gcfg), config.Options{Version: "2.6.12"}, d), d)
	if d.HasAlert() {
		t.Fatalf("goha config: %v", d.All())
	}
	p := stream.New(cfg)
	srv, err := runtime.Serve(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	pr := &pair{hap: map[string]string{}, goha: map[string]string{}}
	for _, l := range levels {
		pr.hap[l] = filepath.Join(dir, "h-"+l+".sock")
		pr.goha[l] = filepath.Join(dir, "g-"+l+".sock")
	}
	// Poll until haproxy answers.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if out, err := send(pr.hap["admin"], "show version\n"); err == nil && strings.HasSuffix(out, "\n\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("haproxy did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return pr
}

func send(path, in string) (string, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, in)
	c.(*net.UnixConn).CloseWrite()
	b, err := io.ReadAll(c)
	return string(b), err
}

func (p *pair) both(t *testing.T, level, in string) (h, g string) {
	t.Helper()
	h, err := send(p.hap[level], in)
	if err != nil {
		t.Fatalf("haproxy: %v", err)
	}
	g, err = send(p.goha[level], in)
	if err != nil {
		t.Fatalf("goha: %v", err)
	}
	return h, g
}

var (
	versionRe = regexp.MustCompile(`2\.6\.12-[^\n]*|captured on \[[^]]*\]`)
	// 2.6's messages that lack their LF, followed by another reply.
	noLF = regexp.MustCompile(`((?:Empty weight string empty or preceded by garbage|Trailing garbage in weight string|` +
		`maxconn string empty or preceded by garbage|Trailing garbage in maxconn string|` +
		`agent checks are not enabled on this server|health checks are not enabled on this server|` +
		`provided port is not an integer|provided port is invalid|invalid addr '[^']*'|No such event sink|` +
		`Backend must use a dynamic load balancing to support dynamic servers\.|Require 'backend/server'\.|` +
		`No such backend\.|No such server\.|Only servers in maintenance mode can be deleted\.|Server deleted\.))\n([^\n])`)
)

// mask hides what legitimately differs: the version string, and 2.6's
// missing LF after some messages (goha ends every reply with exactly one
// empty line, as HAProxy 3.x does).
func mask(s string) string {
	s = versionRe.ReplaceAllString(s, "VERSION")
	s = noLF.ReplaceAllString(s, "$1\n\n$2")
	if !strings.HasSuffix(s, "\n\n") && strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// maskTimes blanks the time columns of show stat and show servers state.
var jsonTimes = regexp.MustCompile(`("name":"(?:lastchg|downtime)"\},"processNum":1,"tags":\{[^}]*\},"value":\{"type":"u32","value":)[0-9]+`)

func maskTimes(s string) string {
	s = jsonTimes.ReplaceAllString(s, "${1}T")
	lines := strings.Split(s, "\n")
	for i, ln := range lines {
		if strings.Contains(ln, ".23.lastchg.1:") || strings.Contains(ln, ".24.downtime.1:") {
			lines[i] = ln[:strings.LastIndexByte(ln, ':')+1] + "T"
		} else if strings.Count(ln, ",") > 100 && !strings.HasPrefix(ln, "#") {
			f := strings.Split(ln, ",")
			for _, j := range []int{23, 24} {
				if f[j] != "" {
					f[j] = "T"
				}
			}
			lines[i] = strings.Join(f, ",")
		} else if f := strings.Split(ln, " "); len(f) == 25 && ln != "" && ln[0] >= '0' && ln[0] <= '9' {
			f[9] = "T"
			lines[i] = strings.Join(f, " ")
		}
	}
	return strings.Join(lines, "\n")
}

func TestSameReplies(t *testing.T) {
	p := start(t)
	// Each command runs on both sides in order; state changes accumulate.
	cmds := []string{
		"show servers state", "show stat", "show stat typed", "show stat json", "show stat 3 -1 -1 json", "show stat -1 4 -1", "show stat be1 4 2",
		"show stat nosuch 4 -1", "show stat 3 -1", "show backend",
		"get weight be1/s2", "get weight #3/#2", "get weight", "get weight be1", "get weight be1/",
		"get weight nosuch/s1", "get weight be1/nosuch", "get weight 'be1/s2'", "get weight be1/s\\2",
		"set weight be1/s1", "set weight be1/s1 x", "set weight be1/s1 -5%", "set weight be1/s1 300x",
		"set weight be1/s1 10x", "set weight be1/s1 1.5", "set weight be2/t1 50%", "get weight be2/t1",
		"set weight be2/t1 2", "set weight be2/t1 0", "set weight be2/t1 100%", "set weight be1/s2 600%",
		"get weight be1/s2", "set weight be1/s2 256", "set server be1/s2 weight 257", "set weight be1/s2 +3",
		"get weight be1/s2", "set weight be1/s3 0", "show stat be1 6 -1",
		"set server be1/s1", "set server be1/s1 foo", "set server be1", "set server be1/s1 state",
		"set server be1/s1 health", "set server be1/s1 agent up", "set server be1/s1 agent-addr",
		"set server be1/s1 agent-addr 1.2.3.4", "set server be1/s1 agent-port", "set server be1/s1 agent-send x",
		"set server be1/s1 check-addr 1.2.3.4", "set server be1/s1 check-port 80", "set server be1/s1 fqdn",
		"set server be1/s1 fqdn foo.com", "set server be1/s1 ssl on",
		"set server be1/s3 state drain", "set server be2/t2 state ready", "set server be1/s1 state maint",
		"show servers state", "show stat", "set server be1/s1 state drain", "show servers state be1",
		"set server be1/s1 state ready", "set server be1/s2 health down", "set server be1/s1 health stopping",
		"show stat", "show servers state", "set server be1/s1 health up", "set server be1/s2 health up",
		"disable server be1/s3", "show stat be1 4 3", "enable server be1/s3", "show stat be1 4 3",
		"set server be3/u2 state maint", "show stat be3 -1 -1", "set server be3/u2 state ready",
		"set server be1/s1 addr 127.0.0.5", "set server be1/s1 addr 127.0.0.5 port 99",
		"set server be1/s1 addr foo", "set server be1/s1 addr", "set server be1/s1 addr 127.0.0.5 port abc",
		"set server be1/s1 addr ::1", "show stat be1 4 1", "show servers state be1",
		"enable health be1/s2", "disable health be1/s2", "enable agent be1/s1", "disable agent be1/s1",
		"add server be2/x 127.0.0.1:1", "add server be1/s1 127.0.0.1:1", "add server be1/d1",
		"add server be1", "add server nosuch/x 1.1.1.1", "add server be1/d1 127.0.0.1:1 weight 7",
		"show servers state be1", "show stat be1 4 -1", "get weight be1/d1", "set server be1/s2 state ready",
		"del server be1/s2", "del server be1/d1", "del server be1/d1", "del server be1",
		"show servers state nosuch", "show servers state #4",
		"disable frontend fe1", "disable frontend fe1", "show stat -1 1 -1", "enable frontend fe1",
		"enable frontend fe1", "disable frontend be1", "disable frontend", "shutdown frontend",
		"set maxconn frontend fe1 100", "show stat fe1 1 -1", "set maxconn server be1/s1 10",
		"set maxconn server be1/s1", "set maxconn server be1/s1 x", "set maxconn server be1/s1 5x",
		"show stat be1 4 1", "set maxconn global 99999999", "set maxconn global", "set maxconn global 100",
		"set rate-limit", "set rate-limit connections global 10", "set rate-limit connections global",
		"shutdown session", "shutdown session zz", "shutdown session 0x1234", "shutdown sessions server",
		"clear counters", "clear counters all", "clear counters foo",
		"set timeout cli", "set timeout cli 0", "set timeout foo 5", "set timeout cli 500ms",
		"set severity-output", "set severity-output number;get weight be1/nosuch;get weight be1/s3;show version;set server be1/s1 addr 127.0.0.5;show servers state nosuch;add server be1/x",
		"set severity-output string;set weight be1/s1 x;show events nosuch",
		"show events", "show events nosuch", "show events stdout",
		"show errors nosuch", "show version", "show version\nget weight be1/s3\n",
		"prompt\nprompt\nshow version\n", "prompt\nget weight be1/s3\nquit\n",
		"operator; show cli level; user; show cli level; operator; show cli level",
		"show cli sockets", "shutdown sessions", "set maxconn", "help show servers",
		"show version <<\nfoo\n\nshow version\n", "show version\r\n", "quit;show version",
	}
	for _, c := range cmds {
		in := c
		if !strings.HasSuffix(in, "\n") {
			in += "\n"
		}
		h, g := p.both(t, "admin", in)
		h, g = maskTimes(mask(h)), maskTimes(mask(g))
		if strings.Contains(c, "cli sockets") {
			h = strings.ReplaceAll(h, "/h-", "/X-")
			g = strings.ReplaceAll(g, "/g-", "/X-")
		}
		if h != g {
			t.Errorf("%q:\n--- haproxy:\n%s--- goha:\n%s", c, h, g)
		}
	}
}

func TestLevels(t *testing.T) {
	p := start(t)
	// show sess at operator level is left out: HAProxy lists the CLI
	// session itself, goha lists streams only.
	cmds := []string{"show cli level", "clear counters all", "show errors", "clear counters",
		"set weight be1/s1 1", "set server be1/s1 state maint", "add server be1/x 1.1.1.1", "operator",
		"show stat be1 4 1", "get weight be1/s1", "set maxconn global 10", "enable health be1/s1",
		"shutdown sessions server be1/s1", "user; operator; show cli level", "show events buf0",
		"disable frontend fe1", "set timeout cli 1m", "show servers state be2"}
	for _, l := range []string{"user", "operator"} {
		for _, c := range cmds {
			h, g := p.both(t, l, c+"\n")
			h, g = maskTimes(mask(h)), maskTimes(mask(g))
			if h != g {
				t.Errorf("%s: %q:\n--- haproxy:\n%s--- goha:\n%s", l, c, h, g)
			}
		}
	}
}

// TestHelp checks that every help line goha prints is HAProxy's, at
// every level, and that the list ends the same way.
func TestHelp(t *testing.T) {
	p := start(t)
	for _, l := range levels {
		h, g := p.both(t, l, "help\n")
		hl := map[string]bool{}
		for _, ln := range strings.Split(h, "\n") {
			hl[ln] = true
		}
		for _, ln := range strings.Split(g, "\n") {
			if !hl[ln] {
				t.Errorf("%s: goha help line not in haproxy's: %q", l, ln)
			}
		}
		if !strings.HasSuffix(g, "  quit                                    : disconnect\n\n") {
			t.Errorf("%s: help does not end like haproxy's", l)
		}
	}
}

// TestSuggestions runs goha's suggestion rules on HAProxy's own command
// table (read from its help) and expects HAProxy's exact replies.
func TestSuggestions(t *testing.T) {
	p := start(t)
	h, _ := send(p.hap["admin"], "help\n")
	var cmds []*runtime.Command
	for _, ln := range strings.Split(h, "\n")[1:] {
		if len(ln) < 44 || !strings.HasPrefix(ln, "  ") {
			continue
		}
		i := strings.Index(ln[41:], ": ")
		if i < 0 {
			continue
		}
		usage := strings.TrimRight(ln[2:41+i], " ")
		help := ln[41+i+2:]
		if usage == "help [<command>]" || usage == "prompt" || usage == "quit" {
			continue
		}
		var words []string
		for _, w := range strings.Fields(usage) {
			if strings.ContainsAny(w[:1], "[<{(@") || strings.Contains(w, "|") {
				break
			}
			words = append(words, w)
		}
		cmds = append(cmds, &runtime.Command{Words: words, Usage: usage, Help: help})
	}
	if len(cmds) < 50 {
		t.Fatalf("read only %d commands from haproxy's help", len(cmds))
	}
	// Inputs whose fifth-best candidates tie ("show foo", "show sesion")
	// are left out: HAProxy breaks ties by its keyword registration order,
	// which its help does not show.
	for _, in := range []string{"foo", "set maxconn", "show", "shutdown sessions", "set wieght",
		"show stats", "sho stat", "get wieght be1/s1", "clear countrs", "show servers stat", "disable srv", "enable",
		"add srv", "show infos", "shw info", "help show", "help set maxconn", "help", "", "show servers"} {
		args := strings.Fields(in)
		isHelp := len(args) > 0 && args[0] == "help"
		if isHelp {
			args = args[1:]
		}
		want, _ := send(p.hap["admin"], in+"\n")
		got := runtime.UsageText(cmds, args, isHelp) + "\n"
		if want != got {
			t.Errorf("%q:\n--- haproxy:\n%s--- goha rules:\n%s", in, want, got)
		}
	}
}

const trackTmpl = `global
    maxconn 1000
%[1]s
defaults
    mode tcp
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe4
    bind 127.0.0.1:%[2]d
    default_backend be4
backend be4
    server k1 127.0.0.1:%[2]d check inter 1h
    server k2 127.0.0.1:%[3]d track k1
backend be5
    server k3 127.0.0.1:%[4]d track be4/k1 weight 5
`

var checkSuffix = regexp.MustCompile(`(UP|DOWN|NOLB|DRAIN) [0-9]/[0-9]`)

// maskChecks hides what HAProxy's first health check of k1 changes.
func maskChecks(s string) string {
	s = checkSuffix.ReplaceAllString(s, "$1")
	lines := strings.Split(s, "\n")
	for i, ln := range lines {
		if strings.Count(ln, ",") > 100 && !strings.HasPrefix(ln, "#") {
			f := strings.Split(ln, ",")
			if f[1] == "k1" {
				// Results of HAProxy's check, present only while checks run.
				for _, j := range []int{36, 37, 38, 56, 65, 69, 98} {
					if f[j] != "" || f[36] != "" {
						f[j] = "C"
					}
				}
			}
			lines[i] = strings.Join(f, ",")
		} else if f := strings.Split(ln, " "); len(f) == 25 && ln[0] >= '0' && ln[0] <= '9' {
			f[10], f[11], f[12] = "C", "C", "C"
			lines[i] = strings.Join(f, " ")
		}
	}
	return strings.Join(lines, "\n")
}

// TestTrack compares how maintenance, drain and health changes reach the
// servers that track another one.
func TestTrack(t *testing.T) {
	p := startWith(t, trackTmpl)
	// k1's address is HAProxy's own frontend, so that its first check
	// passes.
	for _, c := range []string{"show stat", "show servers state",
		"set server be4/k2 health down", "set server be4/k1 state maint", "show stat", "show servers state",
		"set server be4/k1 state drain", "show stat", "show servers state", "set server be4/k1 state ready",
		"show stat", "set server be4/k2 state maint", "set server be4/k1 state maint", "set server be4/k1 state ready",
		"show stat", "show servers state", "set server be4/k2 state ready", "set server be4/k1 health down",
		"show stat", "show servers state", "set server be4/k1 health up", "show stat", "show servers state"} {
		h, g := p.both(t, "admin", c+"\n")
		h, g = maskChecks(maskTimes(mask(h))), maskChecks(maskTimes(mask(g)))
		if h != g {
			t.Errorf("%q:\n--- haproxy:\n%s--- goha:\n%s", c, h, g)
		}
	}
}

const listenerTmpl = `global
    maxconn 1000
%[1]s
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe1
    option socket-stats
    bind 127.0.0.1:%[2]d
    bind 127.0.0.1:%[3]d name second
    default_backend be1
frontend fe2
    mode tcp
    option socket-stats
    bind 127.0.0.1:%[4]d
    default_backend be1
backend be1
    server s1 127.0.0.1:%[5]d
`

// TestListenerRows compares the listener rows of option socket-stats.
func TestListenerRows(t *testing.T) {
	p := startWith(t, listenerTmpl)
	for _, c := range []string{"show stat", "show stat typed", "show stat -1 8 -1", "show stat fe1 8 2", "show stat json"} {
		for _, l := range []string{"admin", "user"} {
			h, g := p.both(t, l, c+"\n")
			h, g = maskTimes(mask(h)), maskTimes(mask(g))
			if h != g {
				t.Errorf("%s %q:\n--- haproxy:\n%s--- goha:\n%s", l, c, h, g)
			}
		}
	}
}
