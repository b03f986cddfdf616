//go:build regtest

package proxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// peersCfg is one peer of a two-peer section: @ME@ is its name, the
// peers' addresses are @A@ and @B@; requests count in a shared table,
// and a backend sticks clients to servers through another.
const peersCfg = `
global
    stats socket ${TMP}/s.sock level admin
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
peers mesh
@PEERS@
    table hits type string len 32 size 100 expire 60s store http_req_cnt,conn_rate(10s),gpc(2),gpc_rate(2,10s),bytes_out_cnt
frontend fe
    bind "fd@${FE}"
    http-request track-sc0 path table mesh/hits
    http-request sc-inc-gpc(1,0)
    use_backend app if { path_beg /app }
    http-request return status 200 content-type text/plain lf-string "%[sc0_http_req_cnt]" unless { path_beg /app }
backend app
    stick-table type string len 32 size 100 expire 60s peers mesh
    stick on urlp(u)
    server s1 @S1@
    server s2 @S2@
`

var (
	peersRow  = regexp.MustCompile(`key=(\S+) use=\d+ exp=\d+ (.*)`)
	peersMask = regexp.MustCompile(`0x[0-9a-f]+|\[[^]]*\]|<NEVER>|<PAST>|\b\d+[dhms]\d*[hms]?\b|\d+(\.\d+)*(:\d+)?|\b[AB]\((local|remote),(active|inactive)\)|(NONE|ESTA|CONN|HSHK)`)
)

// tableRows is a table's entries without addresses and expiry, sorted.
func tableRows(t *testing.T, sock, table string) []string {
	out := harness.MustSocket(t, sock, "show table "+table)
	var rows []string
	for _, m := range peersRow.FindAllStringSubmatch(out, -1) {
		rows = append(rows, m[1]+" "+m[2])
	}
	sort.Strings(rows)
	return rows
}

// TestPeersWithHAProxy: goha and HAProxy 2.6 in one peers section share
// their tables both ways (counters, arrays, rates, server keys), over TCP
// and over TLS, and a restarted peer, goha or HAProxy, gets the whole
// table back from the other.
func TestPeersWithHAProxy(t *testing.T) {
	t.Run("tcp", func(t *testing.T) { testPeers(t, false) })
	t.Run("tls", func(t *testing.T) { testPeers(t, true) })
}

func testPeers(t *testing.T, useTLS bool) {
	s1 := harness.NewOrigin(t, "s1", nil)
	s2 := harness.NewOrigin(t, "s2", nil)
	pa, pb := harness.FreePort(t), harness.FreePort(t)
	addr := map[string]string{"A": fmt.Sprintf("127.0.0.1:%d", pa), "B": fmt.Sprintf("127.0.0.1:%d", pb)}
	crt := ""
	if useTLS {
		crt = selfSigned(t)
	}
	cfg := func(me string) string {
		other := map[string]string{"A": "B", "B": "A"}[me]
		var lines string
		if useTLS {
			lines = fmt.Sprintf("    bind %s ssl crt %s\n    default-server ssl verify none\n    server %s\n    server %s %s", addr[me], crt, me, other, addr[other])
		} else {
			lines = fmt.Sprintf("    peer A %s\n    peer B %s", addr["A"], addr["B"])
		}
		return strings.NewReplacer("@PEERS@", lines, "@S1@", s1.Addr, "@S2@", s2.Addr).Replace(peersCfg)
	}
	start := func(prog, me string) *harness.Proc {
		p := harness.StartArgs(t, prog, []string{"-L", me}, cfg(me), "FE")
		harness.WaitListening(t, p.Addrs["FE"], 5*time.Second)
		harness.WaitCLI(t, p.Dir+"/s.sock")
		return p
	}
	goha := start(bin.Path(t, "goha"), "A")
	hap := start(bin.HAProxy(t), "B")
	get := func(p *harness.Proc, path string) string {
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + p.Addrs["FE"] + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b := new(strings.Builder)
		fmt.Fprint(b, resp.StatusCode)
		return b.String()
	}
	same := func(what string) {
		t.Helper()
		for _, tb := range []string{"mesh/hits", "app"} {
			var g, h []string
			ok := harness.Within(5*time.Second, func() bool {
				g, h = tableRows(t, goha.Dir+"/s.sock", tb), tableRows(t, hap.Dir+"/s.sock", tb)
				return strings.Join(g, "\n") == strings.Join(h, "\n") && len(g) > 0
			})
			if !ok {
				t.Fatalf("%s: table %s differs\n--- goha:\n%s\n--- haproxy:\n%s", what, tb, strings.Join(g, "\n"), strings.Join(h, "\n"))
			}
		}
	}
	// Each side's traffic reaches the other.
	harness.Eventually(t, "peers connected", func() bool {
		return strings.Contains(harness.MustSocket(t, hap.Dir+"/s.sock", "show peers"), "state=EST")
	})
	for i := 0; i < 3; i++ {
		get(goha, "/a")
		get(hap, "/b")
	}
	get(goha, "/app?u=alice")
	get(hap, "/app?u=bob")
	same("after traffic on both")
	// show peers has HAProxy's layout: the same lines, keys and order
	// once addresses, figures and times are masked (HAProxy adds the
	// tables its session is on, which goha leaves out; the connection
	// line shows on the side that accepted the session only).
	// Each side lists itself as the local peer and the other as the
	// remote one, in the configuration's order reversed: the blocks are
	// compared whatever their order.
	shape := func(sock string) string {
		out := strings.TrimRight(harness.MustSocket(t, sock, "show peers"), "\n")
		var blocks []string
		var cur []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "remote_table:") || strings.Contains(l, "last_local_table:") || strings.Contains(l, "xprt=") {
				continue
			}
			if strings.HasPrefix(l, "  0x") && len(cur) > 0 {
				blocks = append(blocks, strings.Join(cur, "\n"))
				cur = nil
			}
			cur = append(cur, peersMask.ReplaceAllString(l, "X"))
		}
		blocks = append(blocks, strings.Join(cur, "\n"))
		sort.Strings(blocks[1:])
		return strings.Join(blocks, "\n")
	}
	var gs, hs string
	if !harness.Within(5*time.Second, func() bool {
		gs, hs = shape(goha.Dir+"/s.sock"), shape(hap.Dir+"/s.sock")
		return gs == hs
	}) {
		t.Fatalf("show peers differs\n--- goha:\n%s\n--- haproxy:\n%s", gs, hs)
	}
	rows := strings.Join(tableRows(t, hap.Dir+"/s.sock", "app"), "\n")
	if !strings.Contains(rows, "key=alice") && !strings.Contains(rows, "alice server_id=") {
		t.Fatalf("HAProxy did not get goha's stick entry:\n%s", rows)
	}
	// A request counted on the other side goes on from the shared count.
	if got := get(goha, "/b"); got != "200" {
		t.Fatalf("status %s", got)
	}
	same("after a shared key moved on")

	// goha restarts: HAProxy teaches it the tables.
	goha.Stop()
	goha = start(bin.Path(t, "goha"), "A")
	same("after goha restarted")

	// HAProxy restarts: goha teaches it.
	hap.Stop()
	hap = start(bin.HAProxy(t), "B")
	same("after HAProxy restarted")
}

// selfSigned writes a certificate and its key in one PEM file.
func selfSigned(t *testing.T) string {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "peer"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	path := filepath.Join(t.TempDir(), "peer.pem")
	data := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})...)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
