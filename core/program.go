package core

import (
	"os/user"
	"strconv"

	"goha/core/config"
	"goha/core/diag"
)

// program sections: external commands a master process starts next to
// its worker, stops with it and starts again on a reload, read as
// HAProxy 2.6's cfg_parse_program reads them.

func init() {
	registerSection("program", parseProgramSection)
	registerPostCheck(checkPrograms)
}

// programKeywords are the section's keywords, which docs/configuration.md
// lists (core/docs_test.go keeps them in step).
var programKeywords = []string{"command", "group", "option", "user"}

// Program is one program section.
type Program struct {
	Name    string
	Pos     diag.Pos
	Command []string // the command and its arguments; nil: none given
	// UID and GID are the identity the program runs as; -1 keeps the
	// master's.
	UID, GID int
	// StartOnReload says a reload stops the running program and starts
	// it again (the default); without it a running one goes on.
	StartOnReload bool
}

func parseProgramSection(b *builder, s *config.Section) {
	if s.Name == "" {
		b.report(s.Pos, errf("'program' expects an <id> argument"))
		b.aborted = true
		return
	}
	if len(s.Args) > 0 {
		b.report(s.Pos, errf("'program' cannot handle unexpected argument '%s'.", s.Args[0]))
		b.aborted = true
		return
	}
	for _, p := range b.cfg.Programs {
		if p.Name == s.Name {
			b.report(s.Pos, tightf("'%s' program section already exists in the configuration.", s.Name))
			b.aborted = true
			return
		}
	}
	p := &Program{Name: s.Name, Pos: s.Pos, UID: -1, GID: -1, StartOnReload: true}
	b.cfg.Programs = append(b.cfg.Programs, p)
	for _, ln := range s.Lines {
		if !b.programLine(p, ln) {
			// HAProxy forgets a section whose line it could not take.
			b.cfg.Programs = b.cfg.Programs[:len(b.cfg.Programs)-1]
			return
		}
	}
}

// programLine reads one line of p; false drops the section, as HAProxy's
// error path frees it.
func (b *builder) programLine(p *Program, ln config.Line) bool {
	w := ln.Words
	prefix := ""
	if (w[0] == "no" || w[0] == "default") && len(w) > 1 {
		prefix, w = w[0], w[1:]
	}
	arg := func(i int) string {
		if i < len(w) {
			return w[i]
		}
		return ""
	}
	if prefix != "" && w[0] != "option" {
		// HAProxy alerts, then reads the line without the prefix.
		b.report(ln.Pos, tightf("negation/default currently supported only for options, log, busy-polling, set-dumpable, strict-limits, insecure-fork-wanted and numa-cpu-mapping."))
	}
	switch w[0] {
	case "command":
		if arg(1) == "" {
			b.report(ln.Pos, tightf("'%s' expects a command with optional arguments separated in words.", w[0]))
			return false
		}
		p.Command = append([]string(nil), w[1:]...)
	case "option":
		if arg(1) == "" {
			b.report(ln.Pos, tightf("'%s' expects an option name.", w[0]))
			return false
		}
		if w[1] != "start-on-reload" {
			b.report(ln.Pos, errf("unknown option '%s'.", w[1]))
			return false
		}
		if len(w) > 2 {
			b.report(ln.Pos, errf("'%s %s' cannot handle unexpected argument '%s'.", w[0], w[1], w[2]))
			return false
		}
		// "default option" leaves it as it is, as in HAProxy.
		switch prefix {
		case "":
			p.StartOnReload = true
		case "no":
			p.StartOnReload = false
		}
	case "user", "group":
		what := map[string]string{"user": "a user name", "group": "a group name"}[w[0]]
		if arg(1) == "" {
			b.report(ln.Pos, tightf("'%s' expects %s.", w[0], what))
			return false
		}
		if len(w) > 2 {
			b.report(ln.Pos, errf("'%s' cannot handle unexpected argument '%s'.", w[0], w[2]))
			return false
		}
		id := &p.UID
		if w[0] == "group" {
			id = &p.GID
		}
		if *id != -1 {
			b.report(ln.Pos, &continueAlert{msg: w[0] + "/" + map[string]string{"user": "uid", "group": "gid"}[w[0]] + " already specified. Continuing."})
			return true
		}
		var s string
		var err error
		if w[0] == "user" {
			var u *user.User
			if u, err = user.Lookup(w[1]); err == nil {
				s = u.Uid
			}
		} else {
			var g *user.Group
			if g, err = user.LookupGroup(w[1]); err == nil {
				s = g.Gid
			}
		}
		n, cerr := strconv.Atoi(s)
		if err != nil || cerr != nil {
			b.report(ln.Pos, errf("cannot find %s id for '%s' (0:Success)", w[0], w[1]))
			return true
		}
		*id = n
	default:
		b.report(ln.Pos, errf("unknown keyword '%s' in '%s' section", w[0], "program"))
		return false
	}
	return true
}

// checkPrograms runs once every section is read, as HAProxy's
// cfg_program_postparser.
func checkPrograms(b *builder) {
	for _, p := range b.cfg.Programs {
		if p.Command == nil {
			b.d.Add(diag.Diag{Sev: diag.Alert, Msg: "The program section '" + p.Name + "' lacks a command to launch."})
		}
	}
	if len(b.cfg.Programs) > 0 && !b.masterWorker && !b.cfg.Global.MasterWorker {
		b.d.Add(diag.Diag{Sev: diag.Alert, Msg: "Can't use a 'program' section without master worker mode."})
	}
}
