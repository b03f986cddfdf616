package check

import (
	"testing"
	"time"
)

// Texts captured from haproxy 2.6.12 `haproxy -c`, before the dispatcher's
// final period.
func TestServerKeywordErrors(t *testing.T) {
	cases := []struct {
		line []string
		http bool
		want string
	}{
		{w("check", "inter", "10x"), false, "unexpected character 'x' in 'agent-inter' argument of server s1."},
		{w("check", "inter", "0"), false, "invalid value 0 for argument 'inter' of server s1."},
		{w("check", "rise", "0"), false, "'rise' has to be > 0."},
		{w("check", "observe", "layer7"), false, "'layer7' can only be used in http proxies."},
		{w("check", "on-error", "foo"), false, "'on-error' expects one of 'fastinter', 'fail-check', 'sudden-death' or 'mark-down' but got 'foo'"},
		{w("check", "error-limit", "0"), false, "error-limit has to be > 0."},
		{w("check", "fastinter", "99999999999"), false, "timer overflow in argument <99999999999> to <fastinter> of server s1, maximum value is 2147483647 ms (~24.8 days)."},
		{w("check", "observe", "foo"), false, "'observe' expects one of 'none', 'layer4', 'layer7' but got 'foo'"},
		{w("check", "agent-addr", "a:b"), false, "parsing agent-addr failed. Check if 'a:b' is correct address."},
		{w("rise"), false, "'rise' expects an integer argument."},
		{w("port"), false, "'port' expects a port number as argument."},
	}
	for _, c := range cases {
		var o ServerOptions
		var err error
		for i := 0; i < len(c.line) && err == nil; {
			var n int
			n, err = o.Parse(c.line, i, "s1", c.http)
			if n == 0 && err == nil {
				t.Fatalf("%q: keyword %q not handled", c.line, c.line[i])
			}
			i += n
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got  %v\n want %s", c.line, err, c.want)
		}
	}
}

func TestServerOptions(t *testing.T) {
	var o ServerOptions
	line := w("check", "inter", "3s", "fastinter", "500ms", "downinter", "1m", "rise", "3", "fall", "2",
		"port", "8080", "addr", "10.0.0.9", "agent-check", "agent-send", "hi\n", "agent-inter", "100us",
		"observe", "layer7", "error-limit", "5", "on-error", "mark-down", "check-ssl", "check-sni", "x.example")
	for i := 0; i < len(line); {
		n, err := o.Parse(line, i, "s1", true)
		if err != nil || n == 0 {
			t.Fatalf("%q: %v", line[i], err)
		}
		i += n
	}
	if n, _ := o.Parse(w("weight", "10"), 0, "s1", true); n != 0 {
		t.Fatal("weight is not a check keyword")
	}
	cfg := o.Config("be", "s1", "10.0.0.1", 80, nil, Timeouts{Check: time.Second})
	h, a := cfg.Health, cfg.Agent
	if h.Inter != 3*time.Second || h.FastInter != 500*time.Millisecond || h.DownInter != time.Minute ||
		h.Rise != 3 || h.Fall != 2 || h.Port != 8080 || h.Addr != "10.0.0.9" || !h.SSL || h.SNI != "x.example" {
		t.Fatalf("health %+v", h)
	}
	// "port" and "addr" also apply to the agent unless agent-port/addr say otherwise.
	if a.Port != 8080 || a.Addr != "10.0.0.9" || a.AgentSend != "hi\n" || a.Inter != time.Millisecond || a.Rules.Vars["check.agent_string"] != "hi\n" {
		t.Fatalf("agent %+v", a)
	}
	if cfg.Observe != ObserveLayer7 || cfg.ErrorLimit != 5 || cfg.OnError != OnErrorMarkDown {
		t.Fatalf("%+v", cfg)
	}
	o2 := ServerOptions{}
	for _, l := range [][]string{w("agent-port", "9"), w("port", "8")} {
		o2.Parse(l, 0, "s", false)
	}
	if o2.Agent.Port != 9 || o2.Health.Port != 8 {
		t.Fatalf("agent-port must win over port: %+v", o2)
	}
	s := NewServer(cfg, nil)
	if st := s.Health.Snapshot(); st.Rise != 3 || st.Health != 3 || st.Fall != 2 {
		t.Fatalf("%+v", st)
	}
}

func TestInheritServerTransport(t *testing.T) {
	var o ServerOptions
	o.Parse(w("check"), 0, "s", false)
	o.InheritServerTransport(true, true)
	if !o.Health.SSL || !o.Health.SendProxy {
		t.Fatalf("%+v", o.Health)
	}
	o = ServerOptions{}
	o.Parse(w("no-check-ssl"), 0, "s", false)
	o.InheritServerTransport(true, false)
	if o.Health.SSL {
		t.Fatal("no-check-ssl must win")
	}
	o = ServerOptions{}
	o.Parse(w("port", "81"), 0, "s", false)
	o.InheritServerTransport(true, true)
	if o.Health.SSL || o.Health.SendProxy {
		t.Fatal("a check port means a plain check")
	}
}
