package stream

import (
	"bytes"
	"errors"
	"fmt"

	"goha/core/diag"
	"goha/core/http1"
	"goha/core/sample"
)

// http-request auth: the 401 challenge, and the configuration errors of
// the authentication fetches, which HAProxy reports once every section is
// read, in words of their own.

// compileAuth reads `auth [realm <realm>]`; the reply is built by
// finishAuth, once the proxy's error files are known.
func compileAuth(r *httpRule, args []string) error {
	r.act = actAuth
	if len(args) > 1 && args[1] == "realm" {
		if len(args) < 3 || args[2] == "" {
			return errors.New("missing realm value.\n")
		}
		r.name = args[2]
	}
	return nil
}

// finishAuth builds the challenges of p's auth rules: p's 401 error file,
// or HAProxy's built-in message, with its WWW-Authenticate fields replaced
// by `Basic realm="<realm>"`, the realm being p's name unless the rule
// names one.
func (proc *Process) finishAuth(p *proxy, d *diag.Collector) {
	proc.authReplies(p, p.reqRules, d)
}

// authReplies builds the challenges of the auth rules among rules, p's.
func (proc *Process) authReplies(p *proxy, rules []*httpRule, d *diag.Collector) {
	for _, r := range rules {
		if r.act != actAuth {
			continue
		}
		realm := r.name
		if realm == "" {
			realm = p.Name
		}
		if rep := p.challengeReply(realm, d); rep != nil {
			r.reply, r.status = rep, 401
		}
	}
}

// challengeReply is p's 401 (its error file, or HAProxy's built-in
// message) asking for Basic credentials for realm; nil, with an ALERT,
// when it cannot be made.
func (p *proxy) challengeReply(realm string, d *diag.Collector) *http1.Reply {
	raw := http1.RawError(401)
	if er := p.errReply[401]; er != nil {
		if b := er.Bytes(http1.ConnNone); len(b) > 0 {
			raw = b
		}
	}
	rep, err := http1.NewReply(challenge(raw, realm))
	if err != nil {
		d.Alertf(p.Pos, "%s: 401 challenge: %v", p.Name, err)
		return nil
	}
	return rep
}

// challenge is the raw 401 response with its WWW-Authenticate fields
// dropped and the realm's added after the others, as HAProxy's
// http_action_auth edits the message.
func challenge(raw []byte, realm string) []byte {
	end := bytes.Index(raw, []byte("\r\n\r\n"))
	if end < 0 {
		return raw
	}
	head, body := raw[:end+2], raw[end+4:]
	var out []byte
	for len(head) > 0 {
		i := bytes.Index(head, []byte("\r\n"))
		line := head[:i+2]
		head = head[i+2:]
		name, _, _ := bytes.Cut(line, []byte(":"))
		if len(out) > 0 && bytes.EqualFold(bytes.TrimSpace(name), []byte("www-authenticate")) {
			continue
		}
		out = append(out, line...)
	}
	out = fmt.Appendf(out, "WWW-Authenticate: Basic realm=\"%s\"\r\n\r\n", realm)
	return append(out, body...)
}

// authError reports err in HAProxy's words when it is an authentication
// fetch's error, which HAProxy words without the rule around it; ok false
// leaves err to the caller. acl is the named ACL being compiled, "" in a
// rule; kw the rule's keyword ("http-request"), "" for an ACL line.
func authError(d *diag.Collector, p *proxy, pos diag.Pos, acl, kw string, err error) bool {
	var re *sample.RefError
	if errors.As(err, &re) {
		ctx := "ACL keyword '" + re.Kw + "' in"
		if !re.ACL {
			ctx = fmt.Sprintf("sample fetch keyword '%s' in %s expression in", re.Kw, kw)
		}
		// The position is part of the message, not the diagnostic's:
		// HAProxy reports it once reading is over, with the checks that
		// follow, not as a line that failed to parse.
		d.Add(diag.Diag{Sev: diag.Alert,
			Msg: fmt.Sprintf("parsing [%s]: %s in arg %d of %s proxy '%s'.", pos, re.What, re.Arg, ctx, p.Name)})
		return true
	}
	var ge *sample.GroupError
	if errors.As(err, &ge) {
		for _, m := range ge.Msgs {
			d.Alertf(diag.Pos{}, "proxy %s: acl %s %s(): %s", p.Name, acl, ge.Kw, m)
		}
		return true
	}
	return false
}
