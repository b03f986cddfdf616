package check

import (
	"strings"
	"testing"
)

func fuzzWords(s string) []string {
	// Words are separated by NUL so that spaces stay inside a word.
	return strings.Split(s, "\x00")
}

func FuzzParseTCPCheck(f *testing.F) {
	for _, s := range []string{
		"tcp-check\x00connect\x00port\x0080\x00ssl\x00sni\x00x\x00alpn\x00h2,http/1.1",
		"tcp-check\x00send-lf\x00%[var(check.x),hex]",
		"tcp-check\x00expect\x00!\x00rstring\x00^a\x00min-recv\x005\x00on-error\x00%[res.payload(0,0)]",
		"tcp-check\x00expect\x00binary-lf\x00%[str(41)]",
		"tcp-check\x00set-var(check.a)\x00str(x),upper",
		"tcp-check\x00send-binary\x000a0b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words := fuzzWords(s)
		r, err := ParseTCPCheckRule(words, nil)
		if err == nil && r == nil {
			t.Fatal("nil rule without error")
		}
		b := NewBackend("fz", false)
		b.Option(w("option", "tcp-check"))
		b.TCPCheck(words)
		rules, _, _ := b.Finalize("backend")
		if rules == nil {
			return
		}
		// Evaluate every expect against the input bytes, complete or not.
		for _, last := range []bool{false, true} {
			p := &probe{rules: rules, target: &Target{}, in: []byte(s)}
			for _, r := range rules.Set.Rules {
				if r.Action == ActExpect && !p.done {
					p.expect(r, last)
				}
				if r.Action == ActSend && r.Send.fmt != nil {
					p.lf(r.Send.fmt)
				}
			}
		}
	})
}

func FuzzParseHTTPCheck(f *testing.F) {
	for _, s := range []string{
		"http-check\x00send\x00meth\x00GET\x00uri\x00/\x00ver\x00HTTP/1.1\x00hdr\x00Host\x00x",
		"http-check\x00expect\x00status\x00200-299,301",
		"http-check\x00expect\x00hdr\x00name\x00-m\x00reg\x00^x\x00value\x00-m\x00sub\x00y",
		"http-check\x00expect\x00!\x00string\x00ok",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	} {
		f.Add(s, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
	}
	f.Fuzz(func(t *testing.T, s, resp string) {
		b := NewBackend("fz", false)
		b.Option(w("option", "httpchk"))
		b.HTTPCheck(fuzzWords(s))
		rules, _, err := b.Finalize("backend")
		if err != nil {
			return
		}
		for _, eof := range []bool{false, true} {
			p := &probe{rules: rules, target: &Target{}, in: []byte(resp), eof: eof}
			for _, r := range rules.Set.Rules {
				switch r.Action {
				case ActExpect:
					if !p.done {
						p.expectHTTP(r, eof)
					}
				case ActSend:
					p.buildHTTP(r.Send.HTTP)
				}
			}
		}
	})
}

func FuzzAgentReply(f *testing.F) {
	for _, s := range []string{"up\n", "down #x\n", "75%,drain maxconn:10\r\n", "#\n", "\x00\n", "up"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := ParseAgentReply([]byte(s))
		if !ok {
			return
		}
		st, desc := AgentStatus(&r, "")
		if st != StatusChecked && st != StatusL7OK && st != StatusL7Sts {
			t.Fatalf("status %v", st)
		}
		if r.Health != "" && !strings.HasPrefix(desc, "via agent : ") {
			t.Fatalf("desc %q", desc)
		}
		if strings.ContainsAny(r.Health+r.Admin+r.Weight+r.Err, " \t,\r\n") {
			t.Fatalf("separator inside a word: %+v", r)
		}
	})
}

// FuzzProtocolReplies feeds arbitrary server answers to the custom expects
// of the shared rulesets (mysql, ldap, agent) and to the regex ones.
func FuzzProtocolReplies(f *testing.F) {
	f.Add([]byte("\x0a\x00\x00\x00\x0a8.0\x00"))
	f.Add([]byte("\x30\x0c\x02\x01\x01\x61\x07\x0a\x01\x00\x04\x00\x04\x00"))
	f.Add([]byte("\x30\x84\xff\xff\xff\xff"))
	f.Add([]byte("R\x00\x00\x00\x08\x00\x00\x00\x00"))
	f.Add([]byte("220 ok\r\n"))
	sets := []*Rules{
		{Set: MySQLRuleset(true, false), Proto: ProtoMySQL},
		{Set: MySQLRuleset(false, false), Proto: ProtoMySQL},
		{Set: LDAPRuleset(), Proto: ProtoLDAP},
		{Set: PgSQLRuleset(), Proto: ProtoPgSQL},
		{Set: SMTPRuleset(), Proto: ProtoSMTP},
		{Set: RedisRuleset(), Proto: ProtoRedis},
		{Set: SSLHelloRuleset(), Proto: ProtoSSL3},
		AgentRules("x"),
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, rules := range sets {
			for _, last := range []bool{false, true} {
				p := &probe{rules: rules, target: &Target{}, in: in}
				for _, r := range rules.Set.Rules {
					if r.Action == ActExpect && !p.done {
						if p.expect(r, last) != evalContinue {
							break
						}
					}
				}
				if p.done && len(p.out.Desc) > descLen {
					t.Fatalf("desc too long: %d", len(p.out.Desc))
				}
			}
		}
	})
}
