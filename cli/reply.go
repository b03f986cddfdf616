package cli

import "strings"

// NoSeverity is Reply.Severity when the reply carried no "[N]: " prefix:
// data dumps (show stat, show servers state) never do.
const NoSeverity = -1

// Reply is one command's answer, without the empty line and prompt that end
// it on the wire.
type Reply struct {
	// Text is the reply with any severity prefix removed; it is empty or
	// ends with a newline.
	Text string
	// Severity is the syslog level of the "[N]: " prefix, or NoSeverity.
	Severity int
}

// IsError reports whether the reply is an error: a severity of err (3) or
// worse, or HAProxy's unknown-command answer, which 2.6 tags as info.
func (r Reply) IsError() bool {
	if r.Severity >= 0 && r.Severity <= 3 {
		return true
	}
	return strings.HasPrefix(r.Text, "Unknown command")
}

// ParseReply interprets the body of one reply (what came before the final
// empty line and prompt) produced under "set severity-output number".
func ParseReply(body string) Reply {
	r := Reply{Text: body, Severity: NoSeverity}
	if lvl, n, ok := severityPrefix(body); ok {
		r.Severity = lvl
		r.Text = body[n:]
	}
	if r.Text != "" && !strings.HasSuffix(r.Text, "\n") {
		r.Text += "\n"
	}
	return r
}

// levelNames are the syslog levels as "set severity-output string" names
// them; an operator may switch the session to it.
var levelNames = []string{"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"}

// severityPrefix recognises "[N]: " at the start of s, with N a syslog level
// (0..7) or its name, and returns the level and the prefix length.
func severityPrefix(s string) (level, n int, ok bool) {
	end := strings.Index(s, "]: ")
	if len(s) < 5 || s[0] != '[' || end < 2 || end > 8 {
		return 0, 0, false
	}
	word := s[1:end]
	if len(word) == 1 && word[0] >= '0' && word[0] <= '7' {
		return int(word[0] - '0'), end + 3, true
	}
	for i, name := range levelNames {
		if word == name {
			return i, end + 3, true
		}
	}
	return 0, 0, false
}

// splitBody removes the framing around a reply read in prompt mode: the
// "+ " payload prompts that precede it (at most plus of them), the prompt
// that follows it, and the empty line that ends it. HAProxy 2.6 omits that
// empty line after a few messages; the body is the same either way.
func splitBody(raw string, prompt string, plus int) string {
	for ; plus > 0 && strings.HasPrefix(raw, "+ "); plus-- {
		raw = raw[2:]
	}
	raw = strings.TrimSuffix(raw, prompt)
	return strings.TrimSuffix(raw, "\n")
}
