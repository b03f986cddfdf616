package core

import (
	"strings"
	"testing"

	"goha/core/diag"
)

// tcp-response lines refused in HAProxy 2.6's words (haproxy -c on the
// same lines); the ones goha does not run are refused by name.
func TestTCPResponseErrors(t *testing.T) {
	expects := "'tcp-response content' expects 'accept', 'close', 'reject', 'ot-group', 'set-log-level', 'set-nice', 'sc-inc-gpc(*)', 'sc-inc-gpc0(*)', 'sc-inc-gpc1(*)', 'sc-set-gpt(*)', 'sc-set-gpt0(*)', 'send-spoe-group', 'set-var-fmt(*)', 'set-var(*)', 'unset-var(*)', 'set-mark', 'set-tos', 'silent-drop' in backend 'px'"
	for _, c := range []struct {
		kind, line, want string
	}{
		{"backend", "tcp-response", "missing argument for 'tcp-response' in backend 'px'"},
		{"backend", "tcp-response foo", "'tcp-response' expects 'inspect-delay' or 'content' in backend 'px' (got 'foo')"},
		{"backend", "tcp-response inspect-delay", "'tcp-response inspect-delay' expects a positive delay in milliseconds, in backend 'px'"},
		{"backend", "tcp-response inspect-delay xx", "'tcp-response inspect-delay' expects a positive delay in milliseconds, in backend 'px' (unexpected character 'x')"},
		{"backend", "tcp-response content", expects + " (got '')."},
		{"backend", "tcp-response content foo", expects + " (got 'foo')."},
		{"backend", "tcp-response content set-src ipv4(1.2.3.4)", expects + " (got 'set-src'). Did you mean 'sc-set-gpt' maybe ?"},
		{"backend", "tcp-response content reject foo", "'tcp-response content reject' only accepts 'if' or 'unless', in backend 'px' (got 'foo')"},
		{"backend", "tcp-response content close extra", "'tcp-response content close' only accepts 'if' or 'unless', in backend 'px' (got 'extra')"},
		{"backend", "tcp-response content set-var(txn.x", "incomplete argument after action 'set-var(txn.x'. Expects 'set-var(<var-name>)', 'set-var-fmt(<var-name>)' or 'unset-var(<var-name>)'"},
		{"backend", "tcp-response content set-var(txn.x)", "missing fetch method"},
		{"backend", "tcp-response content set-log-level bar", "expects exactly 1 argument (log level name or 'silent')"},
		{"backend", "tcp-response content set-mark zz", "invalid character starting at 'zz' (integer/hex value expected)"},
		{"backend", "tcp-response content set-mark", "expects exactly 1 argument (integer/hex value)"},
		{"backend", "tcp-response content accept if { foo }", "'tcp-response content accept' : error detected in backend 'px' while parsing 'if' condition : unknown fetch method 'foo' in ACL expression 'foo'"},
		{"frontend", "tcp-response inspect-delay 1s", "tcp-response inspect-delay is only allowed in 'backend' sections or 'defaults' section with a name"},
		{"frontend", "tcp-response content accept", "tcp-response content is only allowed in 'backend' sections or 'defaults' section with a name"},
		{"backend", "tcp-response content sc-inc-gpc0(0)", "'tcp-response content sc-inc-gpc0(0)' is not supported by goha."},
		{"backend", "tcp-response content silent-drop", "'tcp-response content silent-drop' is not supported by goha."},
	} {
		ds := gapLine(t, c.kind, strings.Fields(c.line))
		if len(ds) != 1 || ds[0].Sev != diag.Alert || ds[0].Msg != c.want {
			t.Errorf("%s: got %v\n want ALERT %q", c.line, ds, c.want)
		}
	}
	for _, line := range []string{
		"tcp-response inspect-delay 1s",
		"tcp-response content accept",
		"tcp-response content accept if",
		"tcp-response content close if TRUE",
		"tcp-response content reject unless { res.len gt 2 }",
		"tcp-response content set-var(txn.x) res.payload(0,3)",
		"tcp-response content set-var-fmt(txn.x) %[res.len]",
		"tcp-response content unset-var(txn.x) if TRUE",
		"tcp-response content set-log-level silent",
		"tcp-response content set-mark 0x10",
		"tcp-response content set-tos 0",
	} {
		if ds := gapLine(t, "backend", strings.Fields(line)); len(ds) != 0 {
			t.Errorf("%s: %v", line, ds)
		}
	}
}

// tcp-request set-src and set-dst lines refused in HAProxy 2.6's words.
func TestTCPRequestAddrErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"tcp-request connection set-src", "missing fetch method"},
		{"tcp-request session set-dst-port foo(1)", "unknown fetch method 'foo'"},
		{"tcp-request content set-src src extra", "'tcp-request content set-src' only accepts 'if' or 'unless', in frontend 'px' (got 'extra')"},
		{"tcp-request content accept extra", "'tcp-request content accept' only accepts 'if' or 'unless', in frontend 'px' (got 'extra')"},
	} {
		ds := gapLine(t, "frontend", strings.Fields(c.line))
		if len(ds) != 1 || ds[0].Sev != diag.Alert || ds[0].Msg != c.want {
			t.Errorf("%s: got %v\n want ALERT %q", c.line, ds, c.want)
		}
	}
}

// A tcp-response line of any words is refused or kept, never a panic.
func FuzzTCPResponse(f *testing.F) {
	for _, s := range []string{"content accept", "inspect-delay 1s", "content set-var(txn.x) res.len if TRUE", "content set-mark 0x1 unless", "content set-var(", "content"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		gapLine(t, "backend", append([]string{"tcp-response"}, strings.Fields(line)...))
	})
}
