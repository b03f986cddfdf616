package config

import (
	"reflect"
	"strings"
	"testing"
)

var testEnvVars = map[string]string{
	"WHO":   "world",
	"EMPTY": "",
	"TWO":   "a b",
	"SP":    " lead",
	"TRAIL": "x  ",
	"Q":     `a"b'c`,
}

func testEnv(name string) (string, bool) {
	v, ok := testEnvVars[name]
	return v, ok
}

func testPseudo(name string) (string, bool, bool) {
	switch name {
	case ".LINE":
		return "7", true, true
	case ".FILE":
		return "t.cfg", true, true
	case ".SECTION":
		return "", false, true
	}
	return "", false, false
}

func tok(line string) tokResult {
	return tokenize([]byte(line), testEnv, testPseudo)
}

// The expected words were checked against HAProxy 2.6.12 by printing them
// with .notice.
func TestTokenizeWords(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"a b\tc", []string{"a", "b", "c"}},
		{"a   b", []string{"a", "b"}},
		{"a b ", []string{"a", "b", ""}}, // trailing blanks leave an empty word
		{"", []string{""}},
		{"# only a comment", []string{""}},
		{"a#b", []string{"a"}},
		{"a #b", []string{"a", ""}},

		// Double quotes group and expand, single quotes group only.
		{`"a b" c`, []string{"a b", "c"}},
		{`'a b' c`, []string{"a b", "c"}},
		{`"a"'b'c`, []string{"abc"}},
		{`"" x`, []string{"", "x"}},
		{`"#x" '#x' \#x`, []string{"#x", "#x", "#x"}},
		{`'$WHO' "$WHO"`, []string{"$WHO", "world"}},
		{`"a'b" 'a"b'`, []string{"a'b", `a"b`}},

		// Backslash escapes.
		{`a\ b`, []string{"a b"}},
		{`"a\"b"`, []string{`a"b`}},
		{`a\'b`, []string{"a'b"}},
		{`"a\'b"`, []string{"a'b"}},
		{`'a\'b`, []string{`a\b`}}, // no escape inside single quotes: the second ' closes
		{`"a\\b" 'a\\b'`, []string{`a\b`, `a\\b`}},
		{`\t\n\r`, []string{"\t\n\r"}},
		{`\x41\x62\x7E`, []string{"Ab~"}},
		{`"\$WHO" \$WHO`, []string{"$WHO", `\$WHO`}},
		{`a\qb`, []string{`a\qb`}},
		{`trailing\`, []string{`trailing\`}},
		{`\x00abc def`, []string{"", "def"}}, // a NUL ends the word as C sees it

		// Variables, only inside double quotes.
		{`"$WHO" "${WHO}" "${WHO}s" "$WHOs"`, []string{"world", "world", "worlds", ""}},
		{`"$WHO/x" "x$WHO"`, []string{"world/x", "xworld"}},
		{`$WHO ${WHO}`, []string{"$WHO", "${WHO}"}},
		{`"${NOPE-def val}" "${NOPE-}" "${EMPTY-def}"`, []string{"def val", "", ""}},
		{`"${NOPE-a"b}"`, []string{`a"b`}}, // the default runs to the brace, quotes included
		{`"${NOPE}x" "x${NOPE}"`, []string{"x", "x"}},
		{`"${Q}"`, []string{`a"b'c`}}, // values are not re-tokenized
		{`"${TWO}"`, []string{"a b"}},
		{`"${TWO[*]}"`, []string{"a", "b"}},
		{`"x${TWO[*]}y"`, []string{"xa", "by"}},
		{`"${SP[*]}"`, []string{"", "lead"}},
		{`"${TRAIL[*]}"`, []string{"x", ""}},
		{`"${NOPE[*]-p q}"`, []string{"p", "q"}},
		{`"${.LINE}" "${.FILE}" "${.SECTION}" "${.SECTION-none}"`, []string{"7", "t.cfg", "", "none"}},
		{`"$.LINE"`, []string{"7"}},

		// Carriage returns end the line unless blanks swallow them.
		{"a\r", []string{"a"}},
		{"a\rb", []string{"a"}},
		{"a \rb", []string{"a", "b"}},
	}
	for _, tt := range tests {
		r := tok(tt.line)
		if r.err != tokOK {
			t.Errorf("%q: error %d at %d", tt.line, r.err, r.errAt)
			continue
		}
		if !reflect.DeepEqual(r.args, tt.want) {
			t.Errorf("%q: got %q, want %q", tt.line, r.args, tt.want)
		}
	}
}

func TestTokenizeErrors(t *testing.T) {
	tests := []struct {
		line string
		err  tokErr
		at   int
	}{
		{`maxconn "abc`, tokQuote, 8},
		{`maxconn 'abc`, tokQuote, 8},
		{`a "b" 'c`, tokQuote, 6},
		{`a "b' c`, tokQuote, 2},
		{`"${1X}"`, tokVarName, 3},
		{`"$"`, tokVarName, 2},
		{`"${}"`, tokVarName, 3},
		{`"${.NOPE}"`, tokVarName, 3},
		{`"${WHO"`, tokBrace, 2},
		{`"${WHO-abc"`, tokBrace, 2},
		{`"${WHO[*]"`, tokBrace, 2},
		{`"${WHO[}"`, tokExpand, 6},
		{`"${WHO[*}"`, tokExpand, 6},
		{`\x4`, tokHex, 0},
		{`ab\xZZ`, tokHex, 2},
		{`\x`, tokHex, 0},
	}
	for _, tt := range tests {
		r := tok(tt.line)
		if r.err != tt.err || r.errAt != tt.at {
			t.Errorf("%q: got error %d at %d, want %d at %d", tt.line, r.err, r.errAt, tt.err, tt.at)
		}
	}
}

func TestTokenizeTooManyWords(t *testing.T) {
	words := make([]string, maxLineArgs)
	for i := range words {
		words[i] = "w"
	}
	if r := tok(strings.Join(words, " ")); r.err != tokOK || len(r.args) != maxLineArgs {
		t.Fatalf("64 words: err %d, %d words", r.err, len(r.args))
	}
	// A trailing blank counts as a 65th, empty, word, as in HAProxy.
	if r := tok(strings.Join(words, " ") + " "); r.err != tokTooMany {
		t.Fatalf("64 words and a blank: err %d, want too many", r.err)
	}
	words = append(words, "last")
	words[maxLineArgs-1] = "sixty-four"
	r := tok(strings.Join(words, " "))
	if r.err != tokTooMany || r.manyWord != "sixty-four" || r.manyPos != 2*(maxLineArgs-1)+1 {
		t.Fatalf("65 words: err %d word %q pos %d", r.err, r.manyWord, r.manyPos)
	}
}

func TestTokenizeTail(t *testing.T) {
	tests := []struct{ line, tail string }{
		{".if", ""},
		{".if ", ""},
		{`.if "" `, " "},
		{".if a  b", "a b"},
		{`.if streq(a\x00b,c)`, "streq(a b,c)"},
	}
	for _, tt := range tests {
		if r := tok(tt.line); r.tail != tt.tail {
			t.Errorf("%q: tail %q, want %q", tt.line, r.tail, tt.tail)
		}
	}
}

func TestTokenizeCR(t *testing.T) {
	if r := tok("a\r"); r.crAt != -1 {
		t.Errorf("CR at the end flagged at %d", r.crAt)
	}
	if r := tok("a\r  "); r.crAt != -1 {
		t.Errorf("CR and blanks flagged at %d", r.crAt)
	}
	if r := tok("a\rb"); r.crAt != 1 {
		t.Errorf("CR before text: crAt %d, want 1", r.crAt)
	}
}

func TestSanitizeForPrinting(t *testing.T) {
	tests := []struct {
		line  string
		pos   int
		width int
		want  string
		col   int
	}{
		{"abc", 1, 80, "abc", 1},
		{"a\tb\x01\xff", 0, 80, "a b??", 0},
		{"abc\x00def", 0, 80, "abc", 0},
		{strings.Repeat("x", 100) + "^", 100, 80, "..." + strings.Repeat("x", 37) + "^" + strings.Repeat("", 0) + "...", 40},
	}
	for _, tt := range tests {
		got, col := sanitizeForPrinting([]byte(tt.line), tt.pos, tt.width)
		if got != tt.want || col != tt.col {
			t.Errorf("%q at %d: got %q col %d, want %q col %d", tt.line, tt.pos, got, col, tt.want, tt.col)
		}
	}
}
