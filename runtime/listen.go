package runtime

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"goha/core/stream"
	"net"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"goha/core"
)

// Errors of opening stats sockets.
var (
	ErrSymlink   = errors.New("runtime: refusing to replace a symbolic link")
	ErrNotSocket = errors.New("runtime: refusing to replace a file that is not a socket")
	ErrClosed    = errors.New("runtime: server closed")
)

// SocketOptions are the settings of one stats socket (`stats socket`
// bind parameters).
type SocketOptions struct {
	Level    Level  // default operator
	Severity string // none, number or string
	ExposeFD bool   // expose-fd listeners
	MaxConn  int    // per-socket limit, 0 = none
	Mode     os.FileMode
	UID, GID int // -1 = unchanged
}

type socketInfo struct {
	name string // as show cli sockets prints it
	opts SocketOptions
	ln   net.Listener
	// path and inode of the UNIX socket file we created, removed at close.
	path  string
	inode uint64
	sem   chan struct{} // per-socket maxconn, nil = none
}

// Server serves the stats sockets of one process.
type Server struct {
	proc    *stream.Process
	timeout time.Duration
	sem     chan struct{} // stats maxconn, shared by every socket
	nextTh  atomic.Uint64

	mu      sync.Mutex // guards following fields
	sockets []*socketInfo
	conns   map[net.Conn]*session
	closed  bool

	wg sync.WaitGroup // accept loops and sessions
}

// NewServer prepares a stats server for p; nothing listens yet.
func NewServer(p *stream.Process) *Server {
	g := &p.Conf.Global
	timeout := g.StatsTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	maxconn := g.StatsMaxConn
	if maxconn <= 0 {
		maxconn = 10
	}
	return &Server{proc: p, timeout: timeout, sem: make(chan struct{}, maxconn), conns: map[net.Conn]*session{}}
}

// Serve opens every `stats socket` of p's configuration and serves them
// until p stops. It returns the server, already registered with p.OnStop.
func Serve(p *stream.Process) (*Server, error) {
	s := NewServer(p)
	for _, ss := range p.Conf.Global.StatsSockets {
		if err := s.Open(ss); err != nil {
			s.Close()
			return nil, err
		}
	}
	p.OnStop(s.Close)
	return s, nil
}

// ParseSocketArgs reads a stats socket's bind parameters.
func ParseSocketArgs(args []string) (SocketOptions, error) {
	o := SocketOptions{Level: LevelOperator, UID: -1, GID: -1}
	for i := 0; i < len(args); i++ {
		kw := args[i]
		val := ""
		if n, ok := socketArgs[kw]; ok && n > 0 {
			if i+1 >= len(args) {
				return o, fmt.Errorf("runtime: '%s' expects an argument", kw)
			}
			i++
			val = args[i]
		}
		switch kw {
		case "level":
			l, ok := ParseLevel(val)
			if !ok {
				return o, fmt.Errorf("runtime: 'level' only supports 'user', 'operator', and 'admin'")
			}
			o.Level = l
		case "severity-output":
			if val != "none" && val != "number" && val != "string" {
				return o, fmt.Errorf("runtime: 'severity-output' only supports 'none', 'number', and 'string'")
			}
			o.Severity = val
		case "expose-fd":
			if val != "listeners" {
				return o, fmt.Errorf("runtime: 'expose-fd' only supports 'listeners'")
			}
			o.ExposeFD = true
		case "maxconn":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return o, fmt.Errorf("runtime: 'maxconn' expects a positive integer")
			}
			o.MaxConn = n
		case "mode":
			m, err := strconv.ParseUint(val, 8, 32)
			if err != nil {
				return o, fmt.Errorf("runtime: 'mode' expects an octal value")
			}
			o.Mode = os.FileMode(m)
		case "uid", "gid":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return o, fmt.Errorf("runtime: '%s' expects an integer", kw)
			}
			if kw == "uid" {
				o.UID = n
			} else {
				o.GID = n
			}
		case "user":
			u, err := user.Lookup(val)
			if err != nil {
				return o, fmt.Errorf("runtime: unknown user '%s'", val)
			}
			o.UID, _ = strconv.Atoi(u.Uid)
		case "group":
			g, err := user.LookupGroup(val)
			if err != nil {
				return o, fmt.Errorf("runtime: unknown group '%s'", val)
			}
			o.GID, _ = strconv.Atoi(g.Gid)
		}
	}
	return o, nil
}

// bind parameters of a stats socket and how many values they take; others
// are flags, accepted and ignored as HAProxy accepts any bind option.
var socketArgs = map[string]int{
	"level": 1, "severity-output": 1, "expose-fd": 1, "maxconn": 1, "mode": 1,
	"uid": 1, "gid": 1, "user": 1, "group": 1, "name": 1, "backlog": 1, "id": 1,
	"process": 1, "thread": 1, "interface": 1, "namespace": 1, "nice": 1, "label": 1,
	"prefix": 1,
}

// Open opens one `stats socket` line and serves it. The global
// `unix-bind` settings give UNIX sockets their default prefix, mode and
// owner.
func (s *Server) Open(ss core.StatsSocket) error {
	ub, err := ParseSocketArgs(s.proc.Conf.Global.UnixBind)
	if err != nil {
		return err
	}
	prefix := ""
	for i, w := range s.proc.Conf.Global.UnixBind {
		if w == "prefix" && i+1 < len(s.proc.Conf.Global.UnixBind) {
			prefix = s.proc.Conf.Global.UnixBind[i+1]
		}
	}
	o, err := ParseSocketArgs(ss.Args)
	if err != nil {
		return err
	}
	if o.Mode == 0 {
		o.Mode = ub.Mode
	}
	if o.UID < 0 {
		o.UID = ub.UID
	}
	if o.GID < 0 {
		o.GID = ub.GID
	}
	addr := ss.Addr
	var si *socketInfo
	switch {
	case strings.HasPrefix(addr, "fd@"):
		n, err := strconv.Atoi(addr[3:])
		if err != nil || n < 0 {
			return fmt.Errorf("runtime: invalid fd in '%s'", addr)
		}
		f := os.NewFile(uintptr(n), addr)
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("runtime: %s: %w", addr, err)
		}
		si = &socketInfo{ln: ln}
	case strings.HasPrefix(addr, "ipv4@"), strings.HasPrefix(addr, "ipv6@"), strings.HasPrefix(addr, "tcp@"),
		strings.HasPrefix(addr, "tcp4@"), strings.HasPrefix(addr, "tcp6@"):
		i := strings.IndexByte(addr, '@')
		netw := "tcp"
		switch addr[:i] {
		case "ipv4", "tcp4":
			netw = "tcp4"
		case "ipv6", "tcp6":
			netw = "tcp6"
		}
		ln, err := net.Listen(netw, addr[i+1:])
		if err != nil {
			return fmt.Errorf("runtime: cannot bind stats socket %s: %w", addr, err)
		}
		si = &socketInfo{ln: ln}
	case strings.HasPrefix(addr, "abns@"):
		ln, err := net.Listen("unix", "@"+addr[5:])
		if err != nil {
			return fmt.Errorf("runtime: cannot bind stats socket %s: %w", addr, err)
		}
		si = &socketInfo{ln: ln, name: addr}
	default:
		path := strings.TrimPrefix(addr, "unix@")
		if !strings.HasPrefix(addr, "unix@") && !strings.HasPrefix(path, "/") && strings.Contains(path, ":") {
			ln, err := net.Listen("tcp", path)
			if err != nil {
				return fmt.Errorf("runtime: cannot bind stats socket %s: %w", addr, err)
			}
			si = &socketInfo{ln: ln}
			break
		}
		si, err = listenUnix(prefix+path, o)
		if err != nil {
			return err
		}
	}
	si.opts = o
	if si.name == "" {
		si.name = socketName(si.ln.Addr())
	}
	s.serveSocket(si)
	return nil
}

func socketName(a net.Addr) string {
	switch a := a.(type) {
	case *net.TCPAddr:
		if a.IP.To4() != nil {
			return "ipv4@" + a.String()
		}
		return "ipv6@" + a.String()
	case *net.UnixAddr:
		return "unix@" + a.Name
	}
	return a.Network() + "@" + a.String()
}

// listenUnix binds a UNIX socket at path with the mode and owner asked
// for: it binds a temporary name, sets its permissions, then renames it
// over path, so that clients never see a socket with the wrong mode and a
// stale socket is replaced atomically. It never follows a symbolic link.
func listenUnix(path string, o SocketOptions) (*socketInfo, error) {
	if fi, err := os.Lstat(path); err == nil {
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			return nil, fmt.Errorf("%w: %s", ErrSymlink, path)
		case fi.Mode()&os.ModeSocket == 0:
			return nil, fmt.Errorf("%w: %s", ErrNotSocket, path)
		}
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if fi, err := os.Lstat(tmp); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(tmp)
	}
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, fmt.Errorf("runtime: cannot bind UNIX socket [%s]: %w", path, err)
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false)
	fail := func(err error) (*socketInfo, error) {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("runtime: cannot set up UNIX socket [%s]: %w", path, err)
	}
	if o.Mode != 0 {
		if err := os.Chmod(tmp, o.Mode); err != nil {
			return fail(err)
		}
	}
	if o.UID >= 0 || o.GID >= 0 {
		if err := os.Lchown(tmp, o.UID, o.GID); err != nil {
			return fail(err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	var ino uint64
	if fi, err := os.Lstat(path); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino = st.Ino
		}
	}
	return &socketInfo{ln: ln, name: "unix@" + path, path: path, inode: ino}, nil
}

// ServeListener serves an already open listener (fd@, tests, the master
// CLI) at the given level.
func (s *Server) ServeListener(ln net.Listener, o SocketOptions) {
	if o.Level == 0 {
		o.Level = LevelOperator
	}
	s.serveSocket(&socketInfo{ln: ln, name: socketName(ln.Addr()), opts: o})
}

func (s *Server) serveSocket(si *socketInfo) {
	if si.opts.MaxConn > 0 {
		si.sem = make(chan struct{}, si.opts.MaxConn)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		si.ln.Close()
		return
	}
	s.sockets = append(s.sockets, si)
	s.wg.Add(1)
	s.mu.Unlock()
	go s.acceptLoop(si)
}

// acceptLoop accepts only while a session slot is free, so that clients
// past `stats maxconn` wait in the kernel's backlog as with HAProxy.
func (s *Server) acceptLoop(si *socketInfo) {
	defer s.wg.Done()
	for {
		s.sem <- struct{}{}
		if si.sem != nil {
			si.sem <- struct{}{}
		}
		release := func() {
			if si.sem != nil {
				<-si.sem
			}
			<-s.sem
		}
		c, err := si.ln.Accept()
		if err != nil {
			release()
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if s.isClosed() {
				return
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			release()
			return
		}
		ses := s.newSession(c, si)
		s.conns[c] = ses
		s.proc.CountAdminConn()
		s.proc.CountAccepted(ses.thread)
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer release()
			ses.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Server) newSession(c net.Conn, si *socketInfo) *session {
	bufsize := s.proc.Conf.Global.BufSize
	if bufsize <= 0 {
		bufsize = 16384
	}
	ses := &session{
		srv: s, sock: si, conn: c,
		r:       bufio.NewReaderSize(c, bufsize),
		w:       bufio.NewWriterSize(countingWriter{c, &s.proc.GlobalCounters().Bout}, 64<<10),
		level:   si.opts.Level,
		timeout: s.timeout,
	}
	switch si.opts.Severity {
	case "number":
		ses.severity = sevNumber
	case "string":
		ses.severity = sevString
	}
	id := s.nextTh.Add(1)
	if n := s.proc.Threads; n > 0 {
		ses.thread = int(id-1) % n
	}
	ses.id = cliSessionBase + id<<4
	ses.start = time.Now()
	return ses
}

// cliSessionBase makes CLI session ids look like the pointers HAProxy
// prints, and keeps them apart from the data path's stream ids.
const cliSessionBase = 0x7f0000000000

// cliSessions lists the CLI's own sessions for show sess, as HAProxy
// lists the streams of its GLOBAL frontend.
func (s *Server) cliSessions() []SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SessionInfo, 0, len(s.conns))
	for c, ses := range s.conns {
		proto, src := "unix_stream", "unix:1"
		if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
			proto, src = "tcpv4", a.String()
			if a.IP.To4() == nil {
				proto = "tcpv6"
			}
		}
		out = append(out, SessionInfo{ID: ses.id, Proto: proto, Src: src, Frontend: "GLOBAL",
			Age: time.Since(ses.start), Calls: 1, FD: -1})
	}
	slices.SortFunc(out, func(a, b SessionInfo) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// closeCLISession closes the CLI session with that id.
func (s *Server) closeCLISession(id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c, ses := range s.conns {
		if ses.id == id {
			c.Close()
			return true
		}
	}
	return false
}

// Sockets lists the open sockets as `show cli sockets` prints them.
func (s *Server) Sockets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.sockets))
	for _, si := range s.sockets {
		out = append(out, si.name+" "+si.opts.Level.String()+" all")
	}
	return out
}

// Close stops accepting, closes every session and removes the UNIX
// socket files it created.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	socks := s.sockets
	conns := make([]net.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, si := range socks {
		si.ln.Close()
		if si.path != "" {
			if fi, err := os.Lstat(si.path); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Ino == si.inode {
					os.Remove(si.path)
				}
			}
		}
	}
	for _, c := range conns {
		c.Close()
	}
	s.wg.Wait()
}

// countingWriter counts what the stats socket sends: show info's
// TotalBytesOut includes it, as HAProxy's does.
type countingWriter struct {
	w net.Conn
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}
