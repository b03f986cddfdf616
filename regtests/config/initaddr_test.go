//go:build regtest

package config

import (
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// TestInitAddrNoneAndEnvAddress runs the same configuration on goha and
// HAProxy: a server whose address comes from unquoted environment
// variables carries the traffic, and a server whose name does not resolve
// starts, under init-addr none, in resolution maintenance without an
// address, which the stats and the servers state show alike.
func TestInitAddrNoneAndEnvAddress(t *testing.T) {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed")
	}
	origin := harness.NewOrigin(t, "live", nil)
	host, port, _ := net.SplitHostPort(origin.Addr)
	t.Setenv("GOHA_T_ORIGIN_HOST", host)
	t.Setenv("GOHA_T_ORIGIN_PORT", port)
	cfg := `
global
    stats socket ${TMP}/s.sock level admin

defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s

frontend fe
    bind "fd@${FE}"
    default_backend be

backend be
    server live ${GOHA_T_ORIGIN_HOST}:$GOHA_T_ORIGIN_PORT
    server dead nonexistent.invalid:80 init-addr none
`
	type view struct{ body, status, state string }
	run := func(prog string) view {
		p := harness.Start(t, prog, cfg, "FE")
		sock := filepath.Join(p.Dir, "s.sock")
		harness.WaitCLI(t, sock)
		var v view
		for i := 0; i < 4; i++ {
			code, body := harness.Get(t, &http.Client{Timeout: 5 * time.Second}, p.Addrs["FE"], "/")
			if code != 200 || body != "live\n" {
				t.Errorf("%s: request %d got %d %q, want 200 from live", prog, i, code, body)
			}
			v.body = body
		}
		v.status = harness.ParseStat(harness.MustSocket(t, sock, "show stat"))["be/dead"]["status"]
		for _, l := range strings.Split(harness.MustSocket(t, sock, "show servers state be"), "\n") {
			f := strings.Fields(l)
			if len(f) > 18 && f[3] == "dead" {
				// The address, operational and administrative states,
				// and the fqdn and port columns; ids and times differ.
				v.state = strings.Join([]string{f[4], f[5], f[6], f[17], f[18]}, " ")
			}
		}
		p.Stop()
		return v
	}
	g := run(bin.Path(t, "goha"))
	h := run(haproxy)
	if h.status == "" || h.state == "" {
		t.Fatalf("haproxy shows no dead server: %+v", h)
	}
	t.Logf("haproxy %+v", h)
	if g != h {
		t.Errorf("goha %+v\nhaproxy %+v", g, h)
	}
}
