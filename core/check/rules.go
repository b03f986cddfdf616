package check

import (
	"regexp"

	"goha/core/sample"
)

// Action is the kind of a tcp-check rule.
type Action uint8

const (
	ActConnect Action = iota
	ActSend
	ActExpect
	ActComment
	ActSetVar
	ActUnsetVar
)

// Proto tells which protocol check a ruleset implements. Values follow
// HAProxy's TCPCHK_RULES_* protocol bits.
type Proto uint16

const (
	ProtoDefault Proto = 0     // plain "check": connect only
	ProtoPgSQL   Proto = 0x10  // option pgsql-check
	ProtoRedis   Proto = 0x20  // option redis-check
	ProtoSMTP    Proto = 0x30  // option smtpchk
	ProtoHTTP    Proto = 0x40  // option httpchk / http-check
	ProtoMySQL   Proto = 0x50  // option mysql-check
	ProtoLDAP    Proto = 0x60  // option ldap-check
	ProtoSSL3    Proto = 0x70  // option ssl-hello-chk
	ProtoAgent   Proto = 0x80  // agent-check
	ProtoSPOP    Proto = 0x90  // option spop-check
	ProtoTCP     Proto = 0xFF0 // option tcp-check with tcp-check rules
)

// ConnectRule holds the options of a connect rule.
type ConnectRule struct {
	Port      int    // 0: the check port, else this port
	Addr      string // "" or host[:port] overriding the check address
	Default   bool   // use the server's check settings (ssl, send-proxy, ...)
	Implicit  bool   // added by the engine, not written by the user
	SendProxy bool
	ViaSocks4 bool
	SSL       bool
	Linger    bool
	SNI       string
	ALPN      []string
}

// SendKind is what a send rule emits.
type SendKind uint8

const (
	SendString SendKind = iota
	SendBinary
	SendStringLF
	SendBinaryLF
	SendHTTP
)

// HTTPHeader is one header of an http-check send rule; the value is a
// log-format string.
type HTTPHeader struct {
	Name  string
	value *sample.Expr
}

// HTTPRequest is the request of an http-check send rule.
type HTTPRequest struct {
	Method     string // "" means OPTIONS
	URI        string // "" means /
	Version    string // "" means HTTP/1.0
	Headers    []HTTPHeader
	Body       string
	uriFmt     *sample.Expr
	bodyFmt    *sample.Expr
	FromOption bool // comes from "option httpchk"
}

// SendRule holds the payload of a send rule.
type SendRule struct {
	Kind SendKind
	Data []byte // SendString, SendBinary
	fmt  *sample.Expr
	HTTP *HTTPRequest
}

// ExpectKind is what an expect rule matches.
type ExpectKind uint8

const (
	ExpectString ExpectKind = iota
	ExpectRString
	ExpectBinary
	ExpectRBinary
	ExpectStringLF
	ExpectBinaryLF
	ExpectCustom
	ExpectHTTPStatus
	ExpectHTTPRStatus
	ExpectHTTPHeader
	ExpectHTTPBody
	ExpectHTTPRBody
	ExpectHTTPBodyLF
)

// Header match methods of "http-check expect hdr".
const (
	MatchStr = iota
	MatchBeg
	MatchEnd
	MatchSub
	MatchReg
	MatchNone // no value pattern: the name alone must match
)

// customFunc evaluates a custom expect (agent, mysql, ldap). It returns
// evalWait for more data, evalContinue or evalStop after setting p.status.
type customFunc func(p *probe, r *Rule, lastRead bool) evalRet

// ExpectRule holds the options of an expect rule.
type ExpectRule struct {
	Kind       ExpectKind
	Inverse    bool
	MinRecv    int // -1: not set
	Data       []byte
	re         *regexp.Regexp
	fmt        *sample.Expr
	Codes      [][2]int
	onSuccess  *sample.Expr
	onError    *sample.Expr
	OKStatus   Status // StatusUnknown: default
	ErrStatus  Status
	ToutStatus Status
	statusCode *sample.SampleExpr
	custom     customFunc
	headIndex  int // position in the ruleset of the first expect of this chain

	hdrNameMatch, hdrValueMatch int
	hdrFull                     bool
	hdrName, hdrValue           string
	hdrNameRe, hdrValueRe       *regexp.Regexp
	// hdrNameFmt and hdrValueFmt are the name-lf and value-lf patterns,
	// built again at each probe.
	hdrNameFmt, hdrValueFmt *sample.Expr
}

// Rule is one tcp-check rule.
type Rule struct {
	Action  Action
	Index   int // declaration index; step numbers in messages are Index+1
	Comment string
	Connect *ConnectRule
	Send    *SendRule
	Expect  *ExpectRule
	VarName string // set-var / unset-var, with its "check." prefix
	varName sample.VarName
	varExpr *sample.SampleExpr
}

// Ruleset is an ordered list of rules. Protocol rulesets are shared: one
// pointer is used by every backend that selects the protocol, and they are
// never modified after construction.
type Ruleset struct {
	Name      string
	Rules     []*Rule
	Shared    bool // built once for the whole process
	finalized bool
}

// RulesFlags qualify the ruleset a backend uses.
type RulesFlags uint16

const (
	RulesShared     RulesFlags = 1 << iota // the ruleset is a shared protocol ruleset
	RulesInherited                         // taken from a defaults section
	RulesUnusedTCP                         // tcp-check rules exist without option tcp-check
	RulesUnusedHTTP                        // http-check rules exist without option httpchk
)

// Rules is the ruleset a check runs, with its protocol, flags and the
// per-backend preset variables (smtp greeting, database user, agent string).
type Rules struct {
	Set   *Ruleset
	Proto Proto
	Flags RulesFlags
	Vars  map[string]string
	// Disable404 is "http-check disable-on-404": a 404 while the server
	// is up means L7OKC (stopping), not a failure.
	Disable404 bool
	// SendState is "http-check send-state".
	SendState bool
}

func (r *Rules) clone() *Rules {
	c := *r
	if r.Vars != nil {
		c.Vars = make(map[string]string, len(r.Vars))
		for k, v := range r.Vars {
			c.Vars[k] = v
		}
	}
	return &c
}

// firstActive returns the index of the first rule that is not a comment or
// a variable action, or -1.
func firstActive(rules []*Rule) int {
	for i, r := range rules {
		if r.Action == ActConnect || r.Action == ActSend || r.Action == ActExpect {
			return i
		}
	}
	return -1
}

func lastActive(rules []*Rule) int {
	for i := len(rules) - 1; i >= 0; i-- {
		r := rules[i]
		if r.Action == ActConnect || r.Action == ActSend || r.Action == ActExpect {
			return i
		}
	}
	return -1
}

func nextActive(rules []*Rule, from int) int {
	for i := from + 1; i < len(rules); i++ {
		r := rules[i]
		if r.Action == ActConnect || r.Action == ActSend || r.Action == ActExpect {
			return i
		}
	}
	return -1
}

// stepID returns HAProxy's step number of a rule: 0 for the implicit first
// connect, Index+1 otherwise.
func stepID(r *Rule) int {
	if r == nil {
		return 1
	}
	if r.Index == 0 && r.Action == ActConnect && r.Connect.Implicit {
		return 0
	}
	return r.Index + 1
}
