package check

import (
	"os"
	"strings"
	"testing"
)

// Every keyword this package parses is documented.
func TestKeywordsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/health-checks.md")
	if err != nil {
		t.Skip("docs not found:", err)
	}
	doc := string(b)
	var kws []string
	kws = append(kws, ServerKeywords...)
	for _, o := range CheckOptions {
		kws = append(kws, "option "+o)
	}
	kws = append(kws, "tcp-check connect", "tcp-check send", "tcp-check send-binary", "tcp-check send-lf",
		"tcp-check send-binary-lf", "tcp-check expect", "tcp-check comment", "tcp-check set-var(", "tcp-check unset-var(",
		"http-check send", "http-check expect", "http-check connect", "http-check comment",
		"http-check disable-on-404", "http-check send-state", "timeout check", "spread-checks", "max-spread-checks")
	for _, k := range kws {
		if !strings.Contains(doc, "`"+k) && !strings.Contains(doc, k+" ") && !strings.Contains(doc, k+"check.") {
			t.Errorf("%q is not documented", k)
		}
	}
}
