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
	// The section keyword table says how many words each keyword takes,
	// and in which one state (supported, warned, refused) it is: one row
	// per keyword.
	rows := map[string]int{}
	for _, l := range strings.Split(text, "\n") {
		cols := strings.Split(l, " | ")
		if len(cols) != 4 || !strings.HasPrefix(cols[0], "| `") {
			continue
		}
		k := keywords[strings.Trim(cols[0], "| `")]
		if k == nil {
			continue
		}
		if rows[k.Name]++; rows[k.Name] == 2 {
			t.Errorf("docs/configuration.md has more than one row for '%s'", k.Name)
		}
		want := strconv.Itoa(k.Args)
		if k.Args == ArgsAny {
			want = "per keyword"
		}
		if cols[2] != want {
			t.Errorf("docs/configuration.md gives %s words after '%s', the table %s", cols[2], k.Name, want)
		}
		if st := strings.TrimSuffix(cols[3], " |"); !statusIs(st, k.Unimplemented) {
			t.Errorf("docs/configuration.md says '%s' is %s, the table %s", k.Name, st, gapStatus(k.Unimplemented))
		}
	}
	for name := range keywords {
		if rows[name] == 0 {
			t.Errorf("'%s' has no row in docs/configuration.md's keyword table", name)
		}
	}
}

// gapStatus is the status column docs/configuration.md gives a keyword.
func gapStatus(g Gap) string {
	switch g {
	case Warned:
		return "*warned*"
	case Refused:
		return "*refused*"
	}
	return "supported"
}

// statusIs says whether a status column starts as gap g's: keywords with a
// gap are marked *warned* or *refused*, the others are not.
func statusIs(st string, g Gap) bool {
	if g == Implemented {
		return !strings.HasPrefix(st, gapStatus(Warned)) && !strings.HasPrefix(st, gapStatus(Refused))
	}
	return strings.HasPrefix(st, gapStatus(g))
}

// TestKeywordGapsDocumented checks the status the server keyword and bind
// parameter tables of docs/configuration.md give each keyword.
func TestKeywordGapsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	seen := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		cols := strings.Split(l, " | ")
		if len(cols) != 3 || !strings.HasPrefix(cols[0], "| `") {
			continue
		}
		name := strings.Trim(cols[0], "| `")
		k, ok := serverKeywords[name]
		if !ok {
			continue
		}
		seen[name] = true
		if st := strings.TrimSuffix(cols[2], " |"); !statusIs(st, k.Unimplemented) {
			t.Errorf("docs/configuration.md says server keyword '%s' is %s, the table %s", name, st, gapStatus(k.Unimplemented))
		}
	}
	for name := range serverKeywords {
		if !seen[name] {
			t.Errorf("server keyword '%s' has no row in docs/configuration.md", name)
		}
	}
	// Bind rows: "| `a`, `b` | status |"; a row's status starts with the
	// gap of each parameter it lists.
	listed := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		cols := strings.Split(l, " | ")
		if len(cols) != 2 || !strings.HasPrefix(cols[0], "| `") {
			continue
		}
		for _, n := range strings.Split(strings.TrimPrefix(cols[0], "| "), ", ") {
			name := strings.Trim(n, "`")
			_, flag := bindFlags[name]
			_, param := bindParamArgs[name]
			if !flag && !param {
				continue
			}
			listed[name] = true
			g := bindGaps[name]
			if name == "process" {
				g = Warned // reported by parseBind, in HAProxy's words
			}
			if st := cols[1]; !statusIs(st, g) {
				t.Errorf("docs/configuration.md says bind '%s' is %s, the table %s", name, st, gapStatus(g))
			}
		}
	}
	for name := range bindParamArgs {
		if !listed[name] {
			t.Errorf("bind parameter '%s' has no row in docs/configuration.md", name)
		}
	}
	for name := range bindFlags {
		if !listed[name] {
			t.Errorf("bind flag '%s' has no row in docs/configuration.md", name)
		}
	}
}

// TestUserlistKeywordsDocumented: each userlist keyword has a row in
// docs/configuration.md's userlist table naming each of its options.
func TestUserlistKeywordsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, _ := strings.Cut(string(doc), "\n## userlist\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	for kw, opts := range userlistKeywords {
		row := ""
		for _, l := range strings.Split(sec, "\n") {
			if strings.HasPrefix(l, "| `"+kw+"` |") {
				row = l
			}
		}
		if row == "" {
			t.Errorf("userlist keyword '%s' has no row in docs/configuration.md", kw)
			continue
		}
		for _, o := range opts {
			if !strings.Contains(row, o+" <") {
				t.Errorf("docs/configuration.md's row for '%s' does not name '%s'", kw, o)
			}
		}
	}
}

// TestProgramKeywordsDocumented: each program keyword has a row in
// docs/configuration.md's program table.
func TestProgramKeywordsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, _ := strings.Cut(string(doc), "\n## program\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	for _, kw := range programKeywords {
		if !strings.Contains(sec, "\n| `"+kw+"` |") {
			t.Errorf("program keyword '%s' has no row in docs/configuration.md", kw)
		}
	}
}

// TestCacheKeywordsDocumented: each cache keyword has a row in
// docs/configuration.md's cache table.
func TestCacheKeywordsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, _ := strings.Cut(string(doc), "\n## cache\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	for _, kw := range cacheKeywords {
		if !strings.Contains(sec, "\n| `"+kw+"` |") {
			t.Errorf("cache keyword '%s' has no row in docs/configuration.md", kw)
		}
	}
}
