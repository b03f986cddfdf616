package config

import "errors"

// EvalCondition evaluates a condition in the language of .if lines, as
// `-cc` does on the command line.
func EvalCondition(text string, opts Options) (bool, error) {
	p := newParser(opts, nil)
	v, msg, _ := evalCondition(text, &p.cond)
	if msg != "" {
		return false, errors.New(msg)
	}
	return v, nil
}
