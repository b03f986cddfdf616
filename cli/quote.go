package cli

import (
	"fmt"
	"strings"

	"github.com/google/shlex"
)

// Command is one command of a shell line: the words sent to the socket and
// the local pipe stages that process its reply.
type Command struct {
	Words  []string   // unquoted words for the server (or a local command such as watch)
	Stages [][]string // words of each "| stage"
}

// ParseLine splits a shell line into commands. The syntax is a shell's:
// words are separated by blanks, single quotes keep everything literally,
// double quotes and backslashes escape as in sh. An unquoted ';' separates
// commands and an unquoted '|' starts a pipe stage. Unlike sh, '#' is an
// ordinary character, since HAProxy names proxies "#<id>".
func ParseLine(line string) ([]Command, error) {
	pieces, err := splitUnquoted(line)
	if err != nil {
		return nil, err
	}
	var cmds []Command
	for _, cmdPieces := range pieces {
		var cmd Command
		for i, p := range cmdPieces {
			words, err := shlex.Split(p)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
			}
			if i == 0 {
				cmd.Words = words
				continue
			}
			if len(words) == 0 {
				return nil, fmt.Errorf("%w: empty pipe stage", ErrSyntax)
			}
			cmd.Stages = append(cmd.Stages, words)
		}
		if len(cmd.Words) == 0 {
			if len(cmd.Stages) > 0 {
				return nil, fmt.Errorf("%w: a pipe needs a command before it", ErrSyntax)
			}
			continue
		}
		cmds = append(cmds, cmd)
	}
	return cmds, nil
}

// splitUnquoted cuts a line at unquoted ';' (commands) and '|' (stages),
// keeping the quoting of each piece for shlex, and escapes unquoted '#' so
// that shlex does not read it as a comment.
func splitUnquoted(line string) ([][]string, error) {
	var cmds [][]string
	var cur []string
	var b strings.Builder
	var quote rune
	escaped := false
	for _, r := range line {
		switch {
		case escaped:
			escaped = false
			b.WriteRune(r)
		case r == '\\' && quote != '\'':
			escaped = true
			b.WriteRune(r)
		case quote != 0:
			if r == quote {
				quote = 0
			}
			b.WriteRune(r)
		case r == '\'' || r == '"':
			quote = r
			b.WriteRune(r)
		case r == '#':
			b.WriteString(`\#`)
		case r == '|':
			cur = append(cur, b.String())
			b.Reset()
		case r == ';':
			cmds = append(cmds, append(cur, b.String()))
			cur = nil
			b.Reset()
		default:
			b.WriteRune(r)
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%w: unterminated %c quote", ErrSyntax, quote)
	}
	if escaped {
		return nil, fmt.Errorf("%w: backslash at the end of the line", ErrSyntax)
	}
	return append(cmds, append(cur, b.String())), nil
}

// EncodeWords writes words in the socket's syntax: the server splits on
// blanks and cuts commands at ';', knows nothing of quotes, and takes a
// backslash as an escape for the next character. A word that cannot be
// carried (empty, or holding a line break) is an error.
func EncodeWords(words []string) (string, error) {
	var b strings.Builder
	for i, w := range words {
		if w == "" {
			return "", fmt.Errorf("%w: an empty word cannot be sent to the stats socket", ErrSyntax)
		}
		if strings.ContainsAny(w, "\n\r") {
			return "", fmt.Errorf("%w: a line break cannot be sent inside a word", ErrSyntax)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		for i := 0; i < len(w); i++ {
			switch w[i] {
			case '\\', ' ', '\t', ';':
				b.WriteByte('\\')
			}
			b.WriteByte(w[i])
		}
	}
	return b.String(), nil
}

// DecodeWords is the server's side of EncodeWords: how a stats socket splits
// one command into words. It documents the protocol and checks EncodeWords.
func DecodeWords(s string) []string {
	var words []string
	var b strings.Builder
	inWord, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			b.WriteByte(c)
			escaped = false
		case c == '\\':
			escaped, inWord = true, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	return words
}
