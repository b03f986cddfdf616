package runtime

import (
	"goha/core/config"
	"time"
)

// Commands about the CLI session itself.
func init() {
	Register(
		&Command{Words: []string{"help"}, Usage: "help [<command>]", Help: "list matching or all commands", tail: true, Run: cmdHelp},
		&Command{Words: []string{"prompt"}, Usage: "prompt", Help: "toggle interactive mode with prompt", tail: true, Run: cmdPrompt},
		&Command{Words: []string{"quit"}, Usage: "quit", Help: "disconnect", tail: true, Run: func(c *Ctx) { c.s.quit = true }},
		&Command{Words: []string{"operator"}, Usage: "operator", Help: "lower the level of the current CLI session to operator",
			Level: LevelOperator, Run: func(c *Ctx) { c.s.level, c.s.modes = LevelOperator, 0 }},
		&Command{Words: []string{"user"}, Usage: "user", Help: "lower the level of the current CLI session to user",
			Run: func(c *Ctx) { c.s.level, c.s.modes = LevelUser, 0 }},
		&Command{Words: []string{"expert-mode"}, Level: LevelAdmin, unlisted: true, Run: cmdMode("expert-mode", ModeExpert)},
		&Command{Words: []string{"experimental-mode"}, Level: LevelAdmin, unlisted: true, Run: cmdMode("experimental-mode", ModeExperimental)},
		&Command{Words: []string{"show", "cli", "level"}, Usage: "show cli level", Help: "display the level of the current CLI session",
			Run: func(c *Ctx) { c.Msg(c.s.level.String()) }},
		&Command{Words: []string{"show", "cli", "sockets"}, Usage: "show cli sockets", Help: "dump list of cli sockets", Run: cmdShowSockets},
		&Command{Words: []string{"set", "timeout"}, Usage: "set timeout [cli] <delay>", Help: "change a timeout setting", Run: cmdSetTimeout},
		&Command{Words: []string{"set", "severity-output"}, Usage: "set severity-output [none|number|string]",
			Help: "set presence of severity level in feedback information", Run: cmdSetSeverity},
	)
}

func cmdHelp(c *Ctx) {
	c.s.message(sevInfo, usageText(c.Args[1:], true, c.s.modes))
}

// cmdMode is `expert-mode [on|off]` and `experimental-mode [on|off]`:
// without an argument it tells the mode's state; any argument but "on"
// turns it off, as in 2.6.
func cmdMode(name string, m Mode) func(c *Ctx) {
	return func(c *Ctx) {
		switch c.Arg(1) {
		case "":
			state := "OFF"
			if c.s.modes&m != 0 {
				state = "ON"
			}
			c.Msg(name + " is " + state)
		case "on":
			c.s.modes |= m
		default:
			c.s.modes &^= m
		}
	}
}

// cmdPrompt toggles prompt mode, as 2.6's `prompt` (which takes no
// argument) does; leaving it makes the session non-interactive again.
func cmdPrompt(c *Ctx) { c.s.prompt = !c.s.prompt }

func cmdShowSockets(c *Ctx) {
	c.WriteString("# socket lvl processes\n")
	for _, l := range c.s.srv.Sockets() {
		c.WriteString(l + "\n")
	}
}

func cmdSetTimeout(c *Ctx) {
	if c.Arg(2) != "cli" {
		c.Err("'set timeout' only supports 'cli'.")
		return
	}
	if c.Arg(3) == "" {
		c.Err("Expects an integer value.")
		return
	}
	d, err := config.ParseTime(c.Arg(3), time.Second)
	if err != nil || d < time.Millisecond {
		c.Err("Invalid timeout value.")
		return
	}
	c.s.timeout = d
}

func cmdSetSeverity(c *Ctx) {
	switch c.Arg(2) {
	case "none":
		c.s.severity = sevNone
	case "number":
		c.s.severity = sevNumber
	case "string":
		c.s.severity = sevString
	default:
		c.Err("one of 'none', 'number', 'string' is a required argument")
	}
}
