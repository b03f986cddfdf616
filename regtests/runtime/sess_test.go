//go:build regtest

package runtime_test

import (
	"bufio"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// sessCfg serves an HTTP and a tcp frontend from one server, SRV, which
// holds every connection without answering (GET /fast excepted), so that
// the streams stay in flight while the CLI looks at them.
const sessCfg = `global
    nbthread 1
    stats socket ${TMP}/admin.sock level admin
defaults
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend fe
    mode http
    bind "fd@${fe}"
    default_backend be
frontend ft
    mode tcp
    bind "fd@${ft}"
    default_backend bt
backend be
    mode http
    server s1 SRV
backend bt
    mode tcp
    server t1 SRV
`

// holdingBackend reads what it gets and answers only GET /fast, until its
// peer closes.
func holdingBackend(t *testing.T) string {
	return harness.TCPServer(t, func(c net.Conn) {
		defer c.Close()
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
	})
}

// sessWord matches one word of a show sess line: a key=value, or a
// key[...] group of them.
var sessWord = regexp.MustCompile(`^([a-z_]+)(=|\[)(.*)$`)

// sessKeys masks the values of a show sess line, keeping its keys in
// order: "0x55d..: proto=tcpv4 ... rq[f=..,i=0,..] scf=[8,0h,fd=3]" gives
// "ID: proto= ... rq[f=,i=,...] scf=[,,fd=]".
func sessKeys(line string) string {
	id, rest, ok := strings.Cut(line, ": ")
	if !ok || !strings.HasPrefix(id, "0x") {
		return "BAD " + line
	}
	out := []string{"ID:"}
	for _, w := range strings.Fields(rest) {
		m := sessWord.FindStringSubmatch(w)
		if m == nil {
			out = append(out, "BAD:"+w)
			continue
		}
		if m[2] == "=" && !strings.HasPrefix(m[3], "[") {
			out = append(out, m[1]+"=")
			continue
		}
		inner := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(m[3], "="), "["), "]")
		var ks []string
		for _, f := range strings.Split(inner, ",") {
			k, _, _ := strings.Cut(f, "=")
			if !strings.Contains(f, "=") {
				k = ""
			} else {
				k += "="
			}
			ks = append(ks, k)
		}
		open := m[1] + m[2]
		if m[2] == "=" {
			open += "["
		}
		out = append(out, open+strings.Join(ks, ",")+"]")
	}
	return strings.Join(out, " ")
}

// sessValue returns key's value in a show sess line.
func sessValue(line, key string) string {
	for _, w := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(w, key+"="); ok {
			return v
		}
	}
	return ""
}

// detailKeys masks a detailed dump's line to its keys: words of the form
// key=value keep "key=", other words are kept as they are, the first
// line's id and date are masked.
func detailKeys(line string) string {
	var out []string
	for i, w := range strings.Fields(line) {
		switch {
		case i == 0 && strings.HasPrefix(w, "0x"):
			out = append(out, "ID:")
		case strings.HasPrefix(w, "["):
			out = append(out, "[DATE]")
		case strings.Contains(w, "="):
			k, _, _ := strings.Cut(w, "=")
			out = append(out, k+"=")
		default:
			out = append(out, strings.Trim(w, "(),0123456789"))
		}
	}
	return strings.Join(out, " ")
}

// sessRun is what one proxy answered about the same streams.
type sessRun struct {
	list            map[string]string // show sess line by frontend (fe, ft, GLOBAL)
	detail          []string          // show sess <id> of the HTTP stream
	notFound, noSes string
}

// TestShowSessLikeHAProxy holds an HTTP request and a tcp stream open
// against a server that does not answer, on HAProxy 2.6 and on goha with
// the same configuration: show sess prints the same keys in the same
// order for both streams and for the CLI's own, names the right
// frontend, backend, server, protocol and client on goha, and dumps a
// stream by id in 2.6's layout; shutdown session then ends the streams,
// each client seeing its connection close.
func TestShowSessLikeHAProxy(t *testing.T) {
	progs := map[string]string{"haproxy": bin.HAProxy(t), "goha": bin.Path(t, "goha")}
	runs := map[string]*sessRun{}
	for _, name := range []string{"haproxy", "goha"} {
		srv := holdingBackend(t)
		p := harness.Start(t, progs[name], strings.ReplaceAll(sessCfg, "SRV", srv), "fe", "ft")
		sock := filepath.Join(p.Dir, "admin.sock")
		harness.WaitCLI(t, sock)
		ch, err := net.Dial("tcp", p.Addrs["fe"])
		if err != nil {
			t.Fatal(err)
		}
		defer ch.Close()
		io.WriteString(ch, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
		ct, err := net.Dial("tcp", p.Addrs["ft"])
		if err != nil {
			t.Fatal(err)
		}
		defer ct.Close()
		io.WriteString(ct, "hello")

		r := &sessRun{list: map[string]string{}}
		// Both streams are listed once each has its server.
		harness.WaitSocket(t, sock, "show sess", func(out string) bool {
			clear(r.list)
			for _, l := range strings.Split(out, "\n") {
				if fe := sessValue(l, "fe"); fe != "" {
					r.list[fe] = l
				}
			}
			return sessValue(r.list["fe"], "srv") == "s1" && sessValue(r.list["ft"], "srv") == "t1" &&
				strings.HasPrefix(sessValue(r.list["fe"], "scb"), "[8,")
		})
		for fe, want := range map[string]struct{ src, be, srv string }{
			"fe": {ch.LocalAddr().String(), "be", "s1"},
			"ft": {ct.LocalAddr().String(), "bt", "t1"},
		} {
			l := r.list[fe]
			if sessValue(l, "proto") != "tcpv4" || sessValue(l, "src") != want.src || sessValue(l, "be") != want.be || sessValue(l, "srv") != want.srv {
				t.Errorf("%s: %s stream: want proto=tcpv4 src=%s be=%s srv=%s in\n%s", name, fe, want.src, want.be, want.srv, l)
			}
			if fd := sessValue(l, "scf"); strings.HasSuffix(fd, "fd=-1]") {
				t.Errorf("%s: %s stream has no client descriptor: %s", name, fe, l)
			}
		}
		if g := r.list["GLOBAL"]; sessValue(g, "proto") != "unix_stream" || sessValue(g, "be") != "<NONE>" {
			t.Errorf("%s: CLI session: %s", name, g)
		}

		feID, _, _ := strings.Cut(r.list["fe"], ":")
		ftID, _, _ := strings.Cut(r.list["ft"], ":")
		detail := harness.MustSocket(t, sock, "show sess "+feID)
		r.detail = strings.Split(strings.TrimSuffix(detail, "\n\n"), "\n")
		if !strings.HasPrefix(detail, feID+": [") || !strings.Contains(r.detail[0], " source="+ch.LocalAddr().String()) {
			t.Errorf("%s: show sess %s:\n%s", name, feID, detail)
		}
		r.notFound = harness.MustSocket(t, sock, "show sess 0x10")
		r.noSes = harness.MustSocket(t, sock, "shutdown session 0x10")

		// shutdown session: a tcp stream ends on both proxies.
		if out := harness.MustSocket(t, sock, "shutdown session "+ftID); out != "\n" {
			t.Errorf("%s: shutdown session %s: %q", name, ftID, out)
		}
		if !closedByPeer(ct) {
			t.Errorf("%s: the tcp client's connection stayed open after shutdown session", name)
		}
		// HAProxy reuses a freed stream's address: the stream is gone
		// when no tcp stream has it.
		harness.WaitSocket(t, sock, "show sess", func(out string) bool {
			return !strings.Contains(out, ftID+": proto=tcpv4 src="+ct.LocalAddr().String())
		})
		if name == "goha" {
			// HAProxy 2.6 answers a killed request waiting for its
			// response with a 502 and keeps the connection; goha's
			// stream is the connection, and it closes.
			if out := harness.MustSocket(t, sock, "shutdown session "+feID); out != "\n" {
				t.Errorf("goha: shutdown session %s: %q", feID, out)
			}
			if !closedByPeer(ch) {
				t.Error("goha: the HTTP client's connection stayed open after shutdown session")
			}
			harness.WaitSocket(t, sock, "show sess", func(out string) bool { return !strings.Contains(out, feID+": ") })
		}
		runs[name] = r
		p.Stop()
	}

	h, g := runs["haproxy"], runs["goha"]
	for _, fe := range []string{"fe", "ft", "GLOBAL"} {
		if hk, gk := sessKeys(h.list[fe]), sessKeys(g.list[fe]); hk != gk {
			t.Errorf("show sess, %s stream: keys differ:\n haproxy %s\n goha    %s", fe, hk, gk)
		}
	}
	// The dump's first lines (stream, flags, frontend, backend, server,
	// task) are HAProxy's; of the rest, goha prints the lines whose data
	// it has, each as HAProxy prints it.
	for i := 0; i < 6; i++ {
		if i >= len(g.detail) || i >= len(h.detail) || detailKeys(h.detail[i]) != detailKeys(g.detail[i]) {
			t.Errorf("show sess <id> line %d differs:\n haproxy %q\n goha    %q", i+1, at(h.detail, i), at(g.detail, i))
		}
	}
	hset := map[string]bool{}
	for _, l := range h.detail {
		hset[detailKeys(l)] = true
	}
	for _, l := range g.detail[min(6, len(g.detail)):] {
		if !hset[detailKeys(l)] {
			t.Errorf("show sess <id>: goha's line %q is not one of HAProxy's", l)
		}
	}
	if h.notFound != g.notFound || g.notFound != "Session not found.\n\n" {
		t.Errorf("show sess <unknown id>:\n haproxy %q\n goha    %q", h.notFound, g.notFound)
	}
	if h.noSes != g.noSes {
		t.Errorf("shutdown session <unknown id>:\n haproxy %q\n goha    %q", h.noSes, g.noSes)
	}
}

func at(l []string, i int) string {
	if i < len(l) {
		return l[i]
	}
	return "<none>"
}

// closedByPeer reads c until its peer closes it, dropping what comes
// before (HAProxy may answer first); false if it stays open for
// harness.Patience.
func closedByPeer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(harness.Patience))
	_, err := io.Copy(io.Discard, c)
	ne, ok := err.(net.Error)
	return !(ok && ne.Timeout())
}

var (
	poolLine  = regexp.MustCompile(`^  - Pool (\S+) \((\d+) bytes\) : (\d+) allocated \((\d+) bytes\), (\d+) used \(~(\d+) by thread caches\), needed_avg (\d+), (\d+) failures, (\d+) users, @0x[0-9a-f]+( \[SHARED\])?$`)
	poolTotal = regexp.MustCompile(`^Total: (\d+) pools, (\d+) bytes allocated, (\d+) used \(~(\d+) by thread caches\)\.$`)
)

// parsePools checks show pools' layout and returns, per pool, its
// allocated and used objects and bytes, and the Total line's figures.
func parsePools(t *testing.T, who, out string) (pools map[string][4]int64, total [4]int64) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n\n"), "\n")
	if len(lines) < 2 || lines[0] != "Dumping pools usage. Use SIGQUIT to flush them." {
		t.Fatalf("%s: show pools:\n%s", who, out)
	}
	num := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	pools = map[string][4]int64{}
	for _, l := range lines[1 : len(lines)-1] {
		m := poolLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("%s: pool line not in 2.6's layout: %q", who, l)
		}
		size := num(m[2])
		if num(m[4]) != num(m[3])*size {
			t.Errorf("%s: %q: bytes are not objects times size", who, l)
		}
		pools[m[1]] = [4]int64{num(m[3]), num(m[5]), num(m[4]), num(m[5]) * size}
	}
	m := poolTotal.FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		t.Fatalf("%s: total line not in 2.6's layout: %q", who, lines[len(lines)-1])
	}
	return pools, [4]int64{num(m[1]), num(m[2]), num(m[3]), num(m[4])}
}

// TestShowPoolsCounts: after traffic, and with a request held open, goha's
// show pools lists non-zero figures in HAProxy 2.6's layout, its Total
// line sums the pools, and show info's pool fields agree with it.
func TestShowPoolsCounts(t *testing.T) {
	// HAProxy's own dump checks that the layout expected is 2.6's.
	hp := harness.Start(t, bin.HAProxy(t), strings.ReplaceAll(sessCfg, "SRV", holdingBackend(t)), "fe", "ft")
	hsock := filepath.Join(hp.Dir, "admin.sock")
	harness.WaitCLI(t, hsock)
	parsePools(t, "haproxy", harness.MustSocket(t, hsock, "show pools"))
	hp.Stop()

	p := harness.Start(t, bin.Path(t, "goha"), strings.ReplaceAll(sessCfg, "SRV", holdingBackend(t)), "fe", "ft")
	sock := filepath.Join(p.Dir, "admin.sock")
	harness.WaitCLI(t, sock)
	for i := 0; i < 20; i++ {
		if out := harness.RawRequest(t, p.Addrs["fe"], "GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", harness.Patience); !strings.Contains(out, "200 OK") {
			t.Fatalf("request %d: %q", i, out)
		}
	}
	held, err := net.Dial("tcp", p.Addrs["fe"])
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	io.WriteString(held, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	harness.WaitSocket(t, sock, "show sess", func(out string) bool { return strings.Contains(out, "srv=s1") })

	pools, total := parsePools(t, "goha", harness.MustSocket(t, sock, "show pools"))
	var n, alloc, used int64
	for name, f := range pools {
		n++
		alloc += f[2]
		used += f[3]
		if f[1] > f[0] {
			t.Errorf("pool %s: %d used of %d allocated", name, f[1], f[0])
		}
	}
	if total[0] != n || total[1] != alloc || total[2] != used {
		t.Errorf("Total: %d pools, %d allocated, %d used; the pools sum to %d, %d, %d", total[0], total[1], total[2], n, alloc, used)
	}
	// The held request has a client and a server buffer.
	if b := pools["buffer"]; b[0] < 2 || b[1] < 2 {
		t.Errorf("buffer pool with a request held: %d allocated, %d used", b[0], b[1])
	}
	info := harness.MustSocket(t, sock, "show info")
	field := func(name string) int64 {
		for _, l := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(l, name+": "); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		t.Fatalf("no %s in show info", name)
		return 0
	}
	// Nothing moves while the request is held: what is in use is stable.
	if field("PoolUsed_bytes") != total[2] || field("PoolAlloc_bytes") <= 0 || field("PoolFailed") != 0 {
		t.Errorf("show info: PoolUsed_bytes %d PoolAlloc_bytes %d PoolFailed %d; show pools used %d",
			field("PoolUsed_bytes"), field("PoolAlloc_bytes"), field("PoolFailed"), total[2])
	}
}
