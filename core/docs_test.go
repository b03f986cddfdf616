package core

import (
	"os"
	"sort"
	"strings"
	"testing"
)

// TestKeywordsDocumented keeps docs/configuration.md in step with the
// keyword tables: every keyword goha accepts is listed there.
func TestKeywordsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	var missing []string
	for name := range keywords {
		if !strings.Contains(text, "`"+name+"`") {
			missing = append(missing, name)
		}
	}
	for name := range serverKeywords {
		if !strings.Contains(text, "`"+name+"`") {
			missing = append(missing, "server "+name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("keywords missing from docs/configuration.md:\n%s", strings.Join(missing, "\n"))
	}
}
