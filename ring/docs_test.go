package ring

import (
	"os"
	"strings"
	"testing"
)

// Every keyword, format, target and command this package serves is
// described in docs/logging.md.
func TestDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/logging.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var words []string
	for _, k := range RingKeywords {
		words = append(words, "`"+k)
	}
	for _, k := range LogForwardKeywords {
		words = append(words, "`"+k)
	}
	for f := FormatLocal; f <= FormatRaw; f++ {
		words = append(words, "`"+f.String()+"`")
	}
	words = append(words, "`tcp@", "`udp@", "`unix@", "`fd@", "`ring@", "`stdout`", "`stderr`",
		"`log-proto legacy", "octet-count", "`sample", "`len", "show events", "show startup-logs",
		"`-w`", "`-n`", "`-0`", "option host", "dont-parse-log", "assume-rfc6587-ntf")
	words = append(words, strings.Fields(strings.Join(facilityNames[:16], " "))...)
	words = append(words, levelNames[:]...)
	for _, w := range words {
		if !strings.Contains(doc, w) {
			t.Errorf("docs/logging.md does not mention %q", w)
		}
	}
}
