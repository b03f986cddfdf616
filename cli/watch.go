package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

const (
	reverseOn  = "\x1b[7m"
	reverseOff = "\x1b[27m"
	clearHome  = "\x1b[H\x1b[2J"
)

// ParseInterval reads watch's period: seconds ("2", "0.5") or a Go
// duration ("500ms"). Periods under 100ms are refused: a stats socket is
// not meant to be polled harder than that.
func ParseInterval(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil {
			return 0, fmt.Errorf("%w: watch: bad interval %q (seconds, or a duration such as 500ms)", ErrSyntax, s)
		}
		d = time.Duration(f * float64(time.Second))
	}
	if d < 100*time.Millisecond {
		return 0, fmt.Errorf("%w: watch: interval %v is under 100ms", ErrSyntax, d)
	}
	return d, nil
}

// Watch runs a command every interval and redraws its output on a terminal
// until a key is pressed on inFd. What changed since the previous frame is
// shown in reverse video. A lost connection is reported on the screen and
// retried at the next tick, so a restarted server comes back by itself.
// Messages that prevent the watch from starting go to errOut.
func (s *Session) Watch(args []string, stages [][]string, inFd, outFd int, out, errOut io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintf(errOut, "gohactl: usage: watch <seconds> <command> [| stage ...]\n")
		return ExitUsage
	}
	every, err := ParseInterval(args[0])
	if err != nil {
		fmt.Fprintf(errOut, "%s\n", Message(err))
		return ExitUsage
	}
	line, err := EncodeWords(args[1:])
	if err != nil {
		fmt.Fprintf(errOut, "%s\n", Message(err))
		return ExitUsage
	}
	restore, err := keyMode(inFd)
	if err != nil {
		fmt.Fprintf(errOut, "gohactl: watch needs a terminal: %v\n", err)
		return ExitUsage
	}
	defer restore()
	title := strings.Join(args[1:], " ")
	for _, st := range stages {
		title += " | " + strings.Join(st, " ")
	}
	prev := ""
	for {
		text, _ := s.runText(line, nil, stages)
		cols, rows := termSize(outFd)
		// The header, a blank line, and the frame's last newline take three
		// rows; one more line would scroll the header away.
		frame := clip(text, cols, rows-3)
		header := fmt.Sprintf("Every %v: %s", every, title)
		stamp := time.Now().Format("15:04:05") + "  (any key stops)"
		if cols > 0 && len(header)+len(stamp)+2 <= cols {
			header += strings.Repeat(" ", cols-len(header)-len(stamp)) + stamp
		} else {
			header += "  " + stamp
		}
		body := frame
		if prev != "" {
			body = Highlight(frame, prev)
		}
		io.WriteString(out, clearHome+clip(header, cols, 1)+"\n\n"+body)
		prev = frame
		if waitKey(inFd, int(every/time.Millisecond)) {
			io.WriteString(out, "\n")
			return ExitOK
		}
	}
}

// clip keeps at most rows lines of at most cols characters (0: no limit),
// so that a frame never scrolls the screen.
func clip(text string, cols, rows int) string {
	lines := strings.SplitAfter(text, "\n")
	if rows > 0 && len(lines) > rows {
		lines = lines[:rows]
	}
	var b strings.Builder
	for _, l := range lines {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimSuffix(l, "\n")
		if r := []rune(l); cols > 0 && len(r) > cols {
			l = string(r[:cols])
		}
		b.WriteString(l)
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Highlight marks in reverse video each word of cur that is not in the same
// place in prev: a word (a run of non-blanks) is unchanged when prev has the
// same characters at the same column of the same line, bounded by blanks.
// Aligned tables thus light up cell by cell.
func Highlight(cur, prev string) string {
	pl := strings.Split(prev, "\n")
	var b strings.Builder
	for i, line := range strings.Split(cur, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		var old []rune
		if i < len(pl) {
			old = []rune(pl[i])
		}
		r := []rune(line)
		for j := 0; j < len(r); {
			if r[j] == ' ' {
				b.WriteRune(' ')
				j++
				continue
			}
			k := j
			for k < len(r) && r[k] != ' ' {
				k++
			}
			word := string(r[j:k])
			if sameWord(old, j, k, word) {
				b.WriteString(word)
			} else {
				b.WriteString(reverseOn + word + reverseOff)
			}
			j = k
		}
	}
	return b.String()
}

func sameWord(old []rune, j, k int, word string) bool {
	if k > len(old) || string(old[j:k]) != word {
		return false
	}
	if j > 0 && old[j-1] != ' ' {
		return false
	}
	return k == len(old) || old[k] == ' '
}
