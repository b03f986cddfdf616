// Package peers speaks HAProxy's peers protocol (version 2.1, as HAProxy
// 2.6 does): it keeps the stick tables of a peers section in step with
// the other peers, goha or HAProxy, over TCP.
//
// Each remote peer has at most one session, whichever side opened it.
// A session starts with the text handshake ("HAProxyS 2.1", the names),
// then both sides send binary messages: table definitions, entry
// updates, acknowledgements, and the control messages of a full resync
// (a peer that starts asks one peer to teach it the whole tables) and of
// the heartbeat. Updates made locally are pushed to every session as
// they happen; updates received are applied and never pushed on.
//
// # Locking
//
// Peers.mu guards the session of each remote peer and the learned flag.
// A session's connection is written by its sending goroutine only; its
// reader goroutine hands what must be sent back through the session's
// channels.
package peers

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"goha/core/stick"
)

// The protocol's constants (HAProxy's peers.c).
const (
	protoName = "HAProxyS"

	classControl    = 0
	classError      = 1
	classStickTable = 10
	classReserved   = 255

	ctrlResyncReq      = 0
	ctrlResyncFinished = 1
	ctrlResyncPartial  = 2
	ctrlResyncConfirm  = 3
	ctrlHeartbeat      = 4

	stktUpdate          = 0x80
	stktIncUpdate       = 0x81
	stktDefine          = 0x82
	stktSwitch          = 0x83
	stktAck             = 0x84
	stktUpdateTimed     = 0x85
	stktIncUpdateTimed  = 0x86
	statusSuccess       = 200
	statusTryAgain      = 300
	statusErrProto      = 501
	statusErrVersion    = 502
	statusErrHost       = 503
	statusErrPeer       = 504
	heartbeatEvery      = 3 * time.Second
	silenceLimit        = 5 * time.Second
	reconnectEvery      = 5 * time.Second
	maxMessage          = 1 << 20
	handshakeTimeout    = 5 * time.Second
	learnAfterConnected = 0
)

// Remote is a peer of the section other than the local one.
type Remote struct {
	Name, Addr string
	TLS        *tls.Config // nil: plain TCP
}

// Config is a peers section as the process runs it.
type Config struct {
	Section   string
	LocalName string
	Remotes   []Remote
	// Tables are the section's tables and the proxies' tables that name
	// the section, each with the name peers know it by.
	Tables []Shared
	// LocalPos is the local peer's place among the section's peers (for
	// show peers, which lists them in HAProxy's order).
	LocalPos int
	// Listener accepts the other peers' sessions; nil: none. ListenTLS,
	// when set, is its TLS (bind ... ssl).
	Listener  net.Listener
	ListenTLS *tls.Config
	// LocalAddr is the local peer's address. A process that took the
	// listening socket over listens there: HandOff teaches it the tables.
	// "": no hand-off.
	LocalAddr string
}

// Shared is a table and the name the protocol gives it.
type Shared struct {
	Name  string
	Table *stick.Table
}

// Peers runs a section's sessions.
type Peers struct {
	cfg    Config
	stop   chan struct{}
	ctx    context.Context // cancelled by Stop: ends dials and TLS handshakes
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	sessions  map[string]*session   // by remote name
	pending   map[net.Conn]struct{} // connections still in their handshake
	peerStats map[string]*peerStats // by remote name, made on first use
	learned   bool                  // a peer taught us the tables (or none could)
	learning  string                // the peer asked to teach, "" when none
}

// Start makes the tables shared and begins accepting and connecting.
func Start(cfg Config) *Peers {
	p := &Peers{cfg: cfg, stop: make(chan struct{}), sessions: map[string]*session{}, pending: map[net.Conn]struct{}{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	for _, s := range cfg.Tables {
		s.Table.EnableSync()
	}
	if len(cfg.Remotes) == 0 {
		p.learned = true
	}
	if cfg.Listener != nil {
		p.wg.Add(1)
		go p.acceptLoop()
	}
	for _, r := range cfg.Remotes {
		p.wg.Add(1)
		go p.connectLoop(r)
	}
	return p
}

// Stop closes every session and every connection still in its handshake,
// and waits for them: a peer that does not answer cannot hold a stop up
// for the handshake's timeout.
func (p *Peers) Stop() {
	p.mu.Lock()
	close(p.stop)
	p.cancel()
	for _, s := range p.sessions {
		s.conn.Close()
	}
	for c := range p.pending {
		c.Close()
	}
	p.mu.Unlock()
	if p.cfg.Listener != nil {
		p.cfg.Listener.Close()
	}
	p.wg.Wait()
}

// handshaking keeps c among the connections Stop closes until done is
// called; false (c closed) when the section is stopping already.
func (p *Peers) handshaking(c net.Conn) (done func(), ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped() {
		c.Close()
		return nil, false
	}
	p.pending[c] = struct{}{}
	return func() {
		p.mu.Lock()
		delete(p.pending, c)
		p.mu.Unlock()
	}, true
}

func (p *Peers) stopped() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

func (p *Peers) remote(name string) (Remote, bool) {
	for _, r := range p.cfg.Remotes {
		if r.Name == name {
			return r, true
		}
	}
	return Remote{}, false
}

func (p *Peers) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.cfg.Listener.Accept()
		if err != nil {
			if p.stopped() || errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if p.cfg.ListenTLS != nil {
			c = tls.Server(c, p.cfg.ListenTLS)
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.accepted(c)
		}()
	}
}

// accepted runs the server side of a handshake, then the session.
func (p *Peers) accepted(c net.Conn) {
	done, ok := p.handshaking(c)
	if !ok {
		return
	}
	defer done()
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	br := bufio.NewReader(c)
	line := func() (string, error) {
		s, err := br.ReadString('\n')
		return strings.TrimSuffix(s, "\n"), err
	}
	reply := func(code int) { fmt.Fprintf(c, "%d\n", code) }
	l1, err := line()
	if err != nil {
		c.Close()
		return
	}
	name, ver, _ := strings.Cut(l1, " ")
	if name != protoName {
		reply(statusErrProto)
		c.Close()
		return
	}
	if maj, min, ok := strings.Cut(ver, "."); !ok || maj != "2" || (min != "0" && min != "1") {
		reply(statusErrVersion)
		c.Close()
		return
	}
	l2, err := line()
	if err != nil {
		c.Close()
		return
	}
	if l2 != p.cfg.LocalName {
		reply(statusErrHost)
		c.Close()
		return
	}
	l3, err := line()
	if err != nil {
		c.Close()
		return
	}
	from, _, _ := strings.Cut(l3, " ")
	// The local peer's own name comes from the process this one
	// replaced, teaching its tables (HandOff).
	if _, ok := p.remote(from); !ok && from != p.cfg.LocalName {
		reply(statusErrPeer)
		c.Close()
		return
	}
	reply(statusSuccess)
	p.stats(from).newConn.Add(1)
	c.SetDeadline(time.Time{})
	p.run(from, c, br, true)
}

// connectLoop keeps a session with r, opening one when none is up.
func (p *Peers) connectLoop(r Remote) {
	defer p.wg.Done()
	// At once, or nearly: two peers starting together should not both
	// connect to the other at the same instant.
	wait := time.Duration(rand.Int63n(int64(50 * time.Millisecond)))
	for {
		select {
		case <-p.stop:
			return
		case <-time.After(wait):
		}
		// After a failure, HAProxy's random 50ms to 2s.
		wait = retryDelay()
		ps := p.stats(r.Name)
		ps.mu.Lock()
		ps.nextConnect = time.Now().Add(wait)
		ps.mu.Unlock()
		p.mu.Lock()
		busy := p.sessions[r.Name] != nil
		p.mu.Unlock()
		if busy || r.Addr == "" {
			continue
		}
		ps.setStatus(100)
		var c net.Conn
		var err error
		d := &net.Dialer{Timeout: handshakeTimeout}
		if r.TLS != nil {
			c, err = (&tls.Dialer{NetDialer: d, Config: r.TLS}).DialContext(p.ctx, "tcp", r.Addr)
		} else {
			c, err = d.DialContext(p.ctx, "tcp", r.Addr)
		}
		if err != nil {
			continue
		}
		done, ok := p.handshaking(c)
		if !ok {
			return
		}
		c.SetDeadline(time.Now().Add(handshakeTimeout))
		fmt.Fprintf(c, "%s 2.1\n%s\n%s %d 1\n", protoName, r.Name, p.cfg.LocalName, os.Getpid())
		ps.setStatus(110)
		br := bufio.NewReader(c)
		st, err := br.ReadString('\n')
		done()
		if err != nil || strings.TrimSpace(st) != strconv.Itoa(statusSuccess) {
			if code, err := strconv.Atoi(strings.TrimSpace(st)); err == nil {
				ps.setStatus(code)
			}
			c.Close()
			continue
		}
		ps.newConn.Add(1)
		c.SetDeadline(time.Time{})
		p.run(r.Name, c, br, false)
		wait = retryDelay()
	}
}

func retryDelay() time.Duration {
	return 50*time.Millisecond + time.Duration(rand.Int63n(int64(2*time.Second)))
}

// run serves a session with the peer named name until it ends.
func (p *Peers) run(name string, c net.Conn, br *bufio.Reader, accepted bool) {
	s := newSession(p, name, c, br)
	_, isTLS := c.(*tls.Conn)
	st := p.stats(name)
	st.begin(c, isTLS, accepted)
	s.stats = st
	p.mu.Lock()
	if p.stopped() {
		// Stop has closed the sessions it knew: this one would outlive it.
		p.mu.Unlock()
		c.Close()
		return
	}
	if old := p.sessions[name]; old != nil {
		// The newer session wins, as in HAProxy.
		old.conn.Close()
		st.coll.Add(1)
	}
	p.sessions[name] = s
	learn := !p.learned && p.learning == ""
	if learn {
		p.learning = name
	}
	p.mu.Unlock()
	// The previous process teaches without being asked, as HAProxy's
	// does: a lesson from the local peer counts as requested.
	s.serve(learn && name != p.cfg.LocalName)
	p.mu.Lock()
	if p.sessions[name] == s {
		delete(p.sessions, name)
	}
	if p.learning == name {
		p.learning = ""
	}
	p.mu.Unlock()
}

// Listener is the local peer's listening socket, nil when none.
func (p *Peers) Listener() net.Listener { return p.cfg.Listener }

// HandOff teaches the tables to the process that took over the local
// peer's listening socket, as HAProxy's old process does on a soft stop:
// it stops accepting, connects to the local peer's address under the
// local peer's name, pushes every entry, ends with a resync-finished and
// waits for the new process's confirmation. It gives up at d, or when no
// process answers there.
func (p *Peers) HandOff(d time.Duration) bool {
	if p.cfg.LocalAddr == "" || len(p.cfg.Tables) == 0 {
		return false
	}
	if p.cfg.Listener != nil {
		// The socket stays open in the process that took it: ours is
		// only a duplicate, and our own connection must reach that one.
		p.cfg.Listener.Close()
	}
	deadline := time.Now().Add(d)
	for !p.stopped() && time.Now().Before(deadline) {
		ok, retry := p.teachLocal(deadline)
		if ok || !retry {
			return ok
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// teachLocal runs one hand-off session; retry says whether another
// attempt may succeed (the new process answered "try again", or the
// session broke).
func (p *Peers) teachLocal(deadline time.Time) (ok, retry bool) {
	c, err := net.DialTimeout("tcp", p.cfg.LocalAddr, time.Until(deadline))
	if err != nil {
		// Nobody listens: no process took over.
		return false, false
	}
	defer c.Close()
	c.SetDeadline(deadline)
	fmt.Fprintf(c, "%s 2.1\n%s\n%s %d 1\n", protoName, p.cfg.LocalName, p.cfg.LocalName, os.Getpid())
	br := bufio.NewReader(c)
	st, err := br.ReadString('\n')
	if err != nil {
		return false, true
	}
	if code := strings.TrimSpace(st); code != strconv.Itoa(statusSuccess) {
		return false, code == strconv.Itoa(statusTryAgain)
	}
	s := newSession(p, p.cfg.LocalName, c, br)
	s.confirmed = make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- s.readLoop() }()
	s.pushAll()
	s.control(ctrlResyncFinished)
	if s.flush() {
		select {
		case <-s.confirmed:
			ok = true
		case <-done:
			c.Close()
			return false, true
		case <-p.stop:
		}
	}
	c.Close()
	<-done
	return ok, !ok
}

// learnt records that a peer finished teaching the tables.
func (p *Peers) learnt() {
	p.mu.Lock()
	p.learned = true
	p.learning = ""
	p.mu.Unlock()
}

// Connected lists the remote peers with a session.
func (p *Peers) Connected() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for n := range p.sessions {
		out = append(out, n)
	}
	return out
}

// errEnd ends a session without an error to report.
var errEnd = io.EOF
