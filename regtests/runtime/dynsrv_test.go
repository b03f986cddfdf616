//go:build regtest

package runtime_test

import (
	"strings"
	"testing"
)

const dynCfgTmpl = `global
%s
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe1
    bind 127.0.0.1:%d
    default_backend test0
backend test0
    balance random
    server www0 127.0.0.1:%d no-ssl
    default-server ssl verify none
    server www1 127.0.0.1:%d no-ssl
    server www2 127.0.0.1:%d
backend test1
    server www0 127.0.0.1:%d no-ssl
backend tcpbe
    mode tcp
    balance random
`

// TestDynamicServerReplies pins add server's MUX protocol checks and set
// server ssl's rule that only servers given ssl settings (through
// default-server too) may switch it, against HAProxy's replies.
func TestDynamicServerReplies(t *testing.T) {
	p := startWith(t, dynCfgTmpl)
	cmds := []string{
		"set server test0/www0 ssl on", "set server test1/www0 ssl on",
		"set server test0/www1 ssl on", "set server test0/www1 ssl off", "set server test0/www2 ssl off",
		"show servers state test0", "show servers state test1",
		"add server tcpbe/a1 127.0.0.1:1 proto h2", "add server tcpbe/a2 127.0.0.1:1 proto h1",
		"add server tcpbe/a3 127.0.0.1:1 proto fcgi", "add server tcpbe/a4 127.0.0.1:1 proto none",
		"add server tcpbe/a5 127.0.0.1:1 proto foo", "add server test0/b1 127.0.0.1:1 proto h2",
		"add server test0/b2 127.0.0.1:1 proto h1", "add server test0/b3 127.0.0.1:1 proto fcgi",
		"add server test0/b4 127.0.0.1:1 proto none", "add server test0/b5 127.0.0.1:1 proto H2",
		"add server test0/b6 127.0.0.1:1 proto", "show servers state tcpbe",
	}
	// HAProxy speaks these to an HTTP backend's server; goha speaks only
	// HTTP/1 and refuses them rather than use h1 instead.
	gohaOwn := map[string]string{
		"add server test0/b1 127.0.0.1:1 proto h2":   "'proto h2' is not supported by goha.\n\n",
		"add server test0/b3 127.0.0.1:1 proto fcgi": "'proto fcgi' is not supported by goha.\n\n",
		"add server test0/b4 127.0.0.1:1 proto none": "'proto none' is not supported by goha.\n\n",
	}
	for _, c := range cmds {
		h, g := p.both(t, "admin", c+"\n")
		if own, ok := gohaOwn[c]; ok {
			if g != own {
				t.Errorf("%q: goha answered %q, want %q", c, g, own)
			}
			continue
		}
		h, g = maskTimes(mask(h)), maskTimes(mask(g))
		if strings.HasPrefix(c, "show servers state") {
			// the column of seconds since the last change differs by when each started
			h, g = dropCol(h, 9), dropCol(g, 9)
		}
		if h != g {
			t.Errorf("%q:\n--- haproxy:\n%s--- goha:\n%s", c, h, g)
		}
	}
}

func dropCol(s string, n int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) > n && !strings.HasPrefix(l, "#") {
			lines[i] = strings.Join(append(f[:n:n], f[n+1:]...), " ")
		}
	}
	return strings.Join(lines, "\n")
}

const trackCfgTmpl = `global
%s
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe1
    bind 127.0.0.1:%d
    default_backend be1
backend be_first
    server first 127.0.0.1:%d check inter 1h
backend be_check
    balance roundrobin
    server srv_check 127.0.0.1:%d check inter 1h
    server srv_no_check 127.0.0.1:%d
backend be1
    balance roundrobin
    server srv 127.0.0.1:%d check inter 1h
`

// TestDynamicServerTrack pins add server's track: the servers it may not
// track, a dynamic tracker following its server in and out of
// maintenance, and del server unlinking it, against HAProxy's replies and
// states. HAProxy runs the first server's check at once and spreads the
// others over their interval: be_first takes that first check, and the
// servers tracked are checked tens of minutes later, so their states
// change only through the commands.
func TestDynamicServerTrack(t *testing.T) {
	p := startWith(t, trackCfgTmpl)
	cmds := []string{
		"add server be_check/s1 127.0.0.1:1 track be_check/srv_no_check",
		"add server be_check/s1 127.0.0.1:1 track be_check/srv_check",
		"add server be_check/s3 127.0.0.1:1 track be_check/s1",
		"add server be_check/s4 127.0.0.1:1 track nosuch/x",
		"add server be_check/s5 127.0.0.1:1 track be_check/nosuch",
		"add server be_check/s6 127.0.0.1:1 track srv_check",
		"show servers state be_check",
		"add server be1/s1 127.0.0.1:1 track be1/srv", "add server be1/s2 127.0.0.1:1 track be1/srv",
		"add server be1/s3 127.0.0.1:1 track be1/srv",
		"enable server be1/s1", "enable server be1/s2", "enable server be1/s3", "show servers state be1",
		"disable server be1/srv", "show servers state be1", "del server be1/srv", "del server be1/s1",
		"enable server be1/srv", "show servers state be1",
		"disable server be1/s3", "del server be1/s3", "disable server be1/srv", "show servers state be1",
		"enable server be1/srv", "show servers state be1",
		"add server be1/c1 127.0.0.1:1 check", "enable health be1/c1", "add server be1/c2 127.0.0.1:1 agent-check agent-port 1",
		"enable agent be1/c2", "show servers state be1",
	}
	// HAProxy speaks these to an HTTP backend's server; goha speaks only
	// HTTP/1 and refuses them rather than use h1 instead.
	gohaOwn := map[string]string{
		"add server test0/b1 127.0.0.1:1 proto h2":   "'proto h2' is not supported by goha.\n\n",
		"add server test0/b3 127.0.0.1:1 proto fcgi": "'proto fcgi' is not supported by goha.\n\n",
		"add server test0/b4 127.0.0.1:1 proto none": "'proto none' is not supported by goha.\n\n",
	}
	for _, c := range cmds {
		h, g := p.both(t, "admin", c+"\n")
		if own, ok := gohaOwn[c]; ok {
			if g != own {
				t.Errorf("%q: goha answered %q, want %q", c, g, own)
			}
			continue
		}
		h, g = maskTimes(mask(h)), maskTimes(mask(g))
		if strings.HasPrefix(c, "show servers state") {
			h, g = dropCol(h, 9), dropCol(g, 9)
		}
		if h != g {
			t.Errorf("%q:\n--- haproxy:\n%s--- goha:\n%s", c, h, g)
		}
	}
}
