package runtime

import (
	"strings"
	"testing"
)

// TestCommandsDocumented checks that docs/management.md names every
// registered command.
func TestCommandsDocumented(t *testing.T) {
	doc := readFile(t, "../docs/management.md")
	regMu.RLock()
	defer regMu.RUnlock()
	for _, c := range commands {
		if w := "`" + strings.Join(c.Words, " "); !strings.Contains(doc, w) {
			t.Errorf("%q is not documented in docs/management.md", strings.Join(c.Words, " "))
		}
	}
}
