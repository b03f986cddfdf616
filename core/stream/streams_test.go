package stream

import (
	"bufio"
	"goha/core"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"goha/core/config"
	"goha/core/diag"
)

// runProc runs a process on cfgText, where "bind @NAME" stands for a
// socket listening on a port the system chose (handed over as fd@), and
// returns it with the address of each frontend's first listener.
func runProc(t *testing.T, cfgText string) (*Process, map[string]string) {
	t.Helper()
	for strings.Contains(cfgText, "bind @") {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		f, err := ln.(*net.TCPListener).File()
		ln.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		i := strings.Index(cfgText, "bind @")
		end := i + strings.IndexByte(cfgText[i:], '\n')
		cfgText = cfgText[:i] + "bind fd@" + strconv.Itoa(int(f.Fd())) + cfgText[end:]
	}
	d := &diag.Collector{}
	cfg := core.Build(config.Parse("streams.cfg", []byte(cfgText), config.Options{}, d), d)
	if d.HasAlert() {
		t.Fatalf("%v", d.All())
	}
	proc := New(cfg)
	if err := proc.Run(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.Stop)
	addrs := map[string]string{}
	for _, p := range cfg.Proxies {
		if p.IsFrontend() {
			if ls := proc.Listeners(p); len(ls) > 0 {
				addrs[p.Name] = ls[0].String()
			}
		}
	}
	return proc, addrs
}

// holdingServer accepts connections and reads what they send without ever
// answering, until the test ends; it answers GET /fast at once.
func holdingServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if strings.HasPrefix(line, "GET /fast ") {
						io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

const streamsCfg = `
global
    nbthread 2
defaults
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 30s
frontend fe
    mode http
    bind @fe
    default_backend be
frontend ft
    mode tcp
    bind @ft
    default_backend bt
backend be
    mode http
    server s1 SRV
backend bt
    mode tcp
    server t1 SRV
`

// waitSession polls proc's streams until one satisfies ok.
func waitSession(t *testing.T, proc *Process, what string, ok func(SessionInfo) bool) SessionInfo {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range proc.Sessions() {
			if ok(s) {
				return s
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no stream %s in %+v", what, proc.Sessions())
	return SessionInfo{}
}

// waitGone polls until no stream has id.
func waitGone(t *testing.T, proc *Process, id uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		found := false
		for _, s := range proc.Sessions() {
			found = found || s.ID == id
		}
		if !found {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("stream %#x still listed", id)
}

// readsClose says whether c's peer closes it (EOF or reset) within a
// generous bound; whatever arrived before the close is dropped.
func readsClose(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c)
	ne, timeout := err.(net.Error)
	return !(timeout && ne.Timeout())
}

// TestShutdownSession kills streams in each phase a kill can find them
// in: an HTTP request waiting for its response, a tcp tunnel, and an idle
// keep-alive connection parked between requests. Each time the client
// sees its connection close and the stream leaves the registry.
func TestShutdownSession(t *testing.T) {
	srv := holdingServer(t)
	proc, addrs := runProc(t, strings.ReplaceAll(streamsCfg, "SRV", srv))
	cases := []struct {
		name, fe, send string
		phase          StreamPhase
		be, server     string
		calls          uint32
	}{
		{"http waiting", "fe", "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n", PhaseResponse, "be", "s1", 2},
		{"tcp tunnel", "ft", "hello", PhaseTunnel, "bt", "t1", 2},
		// One request answered, then idle past parkAfter: parked.
		{"http parked", "fe", "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n", PhaseRequest, "", "", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addrs[tc.fe])
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, tc.send)
			local := c.LocalAddr().String()
			if tc.phase == PhaseRequest {
				br := bufio.NewReader(c)
				if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, "200") {
					t.Fatalf("response %q, %v", line, err)
				}
				time.Sleep(2 * parkAfter)
			}
			s := waitSession(t, proc, tc.name, func(s SessionInfo) bool {
				return s.Src.String() == local && s.Phase == tc.phase && s.Calls == tc.calls
			})
			if s.ID == 0 || s.Frontend.Name != tc.fe || s.Proto != "tcpv4" || s.FD < 0 || s.Dst.String() != addrs[tc.fe] {
				t.Errorf("stream %+v: want a non-zero id, frontend %s, tcpv4, a descriptor, dst %s", s, tc.fe, addrs[tc.fe])
			}
			name := func(p *core.Proxy) string {
				if p == nil {
					return ""
				}
				return p.Name
			}
			srvName := ""
			if s.Server != nil {
				srvName = s.Server.Name
			}
			if name(s.Backend) != tc.be || srvName != tc.server {
				t.Errorf("backend %q server %q, want %q %q", name(s.Backend), srvName, tc.be, tc.server)
			}
			if tc.server != "" && (s.SrvFD < 0 || s.SrvRemote == nil || s.SrvRemote.String() != srv) {
				t.Errorf("server side fd %d remote %v, want a descriptor to %s", s.SrvFD, s.SrvRemote, srv)
			}
			if !proc.ShutdownSession(s.ID) {
				t.Fatal("ShutdownSession found no stream")
			}
			if !readsClose(c) {
				t.Error("the client's connection stayed open")
			}
			waitGone(t, proc, s.ID)
			if proc.ShutdownSession(s.ID) {
				t.Error("a stream that ended was found again")
			}
		})
	}
}

// TestStreamRegistryConcurrent lists and unlists streams from several
// goroutines on every shard while others dump and search the registry
// (run it with -race): ids are unique and never 0, and nothing stays
// listed.
func TestStreamRegistryConcurrent(t *testing.T) {
	srv := holdingServer(t)
	proc, _ := runProc(t, strings.ReplaceAll(streamsCfg, "SRV", srv))
	reg := proc.registry()
	// A real socket for the entries, not one the process serves.
	c, err := net.Dial("tcp", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var l *listener
	proc.lmu.Lock()
	l = proc.listeners[0]
	proc.lmu.Unlock()
	be := proc.proxyOf(proc.Conf.FindProxy("be", core.CapBE))

	const workers, each = 6, 300
	ids := make([][]uint64, workers)
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, s := range proc.Sessions() {
				if s.ID == 0 || s.Frontend == nil {
					t.Errorf("listed %+v", s)
					return
				}
			}
			if proc.ShutdownSession(1) {
				t.Error("id 1 was found")
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				e := &streamEntry{}
				reg.add(e, l, c, c.LocalAddr(), w, time.Now(), PhaseRequest)
				e.calls.Add(1)
				e.be.Store(be)
				e.setPhase(PhaseConnect, time.Now())
				ids[w] = append(ids[w], e.id)
				e.remove()
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	seen := map[uint64]bool{}
	for _, l := range ids {
		for _, id := range l {
			if id == 0 || seen[id] {
				t.Fatalf("id %#x is 0 or given twice", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != workers*each {
		t.Fatalf("%d ids for %d streams", len(seen), workers*each)
	}
	if left := proc.Sessions(); len(left) != 0 {
		t.Fatalf("still listed: %+v", left)
	}
}

// TestSessEpoch: a stream keeps the epoch of its start; show sess
// advances it.
func TestSessEpoch(t *testing.T) {
	srv := holdingServer(t)
	proc, addrs := runProc(t, strings.ReplaceAll(streamsCfg, "SRV", srv))
	if e := proc.NextSessEpoch(); e != 0 {
		t.Fatalf("first dump's epoch %d, want 0", e)
	}
	c, err := net.Dial("tcp", addrs["ft"])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := waitSession(t, proc, "tcp", func(s SessionInfo) bool { return s.Src.String() == c.LocalAddr().String() })
	if s.Epoch != 1 {
		t.Errorf("epoch %d, want 1", s.Epoch)
	}
}

// TestPoolsCount: buffers taken by a request held open count as used, and
// go back when its stream ends.
func TestPoolsCount(t *testing.T) {
	srv := holdingServer(t)
	proc, addrs := runProc(t, strings.ReplaceAll(streamsCfg, "SRV", srv))
	used := func(name string) int64 {
		for _, p := range proc.Pools() {
			if p.Name == name {
				if p.Allocated < p.Used {
					t.Errorf("pool %s: %d allocated, %d used", name, p.Allocated, p.Used)
				}
				return p.Used
			}
		}
		t.Fatalf("no pool %s in %+v", name, proc.Pools())
		return 0
	}
	before := used("buffer")
	c, err := net.Dial("tcp", addrs["fe"])
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	defer c.Close()
	s := waitSession(t, proc, "waiting", func(s SessionInfo) bool {
		return s.Src.String() == c.LocalAddr().String() && s.Phase == PhaseResponse
	})
	// The client's buffer and the server connection's.
	if got := used("buffer"); got < before+2 {
		t.Errorf("buffers used %d with a request waiting, %d before", got, before)
	}
	if used("hconn") < 1 {
		t.Error("no hconn used by a request waiting")
	}
	// The server never answers: the stream ends when it is killed.
	proc.ShutdownSession(s.ID)
	waitGone(t, proc, s.ID)
	deadline := time.Now().Add(10 * time.Second)
	for used("buffer") != before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := used("buffer"); got != before {
		t.Errorf("buffers used %d after the connection closed, %d before", got, before)
	}
}
