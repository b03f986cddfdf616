package stream

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"goha/core"
	"golang.org/x/sys/unix"
)

// Listening sockets change hands between an old process and a new one
// without being closed (`-x`, a master's reload): the new process adopts
// the sockets the old one serves instead of binding its own, so that no
// connection finds a port without a listener, and the old one, once it
// stops, closes only its own descriptors. The kernel keeps the socket and
// its accept queue as long as either process holds it.

// ListenerSocket is one listening socket handed to another process, as
// `_getsocks` sends it.
type ListenerSocket struct {
	File      *os.File // a duplicate: the caller closes it
	Interface string   // the bind's `interface`, "" for none
	Namespace string   // the bind's `namespace`, "" for none
}

// ExportListeners duplicates every listening socket of the process's
// frontends and local peers for another process. From then on the process no longer
// removes the UNIX socket files of its binds when it stops: they belong
// to the process that took them.
func (proc *Process) ExportListeners() ([]ListenerSocket, error) {
	proc.lmu.Lock()
	defer proc.lmu.Unlock()
	var out []ListenerSocket
	seen := map[net.Listener]bool{}
	for _, l := range proc.listeners {
		if l.ln == nil || seen[l.ln] {
			continue
		}
		seen[l.ln] = true
		fl, ok := l.ln.(interface{ File() (*os.File, error) })
		if !ok {
			continue
		}
		f, err := fl.File()
		if err != nil {
			for _, s := range out {
				s.File.Close()
			}
			return nil, err
		}
		out = append(out, ListenerSocket{File: f,
			Interface: core.BindParam(l.bind, "interface"),
			Namespace: core.BindParam(l.bind, "namespace")})
	}
	// The local peers' sockets too: the new process listens there for
	// this one to teach it the tables when it stops.
	for _, pr := range proc.peers {
		fl, ok := pr.Listener().(interface{ File() (*os.File, error) })
		if !ok {
			continue
		}
		f, err := fl.File()
		if err != nil {
			for _, s := range out {
				s.File.Close()
			}
			return nil, err
		}
		out = append(out, ListenerSocket{File: f})
	}
	proc.handedOver = true
	return out, nil
}

// Adopt gives the process the listening sockets taken from an old one,
// before Run: a bind whose address one of them has listens on it (all of
// them when several match, as a process with several threads shares
// them) instead of binding. Run closes the ones no bind wanted.
func (proc *Process) Adopt(files []*os.File) {
	proc.lmu.Lock()
	proc.adopted = append(proc.adopted, files...)
	proc.lmu.Unlock()
}

// AdoptedCount is how many listening sockets Run took from Adopt's.
func (proc *Process) AdoptedCount() int {
	proc.lmu.Lock()
	defer proc.lmu.Unlock()
	return proc.adoptedUsed
}

// takeAdopted removes from the adopted sockets those listening on addr
// (a bind's "kind:address") with the bind's interface, and returns them.
func (proc *Process) takeAdopted(b *core.Bind, kind, addr string) []*os.File {
	proc.lmu.Lock()
	defer proc.lmu.Unlock()
	if len(proc.adopted) == 0 {
		return nil
	}
	var want netip.AddrPort
	if kind != "unix" {
		ap, err := resolveBindAddr(addr)
		if err != nil {
			return nil
		}
		want = ap
	}
	iface := core.BindParam(b, "interface")
	var got []*os.File
	keep := proc.adopted[:0]
	for _, f := range proc.adopted {
		if socketMatches(f, kind, addr, want, iface) {
			got = append(got, f)
		} else {
			keep = append(keep, f)
		}
	}
	proc.adopted = keep
	proc.adoptedUsed += len(got)
	return got
}

// closeUnadopted closes the adopted sockets no bind took.
func (proc *Process) closeUnadopted() {
	proc.lmu.Lock()
	left := proc.adopted
	proc.adopted = nil
	proc.lmu.Unlock()
	for _, f := range left {
		f.Close()
	}
}

// resolveBindAddr reads a bind's host:port; an empty or `*` host is the
// IPv4 wildcard, as HAProxy binds it.
func resolveBindAddr(addr string) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return netip.AddrPort{}, err
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if host == "" || host == "*" {
		return netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(p)), nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		var ok bool
		if ip, ok = core.ResolveHost(host); !ok {
			return netip.AddrPort{}, errors.New("cannot resolve " + host)
		}
	}
	return netip.AddrPortFrom(ip.Unmap(), uint16(p)), nil
}

// socketMatches says whether f is a listening stream socket bound where
// the bind wants it. A wildcard bind also takes a socket on the other
// family's wildcard: goha's own wildcard sockets are IPv6 dual-stack,
// HAProxy's IPv4.
func socketMatches(f *os.File, kind, addr string, want netip.AddrPort, iface string) bool {
	fd := int(f.Fd())
	if t, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || t != unix.SOCK_STREAM {
		return false
	}
	if on, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || on == 0 {
		return false
	}
	if dev, _ := unix.GetsockoptString(fd, unix.SOL_SOCKET, unix.SO_BINDTODEVICE); dev != iface {
		return false
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return false
	}
	switch sa := sa.(type) {
	case *unix.SockaddrUnix:
		return kind == "unix" && unixPathMatches(sa.Name, addr)
	case *unix.SockaddrInet4:
		if kind == "unix" {
			return false
		}
		got := netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
		return got == want || want.Addr().IsUnspecified() && got.Addr().IsUnspecified() && got.Port() == want.Port()
	case *unix.SockaddrInet6:
		if kind == "unix" {
			return false
		}
		got := netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(sa.Port))
		return got == want || want.Addr().IsUnspecified() && got.Addr().IsUnspecified() && got.Port() == want.Port()
	}
	return false
}

// unixPathMatches compares a socket's bound path with a bind's. HAProxy
// binds a UNIX listener under "<path>.<pid>.tmp" and renames it, so its
// sockets report that name.
func unixPathMatches(name, path string) bool {
	if name == path {
		return true
	}
	rest, ok := strings.CutPrefix(name, path+".")
	if !ok {
		return false
	}
	pid, ok := strings.CutSuffix(rest, ".tmp")
	if !ok || pid == "" {
		return false
	}
	_, err := strconv.Atoi(pid)
	return err == nil
}

// adoptListeners makes listeners of the adopted sockets for one bind
// address. It reports false when none matched: the caller binds.
func (proc *Process) adoptListeners(fe *proxy, b *core.Bind, kind, addr string) (bool, error) {
	files := proc.takeAdopted(b, kind, addr)
	if len(files) == 0 {
		return false, nil
	}
	var lns []net.Listener
	for _, f := range files {
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return false, err
		}
		if err := setBacklog(ln, proc.backlog(fe, b)); err != nil {
			return false, err
		}
		lns = append(lns, ln)
	}
	for i, ln := range lns {
		shard := -1
		if kind != "unix" && len(lns) == proc.Threads {
			shard = i
		}
		if ul, ok := ln.(*net.UnixListener); ok {
			ul.SetUnlinkOnClose(false)
		}
		l := &listener{ln: ln, fe: fe, bind: b, shard: shard}
		if kind == "unix" {
			l.unix = addr
		}
		proc.addListener(l)
	}
	return true, nil
}

// PauseListeners stops every frontend from accepting, as SIGTTOU does in
// HAProxy: a TCP listening socket leaves the listening state (connect to
// AF_UNSPEC), so that new connections go to another process's sockets on
// the same port or are refused, while the port stays bound. It returns
// the frontends it paused, in configuration order, and false when a
// socket cannot be paused (one inherited as fd@N, which belongs to the
// parent too): HAProxy then stops softly.
func (proc *Process) PauseListeners() ([]string, bool) {
	var names []string
	for _, p := range proc.proxies {
		if !p.IsFrontend() || p.Disabled || p.FrontendShut() {
			continue
		}
		if p.DisableFrontend() == nil {
			names = append(names, p.Name)
		}
	}
	ok := true
	proc.lmu.Lock()
	ls := append([]*listener(nil), proc.listeners...)
	proc.lmu.Unlock()
	for _, l := range ls {
		if l.inherited {
			ok = false
			continue
		}
		if _, isTCP := l.ln.(*net.TCPListener); !isTCP {
			// A UNIX socket cannot leave the listening state: its
			// connections wait in the queue while the frontend is paused.
			continue
		}
		rawControl(l.ln, func(fd int) {
			// A struct sockaddr whose family is AF_UNSPEC (0).
			var sa [16]byte
			unix.Syscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&sa[0])), uintptr(len(sa)))
		})
	}
	return names, ok
}

// ResumeListeners undoes PauseListeners (SIGTTIN): the sockets listen
// again and the frontends accept. It returns the frontends resumed and
// false when a socket could not listen again.
func (proc *Process) ResumeListeners() ([]string, bool) {
	ok := true
	proc.lmu.Lock()
	ls := append([]*listener(nil), proc.listeners...)
	proc.lmu.Unlock()
	for _, l := range ls {
		if _, isTCP := l.ln.(*net.TCPListener); !isTCP || l.inherited {
			continue
		}
		n := proc.backlog(l.fe, l.bind)
		rawControl(l.ln, func(fd int) {
			if err := unix.Listen(fd, n); err != nil {
				ok = false
			}
		})
	}
	var names []string
	for _, p := range proc.proxies {
		if !p.IsFrontend() || p.Disabled || p.FrontendShut() {
			continue
		}
		if p.EnableFrontend() == nil {
			names = append(names, p.Name)
		}
	}
	proc.wakeAcceptLoops()
	return names, ok
}

// rawControl runs fn on a listener's descriptor.
func rawControl(ln net.Listener, fn func(fd int)) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) { fn(int(fd)) })
}
