//go:build regtest

package runtime_test

import (
	"fmt"
	"goha/core/stream"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"goha/core"
	"goha/core/config"
	"goha/core/diag"
	"goha/regtests/internal/harness"
	"goha/runtime"
)

// TestPrometheusExporter scrapes goha's socket with the Prometheus
// HAProxy exporter, which reads show stat columns by position.
func TestPrometheusExporter(t *testing.T) {
	exp, err := exec.LookPath("prometheus-haproxy-exporter")
	if err != nil {
		t.Skip("prometheus-haproxy-exporter not installed")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "g.sock")
	text := fmt.Sprintf(cfgTmpl, "    stats socket "+sock+" level operator\n", harness.FreePort(t), 1, 2, 3, 4, 5, 6, 7)
	d := &diag.Collector{}
	cfg := core.Build(config.Parse("g.cfg", []byte(text), config.Options{}, d), d)
	if d.HasAlert() {
		t.Fatal(d.All())
	}
	srv, err := runtime.Serve(stream.New(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port := harness.FreePort(t)
	cmd := exec.Command(exp, fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--haproxy.scrape-uri=unix:"+sock)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var body string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		if strings.Contains(body, "haproxy_up") {
			break
		}
	}
	for _, want := range []string{
		"haproxy_up 1",
		"haproxy_exporter_csv_parse_failures_total 0",
		`haproxy_backend_up{backend="be1"} 1`,
		`haproxy_backend_weight{backend="be1"} 61`,
		`haproxy_server_weight{backend="be1",server="s2"} 50`,
		`haproxy_server_up{backend="be2",server="t2"} 0`,
		`haproxy_server_max_sessions{backend="be1",server="s3"} 0`,
		`haproxy_frontend_limit_sessions{frontend="fe1"} 1000`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		os.WriteFile(filepath.Join(os.TempDir(), "goha-exporter-metrics.txt"), []byte(body), 0o644)
	}
}
