//go:build regtest

package log

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// spliceBody is the size of the bodies the splicing comparison moves:
// several pipes' worth.
const spliceBody = 300000

// spliceOrigin answers /cl with a Content-Length body, /close with a body
// ended by its close, and /hold with half of
// a Content-Length body, then nothing until the connection closes.
func spliceOrigin(t *testing.T) string {
	body := strings.Repeat("0123456789abcdef", spliceBody/16)
	return harness.TCPServer(t, func(c net.Conn) {
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			switch req.URL.Path {
			case "/close":
				io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"+body)
				return
			case "/hold":
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"+body[:50])
				io.Copy(io.Discard, br)
				return
			default:
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			}
		}
	})
}

// runSplice sends the same exchanges through a listen section that
// splices both ways (sp) and one that does not (cp): on one connection a
// POST with a body and a GET, both answered with a Content-Length body, a
// response ended by the close (no chunked one: HAProxy's chunk sizes on
// the way out depend on its buffering, and so its h1_bytes_out); then a response held half way,
// during which show stat is taken.
func runSplice(t *testing.T, prog, origin string) map[string]map[string]string {
	cfg := fmt.Sprintf(`
global
    stats socket ${TMP}/s.sock level admin
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
listen sp
    bind "fd@${sp}"
    option splice-request
    option splice-response
    server s1 %s
listen cp
    bind "fd@${cp}"
    server s1 %s
`, origin, origin)
	p := harness.Start(t, prog, cfg, "sp", "cp")
	sock := filepath.Join(p.Dir, "s.sock")
	post := "POST /cl HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(spliceBody) + "\r\n\r\n" + strings.Repeat("x", spliceBody)
	var holds []net.Conn
	for _, px := range []string{"sp", "cp"} {
		c, err := net.Dial("tcp", p.Addrs[px])
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		for _, r := range []string{post, "GET /cl HTTP/1.1\r\nHost: x\r\n\r\n", "GET /close HTTP/1.1\r\nHost: x\r\n\r\n"} {
			io.WriteString(c, r)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%s: %s: %v", prog, px, err)
			}
			if n, err := io.Copy(io.Discard, resp.Body); err != nil || n != spliceBody {
				t.Fatalf("%s: %s: %d body bytes, %v", prog, px, n, err)
			}
		}
		c.Close()
		settle(t, sock, px, 0)
		h, err := net.Dial("tcp", p.Addrs[px])
		if err != nil {
			t.Fatal(err)
		}
		h.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(h, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(h), nil)
		if err != nil {
			t.Fatalf("%s: %s: hold: %v", prog, px, err)
		}
		if _, err := io.ReadFull(resp.Body, make([]byte, 50)); err != nil {
			t.Fatalf("%s: %s: hold: %v", prog, px, err)
		}
		holds = append(holds, h)
	}
	rows := showStat(t, sock)
	info := map[string]string{}
	for _, l := range strings.Split(harness.MustSocket(t, sock, "show info"), "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			info[k] = v
		}
	}
	rows["show info"] = info
	for _, h := range holds {
		h.Close()
	}
	return rows
}

// The h1 stats module's counters after the same traffic, goha's against
// HAProxy 2.6's: connections and streams open (one response still under
// way per proxy) and in total, bytes on the wire exactly. How much of a
// body is spliced rather than copied depends on how much came with its
// head, so the spliced counters must be zero where HAProxy's are, some
// where HAProxy's are, and never more than the bytes.
func TestSpliceCountersAgainstHAProxy(t *testing.T) {
	haproxy := bin.HAProxy(t)
	origin := spliceOrigin(t)
	got := runSplice(t, bin.Path(t, "goha"), origin)
	want := runSplice(t, haproxy, origin)
	exact := []string{"stot", "bin", "bout", "connect", "reuse",
		"h1_open_connections", "h1_open_streams", "h1_total_connections", "h1_total_streams",
		"h1_bytes_in", "h1_bytes_out"}
	compareRows(t, got, want, func(key string) []string {
		if key == "show info" {
			return nil
		}
		return exact
	})
	// What went out through a pipe, for the process.
	if g, w := got["show info"]["TotalSplicdedBytesOut"], want["show info"]["TotalSplicdedBytesOut"]; g == "0" || w == "0" || g == "" {
		t.Errorf("TotalSplicdedBytesOut: goha %q, HAProxy %q; want some", g, w)
	}
	for key, w := range want {
		if key == "show info" {
			continue
		}
		g := got[key]
		if w["h1_bytes_in"] == "" {
			continue // a server's row: no h1 counters
		}
		for _, f := range []string{"h1_spliced_bytes_in", "h1_spliced_bytes_out"} {
			total := "h1_bytes" + strings.TrimPrefix(f, "h1_spliced_bytes")
			gn, _ := strconv.ParseInt(g[f], 10, 64)
			wn, _ := strconv.ParseInt(w[f], 10, 64)
			gt, _ := strconv.ParseInt(g[total], 10, 64)
			if (gn == 0) != (wn == 0) || gn > gt || g[f] == "" {
				t.Errorf("%s %s: goha %q (of %s), HAProxy %q", key, f, g[f], g[total], w[f])
			}
		}
	}
}
