package stream

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"goha/core"
	"goha/core/peers"
)

// startPeers runs the peers sections that share tables: each listens on
// its local peer's address and keeps a session with every other peer.
func (proc *Process) startPeers() error {
	for _, ps := range proc.Conf.Peers {
		if ps.Disabled {
			continue
		}
		cfg := peers.Config{Section: ps.Name, LocalName: ps.LocalName, LocalPos: ps.LocalPos}
		for _, t := range ps.Tables {
			if tb := proc.tables[t.Name]; tb != nil {
				// HAProxy 2.6 calls a section's table "/<name>" on the
				// wire (its name less the section's).
				cfg.Tables = append(cfg.Tables, peers.Shared{Name: strings.TrimPrefix(t.Name, ps.Name), Table: tb})
			}
		}
		for _, p := range proc.proxies {
			if p.StickTable != nil && p.StickTable.Peers == ps.Name {
				cfg.Tables = append(cfg.Tables, peers.Shared{Name: p.Name, Table: proc.tables[p.Name]})
			}
		}
		for _, r := range ps.Peers {
			cfg.Remotes = append(cfg.Remotes, peers.Remote{Name: r.Name, Addr: peerAddr(r.Addr), TLS: r.TLS})
		}
		if ps.Local != "" {
			ln, err := proc.adoptPeer(ps.Local)
			if ln == nil && err == nil {
				ln, err = listenPeer(ps.Local)
			}
			if err != nil {
				return fmt.Errorf("Starting peers %s: cannot bind socket (%v) [%s]", ps.Name, err, ps.Local)
			}
			cfg.Listener, cfg.ListenTLS = ln, ps.LocalTLS
			// A process taking over connects there to learn the tables;
			// over TLS it would need a client certificate the local peer's
			// bind does not give.
			if ps.LocalTLS == nil && !strings.HasPrefix(ps.Local, "fd@") {
				cfg.LocalAddr = peerAddr(ps.Local)
			}
		}
		pr := peers.Start(cfg)
		proc.peers = append(proc.peers, pr)
		if proc.peersByName == nil {
			proc.peersByName = map[string]*peers.Peers{}
		}
		proc.peersByName[ps.Name] = pr
		proc.OnStop(pr.Stop)
	}
	return nil
}

// adoptPeer takes the local peer's listening socket from those an old
// process handed over (nil when it has none): the old process still
// listens on it until it stops, so binding again would fail.
func (proc *Process) adoptPeer(a string) (net.Listener, error) {
	if strings.HasPrefix(a, "fd@") {
		return nil, nil
	}
	files := proc.takeAdopted(&core.Bind{}, "tcp", peerAddr(a))
	if len(files) == 0 {
		return nil, nil
	}
	for _, f := range files[1:] {
		f.Close()
	}
	defer files[0].Close()
	return net.FileListener(files[0])
}

// handOffPeers teaches the tables of every peers section to the process
// that took over their local peer's socket, within d, all sections at
// once.
func (proc *Process) handOffPeers(d time.Duration) {
	var wg sync.WaitGroup
	for _, pr := range proc.peers {
		wg.Add(1)
		go func(pr *peers.Peers) {
			defer wg.Done()
			pr.HandOff(d)
		}(pr)
	}
	wg.Wait()
}

// peerAddr is a peer line's address as net.Dial takes it.
func peerAddr(a string) string {
	for _, p := range []string{"ipv4@", "ipv6@", "tcp@", "tcp4@", "tcp6@"} {
		a = strings.TrimPrefix(a, p)
	}
	return a
}

// listenPeer opens the local peer's listening socket: an inherited
// descriptor (fd@N) or an address.
func listenPeer(a string) (net.Listener, error) {
	if n, ok := strings.CutPrefix(a, "fd@"); ok {
		fd, err := strconv.Atoi(n)
		if err != nil {
			return nil, fmt.Errorf("invalid file descriptor %s", n)
		}
		f := os.NewFile(uintptr(fd), a)
		if f == nil {
			return nil, fmt.Errorf("invalid file descriptor %d", fd)
		}
		defer f.Close()
		return net.FileListener(f)
	}
	return net.Listen("tcp", peerAddr(a))
}

// PeersView is a peers section as show peers lists it.
type PeersView struct {
	Name     string
	Disabled bool
	Since    time.Time // when the section started
	Peers    []peers.PeerStatus
}

// PeersSections lists the peers sections, the last declared first, as
// HAProxy does.
func (proc *Process) PeersSections() []PeersView {
	var out []PeersView
	for i := len(proc.Conf.Peers) - 1; i >= 0; i-- {
		ps := proc.Conf.Peers[i]
		v := PeersView{Name: ps.Name, Disabled: ps.Disabled, Since: proc.Start}
		if pr := proc.peersByName[ps.Name]; pr != nil {
			ids := map[string]string{}
			for _, t := range ps.Tables {
				ids[strings.TrimPrefix(t.Name, ps.Name)] = t.Name
			}
			for _, p := range proc.proxies {
				if p.StickTable != nil && p.StickTable.Peers == ps.Name {
					ids[p.Name] = p.Name
				}
			}
			v.Peers = pr.Status(ps.Local, ids)
		}
		out = append(out, v)
	}
	return out
}
