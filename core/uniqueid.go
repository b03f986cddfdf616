package core

// UniqueID is a proxy's unique-id-format and unique-id-header, inherited
// from its defaults section as a whole: a format is a log-format string
// the running process compiles, evaluated once per request of a frontend.
type UniqueID struct {
	Fmt    *LogFormatDef // nil: no unique-id-format
	Header string        // "": the id is not sent to the server
}

func parseUniqueIDFormat(c *kwCtx, args []string) error {
	if len(args) < 1 {
		return errf("unique-id-format expects an argument.")
	}
	if len(args) > 1 {
		return errf("unique-id-format expects only one argument, don't forget to escape spaces!")
	}
	c.p.UniqueID.Fmt = &LogFormatDef{Pos: c.pos, Kind: "unique-id-format", Src: args[0]}
	return nil
}

// parseUniqueIDHeader keeps the first word: HAProxy ignores any other.
func parseUniqueIDHeader(c *kwCtx, args []string) error {
	if len(args) < 1 {
		return errf("unique-id-header expects an argument.")
	}
	c.p.UniqueID.Header = args[0]
	return nil
}
