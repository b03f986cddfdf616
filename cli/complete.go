package cli

import (
	"sort"
	"strings"
)

// cmdNode is one word of the command tree built from the server's help.
type cmdNode struct {
	children map[string]*cmdNode
	args     []string // the usage's words after the command words, e.g. "<bk>/<srv>", "[opts]"
}

func (n *cmdNode) child(w string) *cmdNode {
	if n.children == nil {
		n.children = map[string]*cmdNode{}
	}
	c := n.children[w]
	if c == nil {
		c = &cmdNode{}
		n.children[w] = c
	}
	return c
}

// parseHelp builds the command tree from "help" output: lines of
// "  <usage> : <description>", where the usage starts with the command's
// fixed words and goes on with placeholders (<x>, [x], {x}, x|y, (x)).
func parseHelp(text string) *cmdNode {
	root := &cmdNode{}
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "  ") {
			continue
		}
		usage, _, ok := strings.Cut(l, ": ")
		if !ok {
			continue
		}
		fields := strings.Fields(usage)
		n := root
		i := 0
		for ; i < len(fields); i++ {
			if !isKeyword(fields[i]) {
				break
			}
			n = n.child(fields[i])
		}
		if n != root && n.args == nil {
			n.args = fields[i:]
		}
	}
	return root
}

func isKeyword(w string) bool {
	if strings.ContainsAny(w, "<>[]{}()|*.") || strings.HasPrefix(w, "-") {
		return false
	}
	return w != ""
}

// Values offered after "set server <bk>/<srv>", whose usage says only [opts].
var setServerOpts = map[string][]string{
	"":       {"addr", "agent", "agent-addr", "agent-port", "agent-send", "check-addr", "check-port", "fqdn", "health", "ssl", "state", "weight"},
	"state":  {"ready", "drain", "maint"},
	"health": {"up", "stopping", "down"},
	"agent":  {"up", "down"},
	"ssl":    {"on", "off"},
}

var stageNames = []string{"cols", "grep", "sort", "table", "where"}

// localCommands are handled by gohactl itself and offered beside the server's.
var localCommands = []string{"exit", "watch"}

// Complete is a liner word completer: it returns the text before the word
// under the cursor, the candidates for that word, and the text after it.
// It asks the server for help and names when they are missing or stale.
func (s *Session) Complete(line string, pos int) (head string, cands []string, tail string) {
	if pos > len(line) {
		pos = len(line)
	}
	before, tail := line[:pos], line[pos:]
	start := strings.LastIndexAny(before, " \t") + 1
	head, word := before[:start], before[start:]
	ctx := head
	if i := strings.LastIndexAny(ctx, ";|"); i >= 0 {
		if ctx[i] == '|' {
			stage := strings.Fields(ctx[i+1:])
			if len(stage) == 0 {
				return head, withPrefix(stageNames, word, " "), tail
			}
			cmd := ctx
			if j := strings.LastIndex(ctx, ";"); j >= 0 {
				cmd = ctx[j+1:]
			}
			cmd, _, _ = strings.Cut(cmd, "|")
			h, cands := s.columnCandidates(strings.TrimSpace(cmd), stage[0], word)
			return head + h, cands, tail
		}
		ctx = ctx[i+1:]
	}
	words := strings.Fields(ctx)
	if len(words) >= 1 && words[0] == "watch" {
		if len(words) < 2 {
			return head, nil, tail
		}
		words = words[2:]
	}
	return head, s.candidates(words, word), tail
}

func (s *Session) candidates(words []string, word string) []string {
	s.loadCompletion()
	if s.tree == nil {
		return nil
	}
	n := s.tree
	i := 0
	for ; i < len(words); i++ {
		c := n.children[words[i]]
		if c == nil {
			break
		}
		n = c
	}
	if i == len(words) && len(n.children) > 0 {
		names := make([]string, 0, len(n.children))
		for k := range n.children {
			names = append(names, k)
		}
		if n == s.tree {
			names = append(names, localCommands...)
		}
		sort.Strings(names)
		return withPrefix(names, word, " ")
	}
	if n == s.tree {
		return nil
	}
	rest := words[i:]
	if len(words) >= 2 && words[0] == "set" && words[1] == "server" && len(rest) >= 1 {
		key := ""
		if len(rest) >= 2 {
			key = rest[len(rest)-1]
			if len(rest) > 2 {
				key = "-" // values were given already
			}
		}
		return withPrefix(setServerOpts[key], word, " ")
	}
	ph := ""
	if len(rest) < len(n.args) {
		ph = n.args[len(rest)]
	}
	// 2.6 documents some server commands as "disable server (DEPRECATED)".
	if len(rest) == 0 && (ph == "" || strings.HasPrefix(ph, "(")) {
		switch words[i-1] {
		case "server", "weight", "health", "agent":
			ph = "<bk>/<srv>"
		}
	}
	return s.argCandidates(ph, word)
}

// argCandidates completes one argument from its usage placeholder.
func (s *Session) argCandidates(ph, word string) []string {
	lph := strings.ToLower(ph)
	switch {
	case strings.Contains(word, "/") || strings.Contains(lph, "/") && (strings.Contains(lph, "srv") || strings.Contains(lph, "server")):
		if !strings.Contains(word, "/") {
			bes := map[string]bool{}
			var out []string
			for _, sv := range s.servers {
				be, _, _ := strings.Cut(sv, "/")
				if !bes[be] {
					bes[be] = true
					out = append(out, be+"/")
				}
			}
			return withPrefix(out, word, "")
		}
		return withPrefix(s.servers, word, " ")
	case strings.Contains(lph, "backend") || strings.Contains(lph, "<bk>") || strings.Contains(lph, "proxy"):
		return withPrefix(s.backends, word, " ")
	case strings.HasPrefix(ph, "[") || strings.HasPrefix(ph, "{"):
		var out []string
		for _, alt := range strings.FieldsFunc(ph, func(r rune) bool { return strings.ContainsRune("[]{}|*", r) }) {
			if isKeyword(alt) {
				out = append(out, alt)
			}
		}
		return withPrefix(out, word, " ")
	}
	return nil
}

// columnCandidates completes a column name in a cols, where or sort stage
// of cmd, whose header it learns by running cmd. Only "show" commands are
// run for this, since completing must not change anything on the server.
// The returned head is the part of word kept before the column name (up to
// the last comma of "cols a,b,").
func (s *Session) columnCandidates(cmd, stage, word string) (string, []string) {
	if stage != "cols" && stage != "where" && stage != "sort" {
		return "", nil
	}
	words := strings.Fields(cmd)
	if len(words) == 0 || words[0] != "show" {
		return "", nil
	}
	cols := s.columns[cmd]
	if cols == nil {
		r, err := s.Exec(cmd, nil)
		if err != nil || r.IsError() {
			return "", nil
		}
		t, err := ParseTable(r.Text)
		if err != nil {
			return "", nil
		}
		cols = t.Cols
		if s.columns == nil {
			s.columns = map[string][]string{}
		}
		s.columns[cmd] = cols
	}
	keep, suffix := "", " "
	switch stage {
	case "cols":
		if i := strings.LastIndex(word, ","); i >= 0 {
			keep, word = word[:i+1], word[i+1:]
		}
		suffix = ""
	case "where":
		if strings.ContainsAny(word, "=!~<>") {
			return "", nil
		}
		suffix = ""
	}
	return keep, withPrefix(cols, word, suffix)
}

func withPrefix(list []string, prefix, suffix string) []string {
	var out []string
	for _, c := range list {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c+suffix)
		}
	}
	return out
}

// loadCompletion refreshes the command tree and names when stale. Errors
// leave completion empty rather than disturbing the line being edited.
func (s *Session) loadCompletion() {
	if s.tree != nil && !s.namesStale {
		return
	}
	// A reconnection notice printed now would land inside the line being
	// edited; the next command reports the connection's state anyway.
	notice := s.Notice
	s.Notice = nil
	defer func() { s.Notice = notice }()
	r, err := s.Exec("help", nil)
	if err != nil {
		return
	}
	s.tree = parseHelp(r.Text)
	s.backends, s.servers, s.columns = nil, nil, nil
	if r, err := s.Exec("show backend", nil); err == nil && !r.IsError() {
		if t, err := ParseTable(r.Text); err == nil && len(t.Cols) > 0 {
			for _, row := range t.Rows {
				s.backends = append(s.backends, row[0])
			}
		}
	}
	if r, err := s.Exec("show servers state", nil); err == nil && !r.IsError() {
		if t, err := ParseTable(r.Text); err == nil {
			be, e1 := t.col("be_name")
			sv, e2 := t.col("srv_name")
			if e1 == nil && e2 == nil {
				for _, row := range t.Rows {
					s.servers = append(s.servers, row[be]+"/"+row[sv])
				}
			}
		}
	}
	sort.Strings(s.backends)
	sort.Strings(s.servers)
	s.namesStale = false
}
