package core

import (
	"fmt"
	"maps"
	"slices"

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
	b.peersSeen = true
	ps := &PeersSection{Name: s.Name, LocalName: b.localPeer}
	hasLocal := false
	var defSrv ServerConf
	// remote is a peer's reference, with the TLS its line (and the
	// default-server lines before it) ask for.
	remote := func(ln config.Line, name, addr string, params []string) PeerRef {
		r := PeerRef{Name: name, Addr: addr}
		sc := defSrv
		sc.SSLArgs = maps.Clone(defSrv.SSLArgs)
		applyServerArgs(&sc, name, params, false, nil)
		if sc.SSL == 1 {
			c, err := (&Server{ServerConf: sc}).buildTLS(&b.cfg.Global)
			if err != nil {
				b.d.Alertf(ln.Pos, "peers '%s': server '%s': %v", s.Name, name, err)
			}
			r.TLS = c
		}
		return r
	}
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
				hasLocal, ps.Local, ps.LocalPos = true, w[2], len(ps.Peers)
			} else {
				ps.Peers = append(ps.Peers, remote(ln, w[1], w[2], w[3:]))
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
					hasLocal, ps.Local, ps.LocalPos = true, w[2], len(ps.Peers)
				} else {
					ps.Peers = append(ps.Peers, remote(ln, w[1], w[2], w[3:]))
				}
			} else if w[1] == b.localPeer {
				// The local peer's address is the section's bind line.
				hasLocal, ps.LocalPos = true, len(ps.Peers)
			}
		case "bind":
			if len(w) > 1 && ps.Local == "" {
				ps.Local = w[1]
			}
			if slices.Contains(w[2:], "ssl") {
				c, err := buildBindTLS(&b.cfg.Global, &Bind{Args: w[2:]})
				if err != nil {
					b.d.Alertf(ln.Pos, "peers '%s': bind %s: %v", s.Name, w[1], err)
				}
				ps.LocalTLS = c
			}
			if len(w) > 2 {
				if kw := unknownBindParam(w[2:]); kw != "" {
					b.d.Alertf(ln.Pos, "'bind %s' in section 'peers': unknown keyword '%s'.", w[1], kw)
				}
			}
		case "table":
			if len(w) < 2 {
				b.d.Alertf(ln.Pos, "table: ID not provided.")
				continue
			}
			t, warn, err := parseStickTable("table", s.Name+"/"+w[1], w[2:], true)
			if err != nil {
				b.report(ln.Pos, err)
				continue
			}
			if warn != nil {
				b.report(ln.Pos, warn)
			}
			t.Peers = s.Name
			ps.Tables = append(ps.Tables, t)
		case "log":
			if _, err := ring.ParseLogArgs(w[1:], false); err != nil {
				b.report(ln.Pos, logErr(err))
			}
		case "disabled":
			ps.Disabled = true
		case "enabled":
			ps.Disabled = false
		case "default-server":
			applyServerArgs(&defSrv, "", w[1:], true, nil)
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
