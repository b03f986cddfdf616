package check

import (
	"errors"
	"goha/core/diag"
	"strings"
	"testing"
)

// Error texts below were captured from haproxy 2.6.12 (`haproxy -c`), after
// the "parsing [file:line] : " prefix.
func TestRuleParseErrors(t *testing.T) {
	cases := []struct {
		words []string
		http  bool
		want  string
	}{
		{w("tcp-check", "foo"), false, "'tcp-check' only supports 'comment', 'connect', 'send', 'send-binary', 'expect', 'set-var-fmt(*)', 'set-var(*)', 'unset-var(*)'. but got 'foo'"},
		{w("tcp-check", "send"), false, "'tcp-check send' : 'string' expects a send as argument."},
		{w("tcp-check", "send-binary", "0g"), false, "'tcp-check send-binary' : '0g' invalid binary string (an hex digit is expected (found 'g')).\n."},
		{w("tcp-check", "send-binary", "abc"), false, "'tcp-check send-binary' : 'abc' invalid binary string (an even number of hex digit is expected).\n."},
		{w("tcp-check", "expect"), false, "'tcp-check expect' : expects at least a matching pattern as arguments."},
		{w("tcp-check", "expect", "string"), false, "'tcp-check expect' : 'string' expects a <pattern> as argument."},
		{w("tcp-check", "expect", "status", "200"), false, "'tcp-check expect' : 'only supports min-recv, '[!]binary', '[!]string', '[!]rstring', '[!]string-lf''[!]rbinary', '[!]binary-lf' or comment but got 'status' as argument.."},
		{w("tcp-check", "expect", "string", "a", "binary", "b"), false, "'tcp-check expect' : only on pattern expected."},
		{w("tcp-check", "expect", "min-recv"), false, "'tcp-check expect' : 'min-recv' expects a integer as argument."},
		{w("tcp-check", "expect", "string", "x", "error-status", "FOO"), false, "'tcp-check expect' : 'error-status' only supports 'L4CON', 'L6RSP', 'L7RSP' or 'L7STS' status (got 'FOO').."},
		{w("tcp-check", "expect", "string", "x", "ok-status", "FOO"), false, "'tcp-check expect' : 'ok-status' only supports 'L4OK', 'L6OK', 'L7OK' or 'L7OKC' status (got 'FOO').."},
		{w("tcp-check", "expect", "string", "x", "tout-status", "FOO"), false, "'tcp-check expect' : 'tout-status' only supports 'L4TOUT', 'L6TOUT' or 'L7TOUT' status (got 'FOO').."},
		{w("tcp-check", "expect", "!", "comment", "x"), false, "'tcp-check expect' : [!] not supported with 'comment'."},
		{w("tcp-check", "connect", "port", "0"), false, "'tcp-check connect' : expects a valid TCP port (from range 1 to 65535) or a sample expression, got 0.."},
		{w("tcp-check", "connect", "port", "70000"), false, "'tcp-check connect' : expects a valid TCP port (from range 1 to 65535) or a sample expression, got 70000.."},
		{w("tcp-check", "connect", "foo"), false, "'tcp-check connect' : expects 'comment', 'port', 'addr', 'send-proxy', 'ssl', 'sni', 'alpn' or 'via-socks4', 'linger', 'default' but got 'foo' as argument.."},
		{w("tcp-check", "send", "x", "comment"), false, "'tcp-check send' : 'comment' expects a string as argument.."},
		{w("tcp-check", "send", "x", "bar"), false, "'tcp-check send' : expects 'comment' but got 'bar' as argument.."},
		{w("tcp-check", "comment"), false, "'tcp-check comment' : expects a string as argument."},
		{w("tcp-check", "expect", "min-recv", "-2", "string", "x"), false, "'tcp-check expect' : 'min-recv' expects -1 or an integer from 0 to INT_MAX."},
		{w("http-check", "expect", "status", "200-100"), true, "'http-check expect' : invalid range of status codes '200-100'."},
		{w("http-check", "expect", "status", "2x0"), true, "'http-check expect' : invalid character 'x' in the list of status codes."},
		{w("http-check", "expect", "binary", "x"), true, "'http-check expect' : 'only supports min-recv, [!]string', '[!]rstring', '[!]string-lf', '[!]status', '[!]rstatus', [!]hdr, [!]fhdr or comment but got 'binary' as argument.."},
		{w("http-check", "expect", "hdr", "foo"), true, "'http-check expect' : 'hdr' expects at the name keyword as first argument followed by a pattern."},
		{w("http-check", "expect", "hdr", "name", "x", "-m", "foo", "y"), true, "'http-check expect' : 'only supports min-recv, [!]string', '[!]rstring', '[!]string-lf', '[!]status', '[!]rstatus', [!]hdr, [!]fhdr or comment but got '-m' as argument.."},
		{w("http-check", "send", "foo"), true, "'http-check send' : expects 'comment', 'meth', 'uri', 'uri-lf', 'ver', 'hdr', 'body' or 'body-lf' but got 'foo' as argument.."},
		{w("http-check", "send", "hdr", "x"), true, "'http-check send' : 'hdr' expects <name> and <value> as arguments."},
		{w("tcp-check", "send-lf", "%[nosuch]"), false, "'tcp-check send-lf' : '%[nosuch]' invalid log-format string (failed to parse sample expression <nosuch]> : unknown fetch method 'nosuch').\n."},
		{w("tcp-check", "send-lf", "%[str(a)"), false, "'tcp-check send-lf' : '%[str(a)' invalid log-format string (missing ']' after 'str(a)').\n."},
		{w("tcp-check", "send-lf", "%[req.hdr(x)]"), false, "'tcp-check send-lf' : '%[req.hdr(x)]' invalid log-format string (sample fetch <req.hdr(x)]> may not be reliably used here because it needs 'HTTP request headers' which is not available here).\n."},
		{w("tcp-check", "set-var(check.x)", "nosuch"), false, "'tcp-check set-var(check.x)' : 'set-var' : unknown fetch method 'nosuch'."},
		{w("tcp-check", "set-var(check.y)", "str(a),nope"), false, "'tcp-check set-var(check.y)' : 'set-var' : unknown converter 'nope'."},
		{w("tcp-check", "set-var(check.x)", "req.len"), false, "'tcp-check set-var(check.x)' : 'set-var' : fetch method 'set-var(check.x)' extracts information from 'request buffer', none of which is available here."},
		{w("tcp-check", "expect", "string", "x", "status-code", "nosuch"), false, "'tcp-check expect' : error detected while parsing status-code expression : unknown fetch method 'nosuch'."},
		{w("tcp-check", "expect", "string", "x", "status-code", "req.len"), false, "'tcp-check expect' : error detected while parsing status-code expression :  fetch method 'req.len' extracts information from 'request buffer', none of which is available here."},
		{w("http-check", "expect", "string-lf", "%[str(a),nosuchconv]"), true, "'http-check expect' : '%[str(a),nosuchconv]' invalid log-format string (failed to parse sample expression <str(a),nosuchconv]> : unknown converter 'nosuchconv').\n."},
		{w("http-check", "expect", "hdr", "name", "x", "value-lf", "%[res.fhdr(x),nope]"), true, "'http-check expect' : 'x' invalid log-format string (failed to parse sample expression <res.fhdr(x),nope]> : unknown converter 'nope').\n."},
		{w("http-check", "expect", "hdr", "name-lf", "%[nope]", "value", "y"), true, "'http-check expect' : '%[nope]' invalid log-format string (failed to parse sample expression <nope]> : unknown fetch method 'nope').\n."},
		{w("http-check", "send", "hdr", "x", "%[nosuch]"), true, "'http-check send' : failed to parse sample expression <nosuch]> : unknown fetch method 'nosuch'."},
		{w("http-check", "send", "hdr", "x", "%[req.len]"), true, "'http-check send' : sample fetch <req.len]> may not be reliably used here because it needs 'request buffer' which is not available here."},
		{w("http-check", "send", "uri-lf", "%[nosuch]"), true, "'http-check send' : '%[nosuch]' invalid log-format string (failed to parse sample expression <nosuch]> : unknown fetch method 'nosuch').\n."},
		{w("http-check", "bar"), true, "'http-check' only supports 'disable-on-404', 'send-state', 'comment', 'connect', 'send', 'expect', 'set-var-fmt(*)', 'set-var(*)', 'unset-var(*)'. but got 'bar'"},
	}
	for _, c := range cases {
		var err error
		if c.http {
			_, err = ParseHTTPCheckRule(c.words, nil)
		} else {
			_, err = ParseTCPCheckRule(c.words, nil)
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got  %q\n want %q", c.words, err, c.want)
		}
	}
	prev := []*Rule{{Action: ActSend, Send: &SendRule{Kind: SendString}}}
	_, err := ParseTCPCheckRule(w("tcp-check", "connect"), prev)
	want := "'tcp-check connect' : first step MUST also be a 'connect', optionally preceded by a 'set-var', an 'unset-var' or a 'comment', when there is a 'connect' step in the tcp-check ruleset."
	if err == nil || err.Error() != want {
		t.Errorf("got %q", err)
	}
}

func TestRegexErrorShape(t *testing.T) {
	_, err := ParseTCPCheckRule(w("tcp-check", "expect", "rstring", "("), nil)
	if err == nil || !strings.HasPrefix(err.Error(), "'tcp-check expect' : regex '(' is invalid (error=") {
		t.Fatalf("got %v", err)
	}
}

func TestOptionErrors(t *testing.T) {
	cases := []struct {
		words []string
		want  string
	}{
		{w("option", "pgsql-check"), "'option pgsql-check' expects 'user <username>' as argument."},
		{w("option", "pgsql-check", "user"), "'option pgsql-check' expects 'user <username>' as argument."},
		{w("option", "mysql-check", "foo", "x"), "'option mysql-check' only supports optional values: 'user' (got 'foo')."},
		{w("option", "mysql-check", "user", "u", "v"), "keyword 'user' only supports 'post-41' and 'pre-41' (got 'v')."},
		{w("option", "mysql-check", "user"), "'option mysql-check user' expects <username> as argument."},
		{w("option", "redis-check", "x"), "'option redis-check' cannot handle unexpected argument 'x'."},
		{w("option", "smtpchk", "EHLO", "a", "b"), "'option smtpchk' cannot handle unexpected argument 'b'."},
	}
	for _, c := range cases {
		err := NewBackend("b2", false).Option(c.words)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got  %q\n want %q", c.words, err, c.want)
		}
	}
	err := NewBackend("b", false).Option(w("option", "httpchk", "GET", "/", "HTTP/1.1\r\nHost: x"))
	var warn *diag.Warn
	if !errors.As(err, &warn) || !strings.Contains(warn.Msg, "hiding headers or body at the end of the version string is deprecated") {
		t.Fatalf("got %v", err)
	}
}

func TestFinalize(t *testing.T) {
	// Comments are folded into the rules that follow; the implicit
	// connect comes first with step 0.
	b := NewBackend("be", false)
	b.Option(w("option", "tcp-check"))
	b.TCPCheck(w("tcp-check", "comment", "greeting"))
	b.TCPCheck(w("tcp-check", "expect", "string", "220"))
	r, warns, err := b.Finalize("backend")
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	rules := r.Set.Rules
	if len(rules) != 2 || !rules[0].Connect.Implicit || stepID(rules[0]) != 0 ||
		rules[1].Comment != "greeting" || stepID(rules[1]) != 2 {
		t.Fatalf("rules %+v", rules)
	}
	// Finalizing twice (a defaults ruleset used by several backends) must
	// not add a second connect.
	finalizeRuleset(r.Set)
	if len(r.Set.Rules) != 2 {
		t.Fatal("finalize not idempotent")
	}

	// tcp-check rules without option tcp-check are ignored, with a warning.
	b = NewBackend("be", false)
	b.TCPCheck(w("tcp-check", "send", "x"))
	b.HTTPCheck(w("http-check", "send", "meth", "GET"))
	b.HTTPCheck(w("http-check", "disable-on-404"))
	r, warns, err = b.Finalize("backend")
	wantWarns := []string{
		"backend 'be' uses http-check rules without 'option httpchk', so the rules are ignored.",
		"backend 'be' uses tcp-check rules without 'option tcp-check', so the rules are ignored.",
		"'disable-on-404' will be ignored for backend 'be' (requires 'option httpchk').",
	}
	if err != nil || strings.Join(warns, "\n") != strings.Join(wantWarns, "\n") || r.Set != DefaultRuleset() {
		t.Fatalf("warns %q err %v", warns, err)
	}

	// Rules given before the option are picked up by it.
	b = NewBackend("be", false)
	b.TCPCheck(w("tcp-check", "send", "x"))
	b.Option(w("option", "tcp-check"))
	r, warns, _ = b.Finalize("backend")
	if len(warns) != 0 || len(r.Set.Rules) != 2 || r.Proto != ProtoTCP {
		t.Fatalf("warns %q rules %d", warns, len(r.Set.Rules))
	}
}

func TestHTTPRulesMerge(t *testing.T) {
	// "http-check send" after "option httpchk" completes the implicit
	// request instead of adding a second one.
	r := backendRules(t, w("option", "httpchk", "GET", "/a"),
		w("http-check", "send", "hdr", "Host", "h", "ver", "HTTP/1.1"),
		w("http-check", "expect", "status", "200"))
	rules := r.Set.Rules
	if len(rules) != 3 || rules[1].Send.HTTP.Method != "GET" || rules[1].Send.HTTP.URI != "/a" ||
		rules[1].Send.HTTP.Version != "HTTP/1.1" || len(rules[1].Send.HTTP.Headers) != 1 {
		t.Fatalf("rules %+v", rules[1].Send.HTTP)
	}
	// The implicit expect "status 200-399" closes a ruleset ending with a send.
	r = backendRules(t, w("option", "httpchk"))
	last := r.Set.Rules[len(r.Set.Rules)-1]
	if last.Action != ActExpect || last.Expect.Kind != ExpectHTTPStatus || last.Expect.Codes[0] != [2]int{200, 399} {
		t.Fatalf("last rule %+v", last)
	}
	// An expect right after a connect has nothing to judge.
	b := NewBackend("be", false)
	b.Option(w("option", "httpchk"))
	b.HTTPCheck(w("http-check", "connect"))
	err := b.HTTPCheck(w("http-check", "connect"))
	if err == nil || err.Error() != "'http-check connect' : unable to add http-check connect rule at step 2 (missing expect rule)." {
		t.Fatalf("got %v", err)
	}
}

func TestInheritDefaults(t *testing.T) {
	def := NewBackend("", true)
	def.Option(w("option", "tcp-check"))
	def.TCPCheck(w("tcp-check", "send", "PING\r\n"))
	be := NewBackend("be", false)
	be.InheritFrom(def)
	r, _, err := be.Finalize("backend")
	if err != nil || r.Set != def.tcpRS || r.Flags&RulesInherited == 0 {
		t.Fatalf("rules %+v err %v", r, err)
	}
	be2 := NewBackend("be2", false)
	be2.InheritFrom(def)
	be2.Option(w("option", "tcp-check"))
	r2, _, _ := be2.Finalize("backend")
	if r2.Set != r.Set {
		t.Fatal("option tcp-check must keep the inherited ruleset")
	}
	// A backend with its own tcp-check lines gets its own ruleset.
	be3 := NewBackend("be3", false)
	be3.InheritFrom(def)
	be3.TCPCheck(w("tcp-check", "send", "x"))
	r3, _, _ := be3.Finalize("backend")
	if r3.Set == r.Set || r3.Flags&RulesInherited != 0 {
		t.Fatal("own rules must not reuse the defaults ruleset")
	}
	// Protocol options in defaults carry their variables.
	def = NewBackend("", true)
	def.Option(w("option", "smtpchk", "EHLO", "d"))
	be = NewBackend("be", false)
	be.InheritFrom(def)
	r, _, _ = be.Finalize("backend")
	if r.Set != SMTPRuleset() || r.Vars["check.smtp_cmd"] != "EHLO d" {
		t.Fatalf("%+v", r)
	}
}

func TestSampleAndLogFormat(t *testing.T) {
	p := &probe{rules: &Rules{Vars: map[string]string{"check.n": "23", "check.s": "ab"}},
		target: &Target{Backend: "be1", Server: "srv1"}, in: []byte("250 ok\r\nnext")}
	p.initVars()
	cases := map[string]string{
		"x%[var(check.n),htonl,hex]y":              "x00000017y",
		"%[var(check.s),hex]%%":                    "6162%",
		"%[res.payload(4,0),cut_crlf]":             "ok",
		"%[res.payload(0,3)]":                      "250",
		"%[res.payload(3,0),ltrim(' '),cut_crlf]!": "ok!",
		"%[var(check.missing)]-":                   "-",
		"%[str(A\nB),hex]":                         "410A42",
		"%[str(a),upper]%[str(B),lower]":           "Ab",
		"%[res.payload(100,1)]":                    "",
		"%[bin(00410042)]":                         "",
		"%[bin(41004200)]|":                        "A|",
		"%[res.len]":                               "12",
		"%[be_name]/%[srv_name]":                   "be1/srv1",
		"%[var(txn.x)]":                            "",
		"%[int(23),hex]":                           "0000000000000017",
	}
	for in, want := range cases {
		f, err := compileLF(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := string(p.lf(f)); got != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
	for bad, msg := range map[string]string{
		"%[foo()]":            "failed to parse sample expression <foo()]> : unknown fetch method 'foo'",
		"%[str(a),nope]":      "failed to parse sample expression <str(a),nope]> : unknown converter 'nope'",
		"%[res.payload(a,b)]": "failed to parse sample expression <res.payload(a,b)]> : fetch method 'res.payload' : failed to parse 'a' as type 'integer' at position 1",
		"%[str(a)":            "missing ']' after 'str(a)'",
		"x%[req.len]y":        "sample fetch <req.len]y> may not be reliably used here because it needs 'request buffer' which is not available here",
		"%[path]":             "sample fetch <path]> may not be reliably used here because it needs 'HTTP request headers' which is not available here",
	} {
		if _, err := compileLF(bad); err == nil || err.Error() != msg {
			t.Errorf("%q: got %v, want %q", bad, err, msg)
		}
	}
	if _, err := compileLF("%t"); err == nil {
		t.Errorf("%%t accepted")
	}
}
