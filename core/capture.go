package core

import (
	"fmt"
	"strconv"
	"strings"

	"goha/core/diag"
)

// CaptureSlot is one of a frontend's capture slots, numbered from 0 in the
// order they are declared: by `capture request|response header`, by
// `declare capture`, and by `http-request capture ... len`.
type CaptureSlot struct {
	// Header is the header a `capture ... header` line captures as
	// requests or responses arrive; "" for a slot filled by actions.
	Header string
	Len    int
}

// atoiPrefix reads the integer at the start of s as C's atoi: 0 when
// there is none.
func atoiPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.Atoi(s[:i])
	return n
}

// parseCapture is `capture request header <name> len <n>` and `capture
// response header <name> len <n>`.
func parseCapture(c *kwCtx, args []string) error {
	dir := ""
	if len(args) > 0 {
		dir = args[0]
	}
	if c.sec != nil && c.sec.Kind == "defaults" {
		return errf("'capture %s' not allowed in 'defaults' section.", dir)
	}
	switch dir {
	case "cookie":
		return errf("'capture cookie' is not supported by goha.")
	case "request", "response":
	default:
		return errf("'capture' expects 'cookie' or 'request header' or 'response header'.")
	}
	if len(args) < 5 || args[1] != "header" || args[3] != "len" {
		return errf("'capture %s' expects 'header' <header_name> 'len' <len>.", dir)
	}
	slot := CaptureSlot{Header: args[2], Len: max(atoiPrefix(args[4]), 0)}
	if dir == "request" {
		c.p.ReqCaps = append(c.p.ReqCaps, slot)
	} else {
		c.p.RspCaps = append(c.p.RspCaps, slot)
	}
	return nil
}

// parseDeclare is `declare capture request|response len <n>`.
func parseDeclare(c *kwCtx, args []string) error {
	if c.sec != nil && c.sec.Kind == "defaults" {
		return errf("'declare' not available in default section")
	}
	if len(args) == 0 || args[0] != "capture" {
		w := ""
		if len(args) > 0 {
			w = args[0]
		}
		return errf("unknown declaration type '%s' (supports 'capture')", w)
	}
	if c.p.Cap&CapFE == 0 {
		return errf("'declare' only available in frontend or listen section")
	}
	if len(args) < 2 || args[1] != "request" && args[1] != "response" {
		return errf("'declare capture' requires a direction ('request' or 'response')")
	}
	if len(args) < 3 || args[2] != "len" {
		return errf("'declare capture' requires a capture length ('len')")
	}
	if len(args) < 4 {
		return errf("'declare capture': 'len' requires a numeric value that represents the capture length")
	}
	n, err := strconv.Atoi(args[3])
	if err != nil || n < 0 {
		// HAProxy names the keyword rather than the value here.
		return errf("'declare capture': cannot parse the length '%s'.", args[2])
	}
	if len(args) > 4 {
		return errf("'declare capture' cannot handle unexpected argument '%s'.", args[4])
	}
	if args[1] == "request" {
		c.p.ReqCaps = append(c.p.ReqCaps, CaptureSlot{Len: n})
	} else {
		c.p.RspCaps = append(c.p.RspCaps, CaptureSlot{Len: n})
	}
	return nil
}

// captureRule checks `http-request capture <expr> len <n> | id <n>` and
// `http-response capture <expr> id <n>` as HAProxy parses them; a rule
// with len declares its slot, which it then fills by id: its words are
// rewritten to the id form.
func captureRule(c *kwCtx, args []string) ([]string, error) {
	if len(args) == 0 || args[0] != "capture" {
		return args, nil
	}
	resp := c.kw == "http-response"
	fail := func(msg string) error {
		return tightf("error detected in %s '%s' while parsing '%s capture' rule : %s", capName(c.p.Cap), c.p.Name, c.kw, msg)
	}
	if len(args) < 2 || len(args) < 4 || isCondWord(args[1]) {
		if resp {
			return nil, fail("expects <expression> id <idx>.")
		}
		return nil, fail("expects <expression> [ 'len' <length> | id <idx> ].")
	}
	switch {
	case args[2] == "len" && !resp:
		// A named defaults section's slots go to the frontends that
		// inherit its rules, as in HAProxy.
		if c.p.Cap&(CapFE|CapDefaults) == 0 {
			return nil, fail("proxy '" + c.p.Name + "' has no frontend capability.")
		}
		n := atoiPrefix(args[3])
		if n <= 0 {
			return nil, fail("length must be > 0.")
		}
		c.p.ReqCaps = append(c.p.ReqCaps, CaptureSlot{Len: n})
		out := append([]string{"capture", args[1], "id", strconv.Itoa(len(c.p.ReqCaps) - 1)}, args[4:]...)
		return out, nil
	case args[2] == "id":
		if _, err := strconv.Atoi(args[3]); err != nil || strings.HasPrefix(args[3], "-") {
			return nil, fail("cannot parse id '" + args[3] + "'.")
		}
		return args, nil
	case resp:
		return nil, fail("expects 'id', found '" + args[2] + "'.")
	}
	return nil, fail("expects <expression> [ 'len' <length> | id <idx> ].")
}

func isCondWord(w string) bool { return w == "if" || w == "unless" }

// checkCaptureIDs reports the capture rules of a frontend that name a slot
// it does not have. (A backend's slots are its frontends': they cannot be
// checked here, as HAProxy does not.)
func (b *builder) checkCaptureIDs(p *Proxy) {
	if p.Cap&CapFE == 0 {
		return
	}
	for _, r := range []struct {
		kw    string
		rules []LineDef
		n     int
	}{{"http-request", p.HTTPReqRules, len(p.ReqCaps)}, {"http-response", p.HTTPRespRules, len(p.RspCaps)}} {
		for _, l := range r.rules {
			if len(l.Words) < 4 || l.Words[0] != "capture" || l.Words[2] != "id" {
				continue
			}
			if id, _ := strconv.Atoi(l.Words[3]); id >= r.n {
				b.d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Proxy '%s': unable to find capture id '%d' referenced by %s capture rule.", p.Name, id, r.kw)})
			}
		}
	}
}

func init() { registerProxyCheck((*builder).checkCaptureIDs) }
