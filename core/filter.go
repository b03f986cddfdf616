package core

import (
	"errors"
	"os"
	"strings"
	"syscall"
)

// parseFilter reads a filter line. goha runs the compression filter; any
// other is checked as far as HAProxy refuses it at parse time, then
// refused, since a filter changes what traffic gets. An SPOE filter needs
// its agents' configuration file, which must at least open.
func parseFilter(c *kwCtx, args []string) error {
	if len(args) == 0 {
		return errf("parsing [%s:%d] : missing argument for 'filter' in %s '%s'.", c.pos.File, c.pos.Line, capName(c.p.Cap), c.p.Name)
	}
	switch args[0] {
	case "compression":
		return parseCompFilter(c, args)
	case "cache":
		return parseCacheFilter(c, args)
	}
	if args[0] == "spoe" {
		file := ""
		for i := 1; i < len(args); i++ {
			switch args[i] {
			case "config", "engine":
				if i+1 >= len(args) || args[i+1] == "" {
					return errf("'filter' : ''spoe' : '%s' option without value'", args[i])
				}
				if args[i] == "config" {
					file = args[i+1]
				}
				i++
			default:
				return errf("'filter' : 'unknown keyword '%s''", args[i])
			}
		}
		if file == "" {
			return errf("'filter' : ''spoe' : missing config file'")
		}
		f, err := os.Open(file)
		if err != nil {
			return errf("'filter' : 'Could not open configuration file %s : %s'", file, openErrText(err))
		}
		f.Close()
	}
	// Checked as HAProxy checks it, then refused: a filter changes what
	// traffic gets (SPOE, trace, bandwidth limits).
	c.p.filterOrder = append(c.p.filterOrder, args[0])
	return Refused.err("filter")
}

// openErrText is C's strerror() text for a failed open.
func openErrText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if s := errno.Error(); s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}
