package core

// HAProxy 2.6's experimental directives: refused unless a global
// expose-experimental-directives came before them.

// experimentalActions are the http-request actions HAProxy 2.6 marks
// experimental.
var experimentalActions = map[string]bool{"normalize-uri": true}

func exposeExperimental(c *kwCtx, args []string) error {
	c.g.ExposeExperimental = true
	return nil
}

// checkExperimental refuses an experimental action when the global
// section read so far did not allow it; HAProxy then stops reading the
// configuration.
func (c *kwCtx) checkExperimental(action string) error {
	if c.kw != "http-request" || !experimentalActions[action] || c.g.ExposeExperimental {
		return nil
	}
	return &abortErr{msg: "'" + action + "' action is experimental, must be allowed via a global 'expose-experimental-directives'"}
}

// abortErr is an alert after which HAProxy reads no further line.
type abortErr struct{ msg string }

func (e *abortErr) Error() string { return e.msg }
