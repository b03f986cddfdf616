package core

import (
	"testing"

	"goha/core/config"
	"goha/core/diag"
)

// The socks4 server keyword reports bad addresses in HAProxy 2.6's words
// (taken from haproxy -c on the same lines).
func TestSocks4KeywordErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"socks4"}, "'server px/s' : 'socks4' expects <addr>:<port> as argument.."},
		{[]string{"socks4", "1.2.3.4"}, "'server px/s' : 'socks4 1.2.3.4' : missing port specification in '1.2.3.4'."},
		{[]string{"socks4", "1.2.3.4:"}, "'server px/s' : 'socks4 1.2.3.4:' : missing port specification in '1.2.3.4:'."},
		{[]string{"socks4", "1.2.3.4:0"}, "'server px/s' : 'socks4 1.2.3.4:0' : invalid port '0'."},
		{[]string{"socks4", "1.2.3.4:70000"}, "'server px/s' : 'socks4 1.2.3.4:70000' : invalid port '70000'."},
		{[]string{"socks4", "1.2.3.4:1-2"}, "'server px/s' : 'socks4 1.2.3.4:1-2' : port range not permitted here in '1.2.3.4:1-2'."},
		{[]string{"socks4", "1.2.3.4:abc"}, "'server px/s' : \n  'socks4 1.2.3.4:abc' : invalid character 'a' in port number 'abc' in '1.2.3.4:abc'\n  \n."},
		{[]string{"socks4", "no.such.host.invalid:80"}, "'server px/s' : \n  'socks4 no.such.host.invalid:80' : invalid address: 'no.such.host.invalid' in 'no.such.host.invalid:80'\n  \n."},
		{[]string{"socks4", "unix@/tmp/s"}, "'server px/s' : 'socks4 unix@/tmp/s' is not supported by goha."},
	} {
		line := append([]string{"server", "s", "127.0.0.1:80"}, c.args...)
		ds := gapLine(t, "backend", line)
		if len(ds) != 1 || ds[0].Sev != diag.Alert || ds[0].Msg != c.want {
			t.Errorf("%q: got %v\n want ALERT %q", c.args, ds, c.want)
		}
	}
}

func TestSocks4Keyword(t *testing.T) {
	at := diag.Pos{File: "t.cfg", Line: 2}
	secs := []config.Section{{Kind: "backend", Name: "px", Pos: diag.Pos{File: "t.cfg", Line: 1}, Lines: []config.Line{
		{Pos: at, Words: []string{"default-server", "socks4", "[::1]:1080"}},
		{Pos: at, Words: []string{"server", "s1", "127.0.0.1:80", "check-via-socks4", "check"}},
		{Pos: at, Words: []string{"server", "s2", "127.0.0.1:80", "socks4", ":1081"}},
		{Pos: at, Words: []string{"option", "spop-check"}},
	}}}
	d := &diag.Collector{}
	cfg := Build(secs, d)
	for _, x := range d.All() {
		if x.Pos == at {
			t.Fatalf("diagnostic: %v", x)
		}
	}
	p := cfg.Proxies[len(cfg.Proxies)-1]
	s1, s2 := p.Servers[0], p.Servers[1]
	if s1.Socks4 != "[::1]:1080" || !s1.CheckViaSocks4 || s2.Socks4 != "0.0.0.0:1081" || s2.CheckViaSocks4 {
		t.Fatalf("s1 %q %v, s2 %q %v", s1.Socks4, s1.CheckViaSocks4, s2.Socks4, s2.CheckViaSocks4)
	}
	if ds := gapLine(t, "backend", []string{"option", "spop-check", "foo"}); len(ds) != 1 || ds[0].Msg != "'option spop-check' cannot handle unexpected argument 'foo'." {
		t.Fatalf("option spop-check foo: %v", ds)
	}
}
