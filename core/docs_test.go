package core

import (
	"os"
	"sort"
	"strconv"
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
	// The section keyword table says how many words each keyword takes.
	for _, l := range strings.Split(text, "\n") {
		cols := strings.Split(l, " | ")
		if len(cols) != 4 || !strings.HasPrefix(cols[0], "| `") {
			continue
		}
		k := keywords[strings.Trim(cols[0], "| `")]
		if k == nil {
			continue
		}
		want := strconv.Itoa(k.Args)
		if k.Args == ArgsAny {
			want = "per keyword"
		}
		if cols[2] != want {
			t.Errorf("docs/configuration.md gives %s words after '%s', the table %s", cols[2], k.Name, want)
		}
	}
}
