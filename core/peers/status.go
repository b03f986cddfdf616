package peers

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// What show peers reports of each peer: the outcome of the last
// handshake, heartbeats and connections counted, and per table what was
// pushed and received.

// peerStats is the running record of one remote peer; mu guards the
// fields that are not atomic.
type peerStats struct {
	mu            sync.Mutex
	status        int       // the last handshake's status code (0: none yet)
	lastHandshake time.Time // when a session last began
	nextConnect   time.Time // when the next connection attempt is due
	src, dst      string    // the session's addresses
	tls           bool
	accepted      bool // the peer opened the session

	txHbt, rxHbt, noHbt, newConn, protoErr, coll, confirm atomic.Uint32
}

func (p *Peers) stats(name string) *peerStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.peerStats == nil {
		p.peerStats = map[string]*peerStats{}
	}
	st := p.peerStats[name]
	if st == nil {
		st = &peerStats{}
		p.peerStats[name] = st
	}
	return st
}

func (ps *peerStats) setStatus(code int) {
	ps.mu.Lock()
	ps.status = code
	ps.mu.Unlock()
}

// begin records a new session: its addresses as HAProxy shows them, the
// connecting side's first.
func (ps *peerStats) begin(c net.Conn, tlsConn, accepted bool) {
	ps.mu.Lock()
	ps.status, ps.lastHandshake = statusSuccess, time.Now()
	ps.src, ps.dst, ps.tls = c.LocalAddr().String(), c.RemoteAddr().String(), tlsConn
	if accepted {
		ps.src, ps.dst = ps.dst, ps.src
	}
	ps.accepted = accepted
	ps.mu.Unlock()
}

// PeerStatus is one peer of a section as show peers lists it.
type PeerStatus struct {
	Name, Addr                                            string
	Local, Active                                         bool
	Status                                                int
	LastHandshake                                         time.Time // zero: never
	NextConnect                                           time.Time // zero: none planned
	NextHeartbeat                                         time.Time // zero: no session
	Confirm, TxHbt, RxHbt, NoHbt, NewConn, ProtoErr, Coll uint32
	TLS                                                   bool
	Accepted                                              bool // the peer opened the session
	Src, Dst                                              string
	Tables                                                []TableStatus
}

// TableStatus is what a session did with one shared table.
type TableStatus struct {
	ID                             string // the table's name in the configuration
	LocalID, RemoteID, RemoteData  uint64
	LastAcked, LastPushed, LastGet uint32
	Update                         uint64 // the table's last local update
}

// Status lists the section's peers: the local one first, then the
// others, as HAProxy lists them (its list is the configuration's,
// reversed, the local peer included).
func (p *Peers) Status(localAddr string, ids map[string]string) []PeerStatus {
	var out []PeerStatus
	tables := func(s *session) []TableStatus {
		// HAProxy lists a peer's tables the last registered first.
		var ts []TableStatus
		for i := len(p.cfg.Tables) - 1; i >= 0; i-- {
			sh := p.cfg.Tables[i]
			t := TableStatus{ID: ids[sh.Name], LocalID: uint64(i + 1), Update: sh.Table.UpdateSeq()}
			if s != nil {
				st := s.send[i]
				t.LastPushed = st.upd.Load()
				if rt := s.recv.Load(); rt != nil {
					if r := (*rt)[sh.Table]; r != nil {
						t.RemoteID, t.RemoteData = r.remoteID, r.def.Types
						t.LastGet = r.lastGet.Load()
						t.LastAcked = t.LastGet
					}
				}
			}
			ts = append(ts, t)
		}
		return ts
	}
	for i := len(p.cfg.Remotes); i >= 0; i-- {
		if i == p.cfg.LocalPos {
			out = append(out, PeerStatus{Name: p.cfg.LocalName, Addr: localAddr, Local: true, Tables: tables(nil)})
		}
		if i == len(p.cfg.Remotes) {
			continue
		}
		r := p.cfg.Remotes[i]
		st := p.stats(r.Name)
		p.mu.Lock()
		s := p.sessions[r.Name]
		p.mu.Unlock()
		st.mu.Lock()
		ps := PeerStatus{Name: r.Name, Addr: r.Addr, Active: s != nil, Status: st.status, LastHandshake: st.lastHandshake,
			NextConnect: st.nextConnect, TLS: st.tls, Src: st.src, Dst: st.dst, Accepted: st.accepted}
		st.mu.Unlock()
		ps.Confirm, ps.TxHbt, ps.RxHbt, ps.NoHbt = st.confirm.Load(), st.txHbt.Load(), st.rxHbt.Load(), st.noHbt.Load()
		ps.NewConn, ps.ProtoErr, ps.Coll = st.newConn.Load(), st.protoErr.Load(), st.coll.Load()
		if s != nil {
			ps.NextHeartbeat = time.Unix(0, s.lastSent.Load()).Add(heartbeatEvery)
		}
		ps.Tables = tables(s)
		out = append(out, ps)
	}
	return out
}
