package config

import "strings"

// The tokenizer splits one configuration line into words the way HAProxy
// 2.6 does (parse_line() with quotes, backslash escapes, comments and
// environment variables all enabled). Compatibility matters more than
// elegance here: configurations written for HAProxy must cut into the same
// words, and errors must point at the same column.

// maxLineArgs is HAProxy's MAX_LINE_ARGS: a line may hold at most this many
// words, counting the empty one that trailing blanks leave behind.
const maxLineArgs = 64

type tokErr int

const (
	tokOK      tokErr = iota
	tokQuote          // unmatched quote
	tokBrace          // unmatched brace in ${...}
	tokVarName        // bad first character of a variable name, or unknown pseudo-variable
	tokHex            // \x not followed by two hex digits
	tokExpand         // ${VAR[ not followed by *]
	tokTooMany        // more than maxLineArgs words
)

type tokResult struct {
	// args are the words exactly as HAProxy's parser returns them: a
	// trailing blank leaves an empty last word, and a word holding a NUL
	// (from \x00) is cut there, as C strings are.
	args []string
	err  tokErr
	// errAt is the offset in the line of the character the error points at.
	errAt int
	// For tokTooMany: the 64th word and its 1-based offset in the output.
	manyWord string
	manyPos  int
	// tail is what follows the first word, the words joined by blanks as
	// HAProxy re-merges them for .if and .elif (a NUL from \x00 becomes a
	// blank there too).
	tail string
	// crAt is the offset of a carriage return that ended the line while
	// something other than blanks followed it, or -1.
	crAt int
}

// isSpace is C's isspace() in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isAlpha(c) || isDigit(c) }
func isHex(c byte) bool   { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

func hexVal(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return (c | 0x20) - 'a' + 10
}

// tokenize cuts line (without its LF, leading blanks already skipped) into
// words. env resolves environment variables; pseudo resolves the names
// starting with a dot (".LINE"), saying whether the name is known and
// whether it has a value (".SECTION" has none before the first section).
//
// line may be modified: HAProxy's parser terminates a ${VAR-default} value
// in place and leaves a NUL after an unknown pseudo-variable's name, and
// its error messages print the line as modified, so the caller prints line
// after the call to show the same text.
func tokenize(line []byte, env func(name string) (string, bool), pseudo func(name string) (value string, set, known bool)) tokResult {
	return tokenizeOpts(line, env, pseudo, true)
}

// tokenizeOpts is tokenize with '#' comments optional: the -cc command-line
// condition is cut without them, so a '#' there is an ordinary character.
func tokenizeOpts(line []byte, env func(name string) (string, bool), pseudo func(name string) (value string, set, known bool), comments bool) tokResult {
	r := tokResult{crAt: -1}
	var startsBuf [16]int
	var (
		out     = make([]byte, 0, len(line)+16) // all words, each terminated by a NUL, as HAProxy lays them out
		starts  = append(startsBuf[:0], 0)
		squote  bool
		dquote  bool
		quoteAt = -1
	)
	newWord := func() {
		out = append(out, 0)
		starts = append(starts, len(out))
	}
	n := len(line)
	i := 0
scan:
	for i < n {
		c := line[i]
		switch {
		case c == 0 || c == '\n' || c == '\r':
			if c == '\r' {
				for j := i + 1; j < n && line[j] != 0; j++ {
					if !isSpace(line[j]) {
						r.crAt = i
						break
					}
				}
			}
			break scan
		case c == '#' && comments && !squote && !dquote:
			break scan
		case c == '"' && !squote:
			dquote = !dquote
			if dquote {
				quoteAt = i
			} else {
				quoteAt = -1
			}
			i++
		case c == '\'' && !dquote:
			squote = !squote
			if squote {
				quoteAt = i
			} else {
				quoteAt = -1
			}
			i++
		case c == '\\' && !squote:
			var next byte
			if i+1 < n {
				next = line[i+1]
			}
			switch next {
			case ' ', '\\', '#', '\'', '"':
				out = append(out, next)
				i += 2
			case 't':
				out = append(out, '\t')
				i += 2
			case 'n':
				out = append(out, '\n')
				i += 2
			case 'r':
				out = append(out, '\r')
				i += 2
			case '$':
				// Only an escape where variables expand, i.e. in double quotes.
				if dquote {
					out = append(out, '$')
					i += 2
				} else {
					out = append(out, '\\')
					i++
				}
			case 'x':
				if !isHex(byteAt(line, i+2)) || !isHex(byteAt(line, i+3)) {
					r.err, r.errAt = tokHex, i
					return r
				}
				out = append(out, hexVal(line[i+2])<<4|hexVal(line[i+3]))
				i += 4
			default:
				// Not an escape sequence: the backslash stays.
				out = append(out, '\\')
				i++
			}
		case isSpace(c) && !squote && !dquote:
			for i < n && isSpace(line[i]) {
				i++
			}
			newWord()
		case c == '$' && dquote:
			i++
			brace := -1
			if i < n && line[i] == '{' {
				brace = i
				i++
			}
			if i >= n || !(isAlpha(line[i]) || line[i] == '_' || line[i] == '.') {
				r.err, r.errAt = tokVarName, i
				return r
			}
			nameAt := i
			if line[i] == '.' {
				i++
			}
			for i < n && (isAlnum(line[i]) || line[i] == '_') {
				i++
			}
			name := string(line[nameAt:i])
			var value string
			var ok bool
			if name[0] != '.' {
				value, ok = env(name)
			} else if v, set, known := pseudo(name); known {
				value, ok = v, set
			} else {
				// HAProxy leaves the name terminated in place here.
				if i < n {
					line[i] = 0
				}
				r.err, r.errAt = tokVarName, nameAt
				return r
			}
			expand := false
			if brace >= 0 && i < n && line[i] == '[' {
				if byteAt(line, i+1) != '*' || byteAt(line, i+2) != ']' {
					r.err, r.errAt = tokExpand, i
					return r
				}
				expand = true
				i += 3
			}
			if brace >= 0 {
				if i < n && line[i] == '-' {
					j := i
					for j < n && line[j] != 0 && line[j] != '}' {
						j++
					}
					if j >= n || line[j] != '}' {
						r.err, r.errAt = tokBrace, brace
						return r
					}
					if !ok {
						value, ok = string(line[i+1:j]), true
					}
					line[j] = 0
					i = j
				} else if i >= n || line[i] != '}' {
					r.err, r.errAt = tokBrace, brace
					return r
				}
				i++
			}
			for k := 0; k < len(value); k++ {
				if expand && isSpace(value[k]) {
					newWord()
					for k+1 < len(value) && isSpace(value[k+1]) {
						k++
					}
					continue
				}
				out = append(out, value[k])
			}
		default:
			out = append(out, c)
			i++
		}
	}
	if quoteAt >= 0 {
		r.err, r.errAt = tokQuote, quoteAt
		return r
	}
	out = append(out, 0)
	all := string(out)
	if len(starts) > 1 {
		r.tail = strings.ReplaceAll(all[starts[1]:len(all)-1], "\x00", " ")
	}
	r.args = make([]string, len(starts))
	for k, st := range starts {
		w := all[st:]
		if e := strings.IndexByte(w, 0); e >= 0 {
			w = w[:e]
		}
		r.args[k] = w
	}
	if len(starts) > maxLineArgs {
		r.err = tokTooMany
		r.manyPos = starts[maxLineArgs-1] + 1
		r.manyWord = r.args[maxLineArgs-1]
	}
	return r
}

func byteAt(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	return 0
}

// sanitizeForPrinting renders line (up to its first NUL) for an error
// message the way HAProxy does: blanks become spaces, other unprintable
// bytes become '?', and a line too wide to show around pos is cut to width
// columns with "..." marks. It returns the text and pos's column in it.
func sanitizeForPrinting(line []byte, pos, width int) (string, int) {
	var b []byte
	in := 0
	limit := width
	shift := 0
	if pos >= width {
		// HAProxy jumps ahead in the buffer, possibly past a NUL its
		// parser left, and reads on from there.
		shift = pos - width/2
		in = shift + 3
		limit = width - 3
		b = append(b, "..."...)
	}
	for len(b) < limit && in < len(line) && line[in] != 0 {
		c := line[in]
		switch {
		case isSpace(c):
			b = append(b, ' ')
		case c >= 0x20 && c < 0x7f:
			b = append(b, c)
		default:
			b = append(b, '?')
		}
		in++
	}
	if pos >= width {
		b = append(b, "..."...)
	}
	return string(b), pos - shift
}
