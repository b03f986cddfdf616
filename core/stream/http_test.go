package stream

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"goha/core"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// unitHTTPProxy runs frontend fe (with feLines) in front of backend be
// (with beLines) and returns the process and the frontend's address.
func unitHTTPProxy(t *testing.T, feLines, beLines string) (*Process, string) {
	t.Helper()
	proc := unitProc(t, unitHTTPConf+"frontend fe\n    bind @BIND@\n"+feLines+"    default_backend be\nbackend be\n"+beLines)
	return proc, unitFE(t, proc, "fe")
}

// noPurge keeps a server's idle connections from the purge task, whose
// first run may come at any point of a slow test: the tests that count
// the origin's connections then count reuse alone.
const noPurge = " pool-purge-delay 1h"

// Requests on one keep-alive client connection go to the origin on one
// server connection, which goes back to the pool between them.
func TestHTTPKeepAliveReusesServerConn(t *testing.T) {
	o := newUnitOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.URL.Path))
	})
	_, addr := unitHTTPProxy(t, "", "    server s1 "+o.addr+noPurge+"\n")
	c := dialUnit(t, addr)
	for i := 0; i < 5; i++ {
		path := "/r" + strconv.Itoa(i)
		r, body := c.get(path)
		if r.StatusCode != 200 || body != path {
			t.Fatalf("request %d: %d %q", i, r.StatusCode, body)
		}
		if r.Close {
			t.Fatalf("request %d: the proxy closes a keep-alive client connection", i)
		}
	}
	if n := o.reqs.Load(); n != 5 {
		t.Errorf("origin saw %d requests, want 5", n)
	}
	if n := o.accepts.Load(); n != 1 {
		t.Errorf("origin accepted %d connections for 5 keep-alive requests, want 1", n)
	}
}

// A request body, with a length or chunked, larger than the buffers or
// not, reaches the origin whole, and the next request on the connection
// is framed after it.
func TestHTTPRequestBodyForwardedWhole(t *testing.T) {
	o := newUnitOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			w.WriteHeader(400)
			return
		}
		fmt.Fprintf(w, "%d %s", n, hex.EncodeToString(h.Sum(nil)))
	})
	_, addr := unitHTTPProxy(t, "", "    server s1 "+o.addr+"\n")
	digest := func(b string) string {
		s := sha256.Sum256([]byte(b))
		return strconv.Itoa(len(b)) + " " + hex.EncodeToString(s[:])
	}
	// Not a repeated byte: a shifted or dropped part must show.
	var sb strings.Builder
	for i := 0; sb.Len() < 200000; i++ {
		sb.WriteString(strconv.Itoa(i))
		sb.WriteByte(',')
	}
	big := sb.String()
	c := dialUnit(t, addr)
	for _, body := range []string{"hello", big} {
		c.send("POST /up HTTP/1.1\r\nHost: unit\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
		if r, got := c.read("POST"); r.StatusCode != 200 || got != digest(body) {
			t.Fatalf("content-length body of %d bytes: origin answered %d %q, want %q", len(body), r.StatusCode, got, digest(body))
		}
	}
	// Chunked, in chunks that do not line up with the buffers.
	var chunked strings.Builder
	for off := 0; off < len(big); off += 7001 {
		part := big[off:min(off+7001, len(big))]
		fmt.Fprintf(&chunked, "%x\r\n%s\r\n", len(part), part)
	}
	chunked.WriteString("0\r\n\r\n")
	c.send("POST /up HTTP/1.1\r\nHost: unit\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked.String())
	if r, got := c.read("POST"); r.StatusCode != 200 || got != digest(big) {
		t.Fatalf("chunked body: origin answered %d %q, want %q", r.StatusCode, got, digest(big))
	}
	if r, _ := c.get("/after"); r.StatusCode != 200 {
		t.Fatalf("request after the bodies: status %d", r.StatusCode)
	}
}

// http-request deny answers 403 itself: the origin never hears of the
// request, and the connection goes on for the next one.
func TestHTTPRequestDeny(t *testing.T) {
	o := newUnitOrigin(t, okHandler)
	proc, addr := unitHTTPProxy(t, "    http-request deny if { path_beg /admin }\n", "    server s1 "+o.addr+"\n")
	c := dialUnit(t, addr)
	if r, _ := c.get("/admin/x"); r.StatusCode != 403 {
		t.Fatalf("denied request: status %d, want 403", r.StatusCode)
	}
	if n := o.accepts.Load(); n != 0 {
		t.Fatalf("the origin was contacted (%d connections) for a denied request", n)
	}
	if r, body := c.get("/ok"); r.StatusCode != 200 || body != "ok" {
		t.Fatalf("request after a deny: %d %q", r.StatusCode, body)
	}
	if n := o.reqs.Load(); n != 1 {
		t.Errorf("origin saw %d requests, want only the allowed one", n)
	}
	if n := proc.Conf.FindProxy("fe", core.CapFE).FE.Dreq.Load(); n != 1 {
		t.Errorf("frontend dreq = %d, want 1", n)
	}
}

// A backend without a usable server answers 503 without contacting
// anyone: every server disabled, or none at all.
func TestHTTPNoUsableServer503(t *testing.T) {
	o := newUnitOrigin(t, okHandler)
	for _, tc := range []struct{ name, be string }{
		{"disabled", "    server s1 " + o.addr + " disabled\n"},
		{"empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := unitHTTPProxy(t, "", tc.be)
			if r, _ := dialUnit(t, addr).get("/"); r.StatusCode != 503 {
				t.Fatalf("status %d, want 503", r.StatusCode)
			}
		})
	}
	if n := o.accepts.Load(); n != 0 {
		t.Errorf("a disabled server was contacted (%d connections)", n)
	}
}

// The response to HEAD keeps its Content-Length, has no body, and the
// next response on the connection comes right after its head.
func TestHTTPHeadResponseFraming(t *testing.T) {
	o := newUnitOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1234")
		if r.Method != http.MethodHead {
			w.Write([]byte(strings.Repeat("x", 1234)))
		}
	})
	_, addr := unitHTTPProxy(t, "", "    server s1 "+o.addr+noPurge+"\n")
	c := dialUnit(t, addr)
	c.send("HEAD /h HTTP/1.1\r\nHost: unit\r\n\r\n")
	r, body := c.read("HEAD")
	if r.StatusCode != 200 || body != "" {
		t.Fatalf("HEAD: %d with body %q", r.StatusCode, body)
	}
	if cl := r.Header.Get("Content-Length"); cl != "1234" {
		t.Errorf("HEAD response Content-Length %q, want the origin's 1234", cl)
	}
	// A proxy waiting for a HEAD response's body would never answer
	// this; one passing stray bytes would garble it.
	r, body = c.get("/g")
	if r.StatusCode != 200 || len(body) != 1234 {
		t.Fatalf("GET after HEAD: %d with %d body bytes", r.StatusCode, len(body))
	}
	if n := o.accepts.Load(); n != 1 {
		t.Errorf("origin accepted %d connections, want 1: the connection after HEAD is reusable", n)
	}
}

// option forwardfor adds X-Forwarded-For with the client's address, after
// any the client sent.
func TestHTTPForwardFor(t *testing.T) {
	got := make(chan []string, 2)
	o := newUnitOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Values("X-Forwarded-For")
	})
	_, addr := unitHTTPProxy(t, "    option forwardfor\n", "    server s1 "+o.addr+"\n")
	c := dialUnit(t, addr)
	if r, _ := c.get("/"); r.StatusCode != 200 {
		t.Fatalf("status %d", r.StatusCode)
	}
	if v := <-got; len(v) != 1 || v[0] != "127.0.0.1" {
		t.Errorf("X-Forwarded-For = %q, want [127.0.0.1]", v)
	}
	c.send("GET / HTTP/1.1\r\nHost: unit\r\nX-Forwarded-For: 10.1.2.3\r\n\r\n")
	if r, _ := c.read("GET"); r.StatusCode != 200 {
		t.Fatalf("status %d", r.StatusCode)
	}
	if v := strings.Join(<-got, ","); strings.ReplaceAll(v, " ", "") != "10.1.2.3,127.0.0.1" {
		t.Errorf("X-Forwarded-For with the client's own = %q, want 10.1.2.3 then 127.0.0.1", v)
	}
}
