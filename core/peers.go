package core

import (
	"fmt"

	"goha/core/config"
	"goha/core/diag"
	"goha/ring"
)

// peers sections are parsed and checked as HAProxy checks them, so that
// configurations using them load; goha does not synchronise stick tables
// (it has none), which docs/configuration.md says.

func init() { registerSection("peers", parsePeersSection) }

// HAProxy 2.6 has no "shards" (2.7 brought it): it is an unknown keyword.
var peersKeywords = []string{"peer", "server", "bind", "default-server", "disabled", "enabled", "table", "log"}

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
			if !b.checkPeerParams(ln, w[1], w[3:]) {
				continue
			}
			if w[1] == b.localPeer {
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
				if !b.checkPeerParams(ln, w[1], w[3:]) {
					continue
				}
				if w[1] == b.localPeer {
					hasLocal, ps.Local = true, w[2]
				} else {
					ps.Peers = append(ps.Peers, w[2])
				}
			}
		case "bind":
			if len(w) > 2 {
				if kw := unknownBindParam(w[2:]); kw != "" {
					b.d.Alertf(ln.Pos, "'bind %s' in section 'peers': unknown keyword '%s'.", w[1], kw)
				}
			}
		case "table":
			if err := checkPeersTable(w[1:]); err != nil {
				b.report(ln.Pos, err)
			}
		case "log":
			if _, err := ring.ParseLogArgs(w[1:], false); err != nil {
				b.report(ln.Pos, logErr(err))
			}
		case "default-server", "disabled", "enabled":
		default:
			msg := fmt.Sprintf("unknown keyword '%s' in 'peers' section", w[0])
			if best := SuggestFunc(w[0], peersKeywords); best != "" {
				msg += fmt.Sprintf("; did you mean '%s' maybe ?", best)
			}
			b.d.Alertf(ln.Pos, "%s", msg)
		}
	}
	if !hasLocal {
		b.d.Add(diag.Diag{Sev: diag.Warning, Msg: fmt.Sprintf("Removing incomplete section 'peers %s' (no peer named '%s').", s.Name, b.localPeer)})
		return
	}
	b.cfg.Peers = append(b.cfg.Peers, ps)
}

// checkPeerParams refuses the words after a peer's address that are no
// server keyword, as HAProxy parses them as a server's.
func (b *builder) checkPeerParams(ln config.Line, name string, params []string) bool {
	return b.checkServerParams(ln, b.localPeer, name, params)
}

// checkPeersTable refuses what a peers section's table line does not know:
// table <name> type <type> [len <n>] size <size> [expire <t>] [nopurge]
// [store <data>,...].
func checkPeersTable(args []string) error {
	size := false
	for i := 1; i < len(args); i++ {
		size = size || args[i] == "size"
		switch args[i] {
		case "type", "size", "expire", "store", "len", "peers":
			i++
		case "nopurge":
		default:
			return errf("table: unknown argument '%s'.", args[i])
		}
	}
	if !size {
		return errf("table: missing size.")
	}
	return nil
}
