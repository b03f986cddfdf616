//go:build regtest

// Package smuggle replays request-framing and response-framing vectors
// through goha and HAProxy 2.6 with the same configuration, each in front
// of its own recording origin, and compares what the client got and what
// the origin received.
package smuggle

import (
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// Every frontend applies the same two rules; a request that reaches the
// origin without X-Ruled, or with a path under /admin, went around them.
const frontendRules = `
    http-request deny if { path_beg /admin }
    http-request set-header X-Ruled 1
`

// step sends raw bytes on one of the vector's client connections (opened
// on first use), then waits until neither the client connections nor the
// origin have seen a byte for the quiet period.
type step struct {
	conn int
	send string
}

// outcome is one proxy's run of a vector.
type outcome struct {
	clients []clientView
	origin  []string
	nreq    int
	reqs    []*oreq
	raw     [][]byte // bytes each client connection received
	sent    [][]byte // bytes each origin connection received
}

type clientView struct {
	statuses []string
	tags     []string
	framing  []string // per response, the fields that frame what follows
	closed   bool
}

var (
	statusRE = regexp.MustCompile(`(?m)^HTTP/\d\.\d (\d{3})`)
	tagRE    = regexp.MustCompile(`<<(?:\d+\.\d+ )?([^>]*)>>`)
)

// client is one connection to the proxy, read by its own goroutine.
type client struct {
	c      net.Conn
	mu     sync.Mutex
	buf    []byte
	closed bool
	done   chan struct{}
}

func dialClient(addr string, last *atomic.Int64) (*client, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	k := &client{c: c, done: make(chan struct{})}
	go func() {
		defer close(k.done)
		b := make([]byte, 32<<10)
		for {
			n, err := c.Read(b)
			if n > 0 {
				k.mu.Lock()
				k.buf = append(k.buf, b[:n]...)
				k.mu.Unlock()
				last.Store(time.Now().UnixNano())
			}
			if err != nil {
				k.mu.Lock()
				k.closed = true
				k.mu.Unlock()
				last.Store(time.Now().UnixNano())
				return
			}
		}
	}()
	return k, nil
}

// run plays a vector against the frontend at addr, whose backend is o.
// A client connection counts as closed when the proxy closed or reset it
// before the end of the final quiet period.
func run(v *vector, addr string, o *origin, quiet time.Duration) (*outcome, error) {
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	var clients []*client
	defer func() {
		for _, k := range clients {
			k.c.Close()
			<-k.done
		}
	}()
	for _, s := range v.plan() {
		for len(clients) <= s.conn {
			k, err := dialClient(addr, &last)
			if err != nil {
				return nil, err
			}
			clients = append(clients, k)
		}
		// A proxy may close before reading everything, which fails the
		// write; what it answered is still the outcome.
		io.WriteString(clients[s.conn].c, s.send)
		last.Store(time.Now().UnixNano())
		waitQuiet(&last, o, clients, quiet)
	}
	out := &outcome{}
	for _, k := range clients {
		k.mu.Lock()
		b := slices.Clone(k.buf)
		closed := k.closed
		k.mu.Unlock()
		var cv clientView
		for _, m := range statusRE.FindAllSubmatch(b, -1) {
			cv.statuses = append(cv.statuses, string(m[1]))
		}
		for _, m := range tagRE.FindAllSubmatch(b, -1) {
			cv.tags = append(cv.tags, string(m[1]))
		}
		cv.framing = framing(b)
		cv.closed = closed
		out.clients = append(out.clients, cv)
		out.raw = append(out.raw, b)
	}
	out.origin, out.nreq = o.view()
	out.reqs = o.requests()
	out.sent = o.received()
	return out, nil
}

func (o *outcome) summary() string {
	var b strings.Builder
	for i, c := range o.clients {
		fmt.Fprintf(&b, "client %d statuses %v closed %v; ", i, c.statuses, c.closed)
	}
	fmt.Fprintf(&b, "origin requests %d", o.nreq)
	return b.String()
}

// framing lists, for each response head in b, its status and its
// Content-Length and Transfer-Encoding fields: what tells a client where
// the next response starts.
func framing(b []byte) []string {
	var out []string
	for _, loc := range statusRE.FindAllIndex(b, -1) {
		head := string(b[loc[0]:])
		if i := strings.Index(head, "\r\n\r\n"); i >= 0 {
			head = head[:i]
		}
		lines := strings.Split(head, "\r\n")
		f := lines[0][9:12]
		for _, l := range lines[1:] {
			name, value, _ := strings.Cut(l, ":")
			switch strings.ToLower(name) {
			case "content-length", "transfer-encoding":
				f += " " + strings.ToLower(name) + "=" + strings.TrimSpace(value)
			}
		}
		out = append(out, f)
	}
	return out
}

// waitQuiet returns once nothing has moved for the quiet period, or every
// client connection is closed and the origin is quiet, or after 10 s.
func waitQuiet(last *atomic.Int64, o *origin, clients []*client, quiet time.Duration) {
	limit := time.Now().Add(10 * time.Second)
	for time.Now().Before(limit) {
		t := time.Unix(0, last.Load())
		if ot := o.lastActivity(); ot.After(t) {
			t = ot
		}
		allClosed := true
		for _, k := range clients {
			select {
			case <-k.done:
			default:
				allClosed = false
			}
		}
		idle := time.Since(t)
		if idle >= quiet || (allClosed && idle >= quiet/4) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// violations lists what breaks the two invariants whatever HAProxy does:
// every request the origin received went through the frontend's rules,
// and no client received a response nobody asked for.
func violations(o *outcome) []string {
	var bad []string
	for i, c := range o.clients {
		if slices.Contains(c.tags, "stray") {
			bad = append(bad, fmt.Sprintf("client %d received the origin's unsolicited response", i))
		}
	}
	for _, r := range o.reqs {
		switch {
		case r.bad:
			bad = append(bad, fmt.Sprintf("origin parsed a line no rule saw as a request: %q", r.line))
		case strings.HasPrefix(r.target, "/admin") || strings.Contains(r.target, "://x/admin"):
			bad = append(bad, fmt.Sprintf("origin served %s %s, which the deny rule covers", r.method, r.target))
		case !slices.Equal(r.get("X-Ruled"), []string{"1"}):
			bad = append(bad, fmt.Sprintf("origin got %s %s with X-Ruled %q: the request skipped set-header", r.method, r.target, r.get("X-Ruled")))
		}
	}
	return bad
}

// compare returns a readable account of how two outcomes differ, or ""
// when they match.
func compare(g, h *outcome) string {
	var b strings.Builder
	n := max(len(g.clients), len(h.clients))
	for i := 0; i < n; i++ {
		var gc, hc clientView
		if i < len(g.clients) {
			gc = g.clients[i]
		}
		if i < len(h.clients) {
			hc = h.clients[i]
		}
		if !slices.Equal(gc.statuses, hc.statuses) {
			fmt.Fprintf(&b, "client %d statuses: goha %v, haproxy %v\n", i, gc.statuses, hc.statuses)
		}
		if !slices.Equal(gc.tags, hc.tags) {
			fmt.Fprintf(&b, "client %d got responses to: goha %q, haproxy %q\n", i, gc.tags, hc.tags)
		}
		if !slices.Equal(gc.framing, hc.framing) {
			fmt.Fprintf(&b, "client %d response framing: goha %q, haproxy %q\n", i, gc.framing, hc.framing)
		}
		if gc.closed != hc.closed {
			fmt.Fprintf(&b, "client %d connection closed: goha %v, haproxy %v\n", i, gc.closed, hc.closed)
		}
	}
	if g.nreq != h.nreq {
		fmt.Fprintf(&b, "origin requests: goha %d, haproxy %d\n", g.nreq, h.nreq)
	}
	if !slices.Equal(g.origin, h.origin) {
		b.WriteString("origin received (- goha, + haproxy):\n")
		b.WriteString(lineDiff(g.origin, h.origin))
	}
	return b.String()
}

// lineDiff is a longest-common-subsequence diff, small inputs only.
func lineDiff(a, b []string) string {
	n, m := len(a), len(b)
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var s strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			fmt.Fprintf(&s, "    %s\n", a[i])
			i++
			j++
		case j < m && (i == n || l[i][j+1] >= l[i+1][j]):
			fmt.Fprintf(&s, "  + %s\n", b[j])
			j++
		default:
			fmt.Fprintf(&s, "  - %s\n", a[i])
			i++
		}
	}
	return s.String()
}

func config(vs []*vector, origins []*origin) (string, []string) {
	var b strings.Builder
	b.WriteString(`
defaults
    mode http
    timeout connect 2s
    timeout client 20s
    timeout server 20s
    timeout http-request 20s
    timeout http-keep-alive 20s
`)
	var names []string
	for i, v := range vs {
		name := fmt.Sprintf("f%d", i)
		names = append(names, name)
		fmt.Fprintf(&b, "frontend %s\n    bind \"fd@${%s}\"%s    default_backend b%d\n", name, name, frontendRules, i)
		fmt.Fprintf(&b, "backend b%d\n%s    server s %s\n", i, v.backend, origins[i].addr)
	}
	return b.String(), names
}

type side struct {
	proc    *harness.Proc
	origins []*origin
	names   []string
}

func start(t *testing.T, prog string, vs []*vector) *side {
	s := &side{}
	for range vs {
		s.origins = append(s.origins, newOrigin(t))
	}
	cfg, names := config(vs, s.origins)
	s.names = names
	s.proc = harness.Start(t, prog, cfg, names...)
	harness.WaitListening(t, s.proc.Addrs[names[len(names)-1]], 10*time.Second)
	return s
}

type result struct {
	goha, haproxy *outcome
	err           error
}

// play runs vector i on both proxies at once.
func play(v *vector, i int, g, h *side, quiet time.Duration) result {
	var r result
	var wg sync.WaitGroup
	var gerr, herr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		r.goha, gerr = run(v, g.proc.Addrs[g.names[i]], g.origins[i], quiet)
	}()
	go func() {
		defer wg.Done()
		r.haproxy, herr = run(v, h.proc.Addrs[h.names[i]], h.origins[i], quiet)
	}()
	wg.Wait()
	r.err = gerr
	if r.err == nil {
		r.err = herr
	}
	return r
}

// TestSmuggling runs every vector on goha and HAProxy, 24 at a time. A
// vector whose outcomes differ is replayed once, its origins' records
// emptied and with a longer quiet period, so that a slow machine is not
// taken for a difference.
func TestSmuggling(t *testing.T) {
	haproxy := bin.HAProxy(t)
	all := vectors()
	var vs []*vector
	runPending := os.Getenv("SMUGGLE_PENDING") != ""
	only := regexp.MustCompile(os.Getenv("SMUGGLE_VECTORS"))
	for _, v := range all {
		if (v.pending == "" || runPending) && only.MatchString(v.name) {
			vs = append(vs, v)
		}
	}
	g := start(t, bin.Path(t, "goha"), vs)
	h := start(t, haproxy, vs)

	results := make([]result, len(vs))
	sem := make(chan struct{}, 24)
	var wg sync.WaitGroup
	for i, v := range vs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = play(v, i, g, h, 600*time.Millisecond)
		}()
	}
	wg.Wait()
	// Replays run together, each alone on its own frontend and origin.
	for i, v := range vs {
		r := results[i]
		if r.err != nil || compare(r.goha, r.haproxy) == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			g.origins[i].reset()
			h.origins[i].reset()
			results[i] = play(v, i, g, h, 2*time.Second)
		}()
	}
	wg.Wait()

	byName := map[string]int{}
	for i, v := range vs {
		byName[v.name] = i
	}
	for _, v := range all {
		t.Run(v.name, func(t *testing.T) {
			i, ok := byName[v.name]
			switch {
			case !only.MatchString(v.name):
				t.Skip("not in SMUGGLE_VECTORS")
			case !ok:
				t.Skipf("pending fix: %s (SMUGGLE_PENDING=1 runs it)", v.pending)
			}
			check(t, v, results[i])
		})
	}
	if g.proc.Exited() {
		t.Fatalf("goha exited:\n%s", g.proc.Output())
	}
}

func check(t *testing.T, v *vector, r result) {
	if r.err != nil {
		t.Fatal(r.err)
	}
	report := compare(r.goha, r.haproxy)
	if !v.tunnel {
		for _, bad := range violations(r.goha) {
			t.Errorf("goha: %s", bad)
		}
	}
	// The invariants are goha's to keep; where HAProxy breaks one (it
	// forwards an established tunnel unexamined), that is only logged.
	for _, bad := range violations(r.haproxy) {
		t.Logf("haproxy: %s", bad)
	}
	t.Logf("goha: %s", r.goha.summary())
	raw := func() string {
		return fmt.Sprintf("client bytes, goha:\n%q\nclient bytes, haproxy:\n%q\norigin bytes, goha:\n%q\norigin bytes, haproxy:\n%q",
			r.goha.raw, r.haproxy.raw, r.goha.sent, r.haproxy.sent)
	}
	// A pending vector runs only when asked for, to see whether its bug
	// is still there: it fails like any other.
	switch {
	case v.pending != "" && report != "":
		t.Errorf("pending fix %s; differs from HAProxy:\n%s%s", v.pending, report, raw())
	case v.pending != "":
		t.Logf("pending fix %s, but matches HAProxy now: drop the note", v.pending)
	case v.diff != "" && report == "":
		// Not a failure: a note may be written ahead of a fix that makes
		// goha differ, and goha matching HAProxy is never unsafe.
		t.Logf("known difference (%s) not seen: goha matches HAProxy", v.diff)
	case v.diff != "":
		t.Logf("known difference: %s\n%s", v.diff, report)
	case report != "":
		t.Errorf("differs from HAProxy:\n%s%s", report, raw())
	}
}
