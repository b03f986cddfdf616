package core

import (
	"goha/core/config"
	"goha/core/diag"
	"os"
	"strconv"
)

// ErrorDef is one line that sets a proxy's error pages: errorfile,
// errorloc, errorloc302, errorloc303, errorfiles or http-error. HAProxy
// applies them in order, a defaults section's first, a later line
// replacing what an earlier one set for the same status.
type ErrorDef struct {
	Pos  diag.Pos
	Kind string // the keyword
	Code int    // errorfile, errorloc*, http-error
	Arg  string // the file, the URL, or the http-errors section's name
	// Codes are the statuses an errorfiles line names; none: every one
	// the section has.
	Codes []int
	// Words are an http-error line's reply words after `status <code>`.
	Words []string
}

// HTTPErrorsSection is an `http-errors <name>` section: errorfile lines.
type HTTPErrorsSection struct {
	Pos   diag.Pos
	Name  string
	Files map[int]string
}

// errorCodes are the statuses HAProxy 2.6 keeps error pages for.
var errorCodes = map[int]bool{200: true, 400: true, 401: true, 403: true, 404: true, 405: true, 407: true, 408: true,
	410: true, 413: true, 425: true, 429: true, 500: true, 501: true, 502: true, 503: true, 504: true}

// ErrorCode says whether status has an error page in HAProxy 2.6.
func ErrorCode(status int) bool { return errorCodes[status] }

func init() {
	registerKeywords(
		Keyword{Name: "errorloc", Scope: scopeProxy, Args: ArgsAny, Parse: parseErrorloc},
		Keyword{Name: "errorloc302", Scope: scopeProxy, Args: ArgsAny, Parse: parseErrorloc},
		Keyword{Name: "errorloc303", Scope: scopeProxy, Args: ArgsAny, Parse: parseErrorloc},
		Keyword{Name: "errorfiles", Scope: scopeProxy, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
			if first(args) == "" {
				return errf("errorfiles : expects <name> as argument.")
			}
			d := ErrorDef{Pos: c.pos, Kind: "errorfiles", Arg: args[0]}
			for _, w := range args[1:] {
				n, err := strconv.Atoi(w)
				if err != nil || !errorCodes[n] {
					return errf("errorfiles : status code '%s' not handled.", w)
				}
				d.Codes = append(d.Codes, n)
			}
			c.p.Errors = append(c.p.Errors, d)
			return nil
		}},
		Keyword{Name: "http-error", Scope: scopeProxy, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
			if len(args) == 0 {
				return errf("http-error : expects at least a <status> as arguments.\n")
			}
			if args[0] != "status" || len(args) < 2 {
				return errf("http-error : 'status' expects <status_code> as argument")
			}
			n, err := strconv.Atoi(args[1])
			if err != nil || !errorCodes[n] {
				return errf("http-error : Unexpected status code '%s'", args[1])
			}
			c.p.Errors = append(c.p.Errors, ErrorDef{Pos: c.pos, Kind: "http-error", Code: n, Words: append([]string(nil), args[2:]...)})
			return nil
		}},
	)
	registerSection("http-errors", parseHTTPErrors)
	registerPostCheck(checkErrorfiles)
}

// addErrorFile reads an `errorfile <code> <file>` line of a proxy.
func addErrorFile(c *kwCtx, args []string) error {
	if len(args) < 2 {
		return errf("'errorfile' expects <status_code> and <file> as arguments.")
	}
	code, err := strconv.Atoi(args[0])
	if err != nil {
		return errf("'errorfile' expects <status_code> and <file> as arguments.")
	}
	if !errorCodes[code] {
		return errf("errorfile : status code '%d' not handled.", code)
	}
	if _, err := os.Stat(args[1]); err != nil {
		return errf("error opening file '%s'.", args[1])
	}
	c.p.Errors = append(c.p.Errors, ErrorDef{Pos: c.pos, Kind: "errorfile", Code: code, Arg: args[1]})
	return nil
}

func parseErrorloc(c *kwCtx, args []string) error {
	if len(args) < 2 {
		return errf("%s : expects <status_code> and <url> as arguments.\n", c.kw)
	}
	code, err := strconv.Atoi(args[0])
	if err != nil || !errorCodes[code] {
		return errf("%s : status code '%s' not handled.", c.kw, args[0])
	}
	c.p.Errors = append(c.p.Errors, ErrorDef{Pos: c.pos, Kind: c.kw, Code: code, Arg: args[1]})
	return nil
}

// parseHTTPErrors reads an http-errors section; the process reads its
// files when it compiles the proxies' error pages.
func parseHTTPErrors(b *builder, s *config.Section) {
	if s.Name == "" {
		b.d.Alertf(s.Pos, "'http-errors' expects <name> as argument.")
		return
	}
	sec := &HTTPErrorsSection{Pos: s.Pos, Name: s.Name, Files: map[int]string{}}
	for _, ln := range s.Lines {
		words := ln.Words
		if len(words) == 0 {
			continue
		}
		if words[0] != "errorfile" {
			b.d.Alertf(ln.Pos, "unknown keyword '%s' in 'http-errors' section", words[0])
			continue
		}
		if len(words) < 3 {
			b.d.Alertf(ln.Pos, "errorfile : expects <status_code> and <file> as arguments.")
			continue
		}
		code, err := strconv.Atoi(words[1])
		if err != nil || !errorCodes[code] {
			b.d.Alertf(ln.Pos, "errorfile : status code '%s' not handled.", words[1])
			continue
		}
		if _, err := os.Stat(words[2]); err != nil {
			b.d.Alertf(ln.Pos, "errorfile : error opening file '%s'.", words[2])
			continue
		}
		sec.Files[code] = words[2]
	}
	if b.cfg.HTTPErrors == nil {
		b.cfg.HTTPErrors = map[string]*HTTPErrorsSection{}
	}
	b.cfg.HTTPErrors[s.Name] = sec
}

// checkErrorfiles refuses errorfiles lines naming no http-errors section,
// with HAProxy's message, and warns of a status the section lacks.
func checkErrorfiles(b *builder) {
	for _, p := range b.cfg.Proxies {
		for _, e := range p.Errors {
			if e.Kind != "errorfiles" {
				continue
			}
			sec := b.cfg.HTTPErrors[e.Arg]
			if sec == nil {
				b.d.Add(diag.Diag{Sev: diag.Alert, Msg: "proxy '" + p.Name + "': unknown http-errors section '" + e.Arg + "' (at " + e.Pos.File + ":" + strconv.Itoa(e.Pos.Line) + ")."})
				continue
			}
			for _, code := range e.Codes {
				if sec.Files[code] == "" {
					b.d.Add(diag.Diag{Sev: diag.Warning, Msg: "config: proxy '" + p.Name + "' : status '" + strconv.Itoa(code) + "' not declared in http-errors section '" + e.Arg + "' (at " + e.Pos.File + ":" + strconv.Itoa(e.Pos.Line) + ")."})
				}
			}
		}
	}
}
