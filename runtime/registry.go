package runtime

import (
	"slices"
	"strings"
	"sync"

	"goha/core/diag"
)

// Level is a session's access level, as a socket's `level` sets it.
type Level int

const (
	LevelUser     Level = 1
	LevelOperator Level = 2
	LevelAdmin    Level = 3
)

func (l Level) String() string {
	switch l {
	case LevelUser:
		return "user"
	case LevelOperator:
		return "operator"
	}
	return "admin"
}

// ParseLevel reads `user`, `operator` or `admin`.
func ParseLevel(s string) (Level, bool) {
	switch s {
	case "user":
		return LevelUser, true
	case "operator":
		return LevelOperator, true
	case "admin":
		return LevelAdmin, true
	}
	return 0, false
}

// Mode is a set of a session's modes, which `expert-mode on` and
// `experimental-mode on` turn on for the session.
type Mode uint8

const (
	ModeExpert Mode = 1 << iota
	ModeExperimental
)

// Command is one runtime command: up to five keyword words, its usage line
// as `help` prints it, the level it needs, and its handler. Run writes the
// reply through the Ctx; the session adds the empty line that ends it.
type Command struct {
	Words []string
	Usage string // e.g. "get weight <bk>/<srv>", left of the ':' in help
	Help  string // right of the ':' in help
	Level Level  // needed to run it; checked before Run
	// Mode is the modes the command needs; help does not show it to a
	// session without them.
	Mode Mode
	Run  func(c *Ctx)
	// tail marks help, prompt and quit, which help lists last; unlisted
	// the commands help never lists (expert-mode, experimental-mode).
	// Both count when help matches words.
	tail, unlisted bool
	line           string // the padded help line; empty for tail and unlisted
}

// visible says whether help and suggestions may name c to a session
// with the modes m.
func (c *Command) visible(m Mode) bool { return c.Mode&^m == 0 }

var (
	regMu    sync.RWMutex // guards following fields
	commands []*Command
	sorted   []*Command // by help line, as HAProxy's help sorts them
)

// Register adds commands to the registry. It panics on a duplicate word
// sequence, on more than five words, or on a missing usage: these are
// programming errors of a feature file's table.
func Register(cmds ...*Command) {
	regMu.Lock()
	defer regMu.Unlock()
	for _, c := range cmds {
		if len(c.Words) == 0 || len(c.Words) > 5 {
			panic("runtime: command needs 1 to 5 words: " + strings.Join(c.Words, " "))
		}
		if (c.Usage == "" || c.Help == "") && !c.unlisted {
			panic("runtime: command without usage: " + strings.Join(c.Words, " "))
		}
		if c.Run == nil {
			panic("runtime: command without handler: " + strings.Join(c.Words, " "))
		}
		if c.Level == 0 {
			c.Level = LevelUser
		}
		for _, o := range commands {
			if slices.Equal(o.Words, c.Words) {
				panic("runtime: command registered twice: " + strings.Join(c.Words, " "))
			}
		}
		if !c.tail && !c.unlisted {
			c.line = usageLine(c.Usage, c.Help)
		}
		commands = append(commands, c)
	}
	sorted = sorted[:0]
	for _, c := range commands {
		if c.line != "" {
			sorted = append(sorted, c)
		}
	}
	slices.SortFunc(sorted, func(a, b *Command) int { return strings.Compare(a.line, b.line) })
}

// usageLine pads usage to HAProxy's 40-column ':' separator.
func usageLine(usage, help string) string {
	if len(usage) < 40 {
		usage += strings.Repeat(" ", 40-len(usage))
	}
	return "  " + usage + ": " + help + "\n"
}

// lookup finds the command whose words are the longest prefix of args.
func lookup(args []string) *Command {
	regMu.RLock()
	defer regMu.RUnlock()
	var best *Command
	for _, c := range commands {
		if len(c.Words) > len(args) || (best != nil && len(c.Words) <= len(best.Words)) {
			continue
		}
		if slices.Equal(c.Words, args[:len(c.Words)]) {
			best = c
		}
	}
	return best
}

// tailLines are the help lines HAProxy 2.6 always prints last.
var tailLines = usageLine("help [<command>]", "list matching or all commands") +
	usageLine("prompt", "toggle interactive mode with prompt") +
	usageLine("quit", "disconnect")

// Suggestion limits of HAProxy's CLI (CLI_MAX_MATCHES, CLI_PREFIX_KW_NB).
const (
	maxMatches  = 5
	prefixWords = 5
)

// usageText builds the reply to `help [words]` (help=true) or to an
// unknown command for a session with the modes m, as HAProxy 2.6's
// cli_gen_usage_msg: the commands whose first words match exactly,
// narrowed by word-fingerprint distance on the remaining words, sorted by
// help line, then help/prompt/quit.
func usageText(args []string, help bool, m Mode) string {
	regMu.RLock()
	defer regMu.RUnlock()
	return buildUsage(commands, sorted, args, help, m)
}

// tailWords are the commands help lists last, in every registry.
var tailWords = [][]string{{"help"}, {"prompt"}, {"quit"}}

// UsageText builds the reply that `help` (help=true) or an unknown
// command would get from a registry holding only cmds, which need only
// Words, Usage and Help. It lets tests check the suggestion rules against
// another command table, HAProxy's own.
func UsageText(cmds []*Command, args []string, help bool) string {
	var all, srt []*Command
	for _, c := range cmds {
		cc := *c
		cc.line = usageLine(c.Usage, c.Help)
		all = append(all, &cc)
		srt = append(srt, &cc)
	}
	for _, w := range tailWords {
		all = append(all, &Command{Words: w, tail: true})
	}
	slices.SortFunc(srt, func(a, b *Command) int { return strings.Compare(a.line, b.line) })
	return buildUsage(all, srt, args, help, ModeExpert|ModeExperimental)
}

// buildUsage works on commands, all of them, and sorted, those with a
// help line, by line.
func buildUsage(commands, sorted []*Command, args []string, help bool, m Mode) string {
	var b strings.Builder
	words := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	length := 0
	for _, c := range commands {
		if !c.visible(m) {
			continue
		}
		for i := 0; i < prefixWords && i < len(c.Words); i++ {
			if words(i) == "" || c.Words[i] != words(i) {
				break
			}
			length = max(length, i+1)
		}
	}
	switch {
	case help:
		b.WriteString("The following commands are valid at this level:\n")
	case length == 0 && words(0) == "":
		b.WriteString("Unknown command. Please enter one of the following commands only:\n")
	default:
		b.WriteString("Unknown command, but maybe one of the following ones is a better match:\n")
	}
	prefixMatch := func(c *Command) bool {
		for i := 0; i < length; i++ {
			if i >= len(c.Words) || c.Words[i] != words(i) {
				return false
			}
		}
		return true
	}
	type match struct {
		c    *Command
		dist int
	}
	var matches []match
	if words(length) != "" {
		var ws, ks diag.Fingerprint
		for _, c := range commands {
			if c.line == "" || !c.visible(m) || !prefixMatch(c) || length >= len(c.Words) {
				continue
			}
			ws.Reset()
			ks.Reset()
			tot := 0
			for i := length; i < prefixWords && words(i) != ""; i++ {
				ws.Add(words(i))
				tot += len(words(i))
			}
			for i := length; i < prefixWords && i < len(c.Words); i++ {
				ks.Add(c.Words[i])
				tot += len(c.Words[i])
			}
			d := diag.Distance(&ws, &ks)
			if d >= 5*tot/2 || (len(matches) == maxMatches && d >= matches[maxMatches-1].dist) {
				continue
			}
			if len(matches) == maxMatches {
				matches = matches[:maxMatches-1]
			}
			// Keep the list ordered by distance, later ties after earlier ones.
			j := len(matches)
			matches = append(matches, match{c, d})
			for j > 0 && matches[j-1].dist > d {
				matches[j], matches[j-1] = matches[j-1], matches[j]
				j--
			}
		}
	}
	var lines []string
	if len(matches) > 0 {
		for _, m := range matches {
			if m.dist > 5*matches[0].dist/2 {
				break
			}
			lines = append(lines, m.c.line)
		}
		slices.Sort(lines)
	} else {
		for _, c := range sorted {
			if c.visible(m) && prefixMatch(c) {
				lines = append(lines, c.line)
			}
		}
	}
	for _, l := range lines {
		b.WriteString(l)
	}
	b.WriteString(tailLines)
	return b.String()
}
