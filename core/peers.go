package core

import (
	"fmt"
	"os"

	"goha/core/config"
	"goha/core/diag"
)

// peers sections are parsed and checked as HAProxy checks them, so that
// configurations using them load; goha does not synchronise stick tables
// (it has none), which docs/configuration.md says.

// PeersSection is a parsed `peers` section.
type PeersSection struct {
	Name  string
	Local string   // the local peer's address, "" when none
	Peers []string // remote peers with an address
}

func init() { registerSection("peers", parsePeersSection) }

// LocalPeerName is the name the local peer is looked up by: HAProxy's -L,
// else the host name.
var LocalPeerName = func() string {
	h, _ := os.Hostname()
	return h
}()

var peersKeywords = []string{"peer", "server", "bind", "default-server", "disabled", "enabled", "table", "log", "shards"}

func parsePeersSection(b *builder, s *config.Section) {
	if s.Name == "" {
		b.d.Alertf(s.Pos, "'peers' expects an <id> argument")
		return
	}
	ps := &PeersSection{Name: s.Name}
	hasLocal := false
	for _, ln := range s.Lines {
		w := ln.Words
		switch w[0] {
		case "peer":
			if len(w) < 3 {
				b.d.Alertf(ln.Pos, "'peer' expects <name> and <addr>[:<port>] as arguments.")
				continue
			}
			if w[1] == LocalPeerName {
				hasLocal, ps.Local = true, w[2]
			} else {
				ps.Peers = append(ps.Peers, w[2])
			}
		case "server":
			// A server line without an address is a remote peer without
			// address: ignored, not an error (the seed's fix).
			if len(w) < 2 {
				b.d.Alertf(ln.Pos, "'server' expects <name> as argument.")
				continue
			}
			if len(w) >= 3 {
				if w[1] == LocalPeerName {
					hasLocal, ps.Local = true, w[2]
				} else {
					ps.Peers = append(ps.Peers, w[2])
				}
			}
		case "bind", "default-server", "disabled", "enabled", "table", "log", "shards":
		default:
			msg := fmt.Sprintf("unknown keyword '%s' in 'peers' section", w[0])
			if best := SuggestFunc(w[0], peersKeywords); best != "" {
				msg += fmt.Sprintf("; did you mean '%s' maybe ?", best)
			}
			b.d.Alertf(ln.Pos, "%s", msg)
		}
	}
	if !hasLocal {
		b.d.Add(diag.Diag{Sev: diag.Warning, Msg: fmt.Sprintf("Removing incomplete section 'peers %s' (no peer named '%s').", s.Name, LocalPeerName)})
		return
	}
	b.cfg.Peers = append(b.cfg.Peers, ps)
}
