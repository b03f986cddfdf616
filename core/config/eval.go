package config

import "errors"

// EvalCondition evaluates a condition in the language of .if lines, as
// `-cc` does on the command line. The text is first cut into words the way
// a configuration line is (quotes, escapes and environment variables
// resolved, no comments), then the words are joined by single blanks, so
// `streq("$V",1)` compares V's value. A non-nil error is the whole message
// HAProxy prints.
func EvalCondition(text string, opts Options) (bool, error) {
	p := newParser(opts, nil)
	noPseudo := func(string) (string, bool, bool) { return "", false, false }
	res := tokenizeOpts([]byte(text), p.lookup, noPseudo, false)
	switch res.err {
	case tokOK:
	case tokQuote:
		return false, errors.New("Syntax Error in condition: Unmatched quote.")
	case tokHex:
		return false, errors.New("Syntax Error in condition: Truncated or invalid hexadecimal sequence.")
	case tokTooMany:
		return false, errors.New("Error in condition: Too many words.")
	default:
		return false, errors.New("Unhandled error in condition, please report this to the developers.")
	}
	expr := res.args[0]
	if len(res.args) > 1 {
		expr += " " + res.tail
	}
	v, msg, _ := evalCondition(expr, &p.cond)
	if msg != "" {
		return false, errors.New("Failed to evaluate condition: " + msg)
	}
	return v, nil
}
