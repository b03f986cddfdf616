package check

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
)

// Shared protocol rulesets are built on first use and never change after,
// so every backend selecting a protocol gets the same pointer.
var shared struct {
	mu sync.Mutex // guards following fields
	m  map[string]*Ruleset
}

func sharedRuleset(name string, lines [][]string, custom map[int]customFunc) *Ruleset {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if rs, ok := shared.m[name]; ok {
		return rs
	}
	rs := &Ruleset{Name: name, Shared: true}
	for i, words := range lines {
		r, err := ParseTCPCheckRule(words, rs.Rules)
		if err != nil {
			panic("check: built-in ruleset " + name + ": " + err.Error())
		}
		if f, ok := custom[i]; ok {
			r.Expect.custom = f
		}
		r.Index = len(rs.Rules)
		rs.Rules = append(rs.Rules, r)
	}
	finalizeRuleset(rs)
	if shared.m == nil {
		shared.m = make(map[string]*Ruleset)
	}
	shared.m[name] = rs
	return rs
}

func tc(words ...string) []string { return append([]string{"tcp-check"}, words...) }

// DefaultRuleset is what a plain "check" runs: connect, nothing else.
func DefaultRuleset() *Ruleset { return sharedRuleset("*tcp-check", nil, nil) }

// RedisRuleset is "option redis-check": PING, expect +PONG.
func RedisRuleset() *Ruleset {
	return sharedRuleset("*redis-check", [][]string{
		tc("send", "*1\r\n$4\r\nPING\r\n"),
		tc("expect", "string", "+PONG\r\n", "error-status", "L7STS",
			"on-error", "%[res.payload(0,0),cut_crlf]", "on-success", "Redis server is ok"),
	}, nil)
}

// sslv3Hello is an SSLv3 CLIENT HELLO offering 39 common RSA/DH suites
// (0x0001-0x001B, 0x002F-0x003A); the time and the 28 "random" bytes are
// filled at send time.
var sslv3Hello = func() string {
	h := "16" + "0300" + "0079" + // handshake record, SSLv3, 0x79 bytes
		"01" + "000075" + "0300" + // client hello, 0x75 bytes, version 3.0
		"%[date(),htonl,hex]" + // gmt_unix_time
		"%[str(HAPROXYSSLCHK\nHAPROXYSSLCHK\n),hex]" + // 28 bytes
		"00" + // no session id
		"004E" // 78 bytes of cipher suites
	for c := 0x01; c <= 0x3A; c++ {
		if c <= 0x1B || c >= 0x2F {
			h += fmt.Sprintf("%04X", c)
		}
	}
	return h + "01" + "00" // one compression method: null
}()

// SSLHelloRuleset is "option ssl-hello-chk".
func SSLHelloRuleset() *Ruleset {
	return sharedRuleset("*ssl-hello-check", [][]string{
		tc("send-binary-lf", sslv3Hello),
		tc("expect", "rbinary", "^1[56]", "min-recv", "5", "ok-status", "L6OK",
			"error-status", "L6RSP", "tout-status", "L6TOUT"),
	}, nil)
}

// SMTPRuleset is "option smtpchk": greeting, then the command held in
// check.smtp_cmd ("HELO localhost" by default) whose whole (possibly
// multi-line) 2xx reply must arrive, then QUIT and its 2xx reply, as
// HAProxy 2.6.12 does. The code and text of the last reply are reported.
func SMTPRuleset() *Ruleset {
	const text = "%[res.payload(4,0),ltrim(' '),cut_crlf]"
	return sharedRuleset("*smtp-check", [][]string{
		tc("connect", "default", "linger"),
		tc("expect", "rstring", "^[0-9]{3}[ \r]", "min-recv", "4", "error-status", "L7RSP",
			"on-error", "%[res.payload(0,0),cut_crlf]"),
		tc("expect", "rstring", "^2[0-9]{2}[ \r]", "min-recv", "4", "error-status", "L7STS",
			"on-error", text, "status-code", "res.payload(0,3)"),
		tc("send-lf", "%[var(check.smtp_cmd)]\r\n"),
		tc("expect", "rstring", "^(2[0-9]{2}-[^\r]*\r\n)*2[0-9]{2}[ \r]", "error-status", "L7STS",
			"on-error", text, "on-success", text, "status-code", "res.payload(0,3)"),
		tc("send", "QUIT\r\n"),
		tc("expect", "rstring", "^2[0-9]{2}[- \r]", "min-recv", "4", "error-status", "L7STS",
			"on-error", text, "on-success", text, "status-code", "res.payload(0,3)"),
	}, nil)
}

// PgSQLRuleset is "option pgsql-check user <u>": a startup message, then
// an AuthenticationOk/cleartext/MD5/... request means the server is alive.
func PgSQLRuleset() *Ruleset {
	return sharedRuleset("*pgsql-check", [][]string{
		tc("connect", "default", "linger"),
		tc("send-binary-lf", "%[var(check.plen),htonl,hex]"+"00030000"+"7573657200"+"%[var(check.username),hex]00"+"00"),
		tc("expect", "!rstring", "^E", "min-recv", "5", "error-status", "L7RSP", "on-error", "%[res.payload(6,0)]"),
		tc("expect", "rbinary", "^52000000[A-Z0-9]{2}000000(00|02|03|04|05|06|07|09|0A)", "min-recv", "9",
			"error-status", "L7STS", "on-success", "PostgreSQL server is ok", "on-error", "PostgreSQL unknown error"),
	}, nil)
}

// MySQLRuleset is "option mysql-check [user <u> [post-41|pre-41]]". Without
// a user only the server greeting is checked; with one, an authentication
// packet and COM_QUIT follow and the reply must be an OK packet.
func MySQLRuleset(withUser, pre41 bool) *Ruleset {
	if !withUser {
		return sharedRuleset("*mysql-check", [][]string{
			tc("connect", "default", "linger"),
			tc("expect", "custom"),
		}, map[int]customFunc{1: mysqlInitHS})
	}
	if pre41 {
		return sharedRuleset("*mysql40-check", [][]string{
			tc("connect", "default", "linger"),
			tc("send-binary-lf", "%[var(check.header),hex]"+"0080"+"000001"+"%[var(check.username),hex]00"+"00"+"010000"+"00"+"01"),
			tc("expect", "custom"),
			tc("expect", "custom"),
		}, map[int]customFunc{2: mysqlInitHS, 3: mysqlOK})
	}
	return sharedRuleset("*mysql41-check", [][]string{
		tc("connect", "default", "linger"),
		tc("send-binary-lf", "%[var(check.header),hex]"+"00820000"+"00800001"+"21"+
			"0000000000000000000000000000000000000000000000"+
			"%[var(check.username),hex]00"+"00"+"010000"+"00"+"01"),
		tc("expect", "custom"),
		tc("expect", "custom"),
	}, map[int]customFunc{2: mysqlInitHS, 3: mysqlOK})
}

// mysqlVars returns the preset variables of a mysql-check with a user: the
// 4-byte header (length + sequence 1) and the user name.
func mysqlVars(user string, pre41 bool) map[string]string {
	n := len(user) + 7
	if !pre41 {
		n += 27
	}
	h := []byte{byte(n), byte(n >> 8), byte(n >> 16), 1}
	return map[string]string{"check.header": string(h), "check.username": user}
}

func pgsqlVars(user string) map[string]string {
	return map[string]string{"check.username": user, "check.plen": strconv.Itoa(15 + len(user))}
}

// LDAPRuleset is "option ldap-check": an anonymous LDAPv3 bind.
func LDAPRuleset() *Ruleset {
	return sharedRuleset("*ldap-check", [][]string{
		tc("send-binary", "300C020101600702010304008000"),
		tc("expect", "rbinary", "^30", "min-recv", "14", "on-error", "Not LDAPv3 protocol"),
		tc("expect", "custom"),
	}, map[int]customFunc{2: ldapBindRsp})
}

// AgentRuleset is the ruleset of every agent check: send the agent string
// (check.agent_string, from agent-send), parse the reply line.
func AgentRuleset() *Ruleset {
	return sharedRuleset("*agent-check", [][]string{
		tc("send-lf", "%[var(check.agent_string)]"),
		tc("expect", "custom"),
	}, map[int]customFunc{1: agentExpect})
}

// AgentRules returns the Rules of an agent check sending agentSend.
func AgentRules(agentSend string) *Rules {
	r := &Rules{Set: AgentRuleset(), Proto: ProtoAgent, Flags: RulesShared}
	if agentSend != "" {
		r.Vars = map[string]string{"check.agent_string": agentSend}
	}
	return r
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func mysqlPacket(p *probe, r *Rule, off int, lastRead bool) evalRet {
	in := p.in
	if len(in) < off+4 {
		if !lastRead {
			return evalWait
		}
		return p.fail(r, StatusL7Rsp, false, "")
	}
	plen := int(in[off]) | int(in[off+1])<<8 | int(in[off+2])<<16
	if len(in) < off+plen+4 {
		if !lastRead {
			return evalWait
		}
		return p.fail(r, StatusL7Rsp, false, "")
	}
	if len(in) > off+4 && in[off+4] == 0xff {
		code := 0
		if len(in) >= off+7 {
			code = int(binary.LittleEndian.Uint16(in[off+5:]))
		}
		desc := ""
		if len(in) > off+7 {
			desc = cString(in[off+7:])
		}
		msg := p.expectErrorMsg(r, false, desc)
		p.out.Code = code
		p.setStatus(StatusL7Sts, msg)
		return evalStop
	}
	if nextActive(p.rules.Set.Rules, ruleIndexOf(p.rules.Set.Rules, r)) >= 0 {
		return evalContinue
	}
	st := r.Expect.OKStatus
	if st == StatusUnknown {
		st = StatusL7OK
	}
	ver := ""
	if len(in) > 5 {
		ver = cString(in[5:])
	}
	p.setStatus(st, ver)
	return evalStop
}

func ruleIndexOf(rules []*Rule, r *Rule) int {
	for i, x := range rules {
		if x == r {
			return i
		}
	}
	return len(rules)
}

func mysqlInitHS(p *probe, r *Rule, lastRead bool) evalRet {
	return mysqlPacket(p, r, 0, lastRead)
}

func mysqlOK(p *probe, r *Rule, lastRead bool) evalRet {
	if len(p.in) < 3 {
		if !lastRead {
			return evalWait
		}
		return p.fail(r, StatusL7Rsp, false, "")
	}
	hs := 4 + (int(p.in[0]) | int(p.in[1])<<8 | int(p.in[2])<<16)
	return mysqlPacket(p, r, hs, lastRead)
}

func ldapBindRsp(p *probe, r *Rule, lastRead bool) evalRet {
	in := p.in
	short := func() evalRet {
		if !lastRead {
			return evalWait
		}
		return p.fail(r, StatusL7Rsp, false, "")
	}
	notLDAP := func() evalRet { return p.fail(r, StatusL7Rsp, false, "Not LDAPv3 protocol") }
	if len(in) < 2 {
		return short()
	}
	pos := 1
	nbytes := 0
	msglen := 0
	if in[pos]&0x80 != 0 {
		nbytes = int(in[pos] & 0x7f)
		if len(in) < 1+nbytes {
			return short()
		}
		switch nbytes {
		case 4:
			if len(in) < pos+5 {
				return short()
			}
			msglen = int(binary.BigEndian.Uint32(in[pos+1:]))
		case 2:
			if len(in) < pos+3 {
				return short()
			}
			msglen = int(binary.BigEndian.Uint16(in[pos+1:]))
		default:
			return notLDAP()
		}
	} else {
		msglen = int(in[pos])
	}
	pos += 1 + nbytes
	if len(in) < 2+nbytes+msglen {
		return short()
	}
	if len(in) < pos+4 {
		return short()
	}
	if string(in[pos:pos+4]) != "\x02\x01\x01\x61" {
		return notLDAP()
	}
	pos += 4
	if len(in) <= pos {
		return short()
	}
	nbytes = 0
	if in[pos]&0x80 != 0 {
		nbytes = int(in[pos] & 0x7f)
	}
	pos += 1 + nbytes
	if len(in) < pos+3 {
		return short()
	}
	if in[pos] != 0x0a || in[pos+1] != 0x01 {
		return notLDAP()
	}
	pos += 2
	if code := int(in[pos]); code != 0 {
		msg := p.expectErrorMsg(r, false, "See RFC: http://tools.ietf.org/html/rfc4511#section-4.1.9")
		p.out.Code = code
		p.setStatus(StatusL7Sts, msg)
		return evalStop
	}
	st := r.Expect.OKStatus
	if st == StatusUnknown {
		st = StatusL7OK
	}
	p.setStatus(st, "Success")
	return evalStop
}
