package lb

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startNginx runs nginx (one worker process) proxying to an upstream whose
// servers are server blocks of the same nginx answering their own name, and
// returns its URL. It skips the test when nginx is not installed.
func startNginx(t *testing.T, upstream []string) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx not installed")
		}
		bin = "/usr/sbin/nginx"
	}
	var last string
	for range 3 {
		dir := t.TempDir()
		ports := freePorts(t, len(upstream)+1)
		var b strings.Builder
		fmt.Fprintf(&b, "daemon off;\nmaster_process off;\npid %s/nginx.pid;\nerror_log stderr error;\n", dir)
		b.WriteString("events { worker_connections 64; }\nhttp {\n    access_log off;\n")
		for _, d := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
			fmt.Fprintf(&b, "    %s_temp_path %s/%s;\n", d, dir, d)
		}
		b.WriteString("    upstream be {\n")
		for i, s := range upstream {
			fmt.Fprintf(&b, "        server 127.0.0.1:%d %s;\n", ports[i+1], s)
		}
		b.WriteString("    }\n")
		fmt.Fprintf(&b, "    server { listen 127.0.0.1:%d; location / { proxy_pass http://be; } }\n", ports[0])
		for i := range upstream {
			fmt.Fprintf(&b, "    server { listen 127.0.0.1:%d; location / { return 200 \"s%d\"; } }\n", ports[i+1], i+1)
		}
		b.WriteString("}\n")
		cfg := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-p", dir, "-c", cfg, "-e", "stderr")
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() {
			_ = cmd.Wait()
			close(exited)
		}()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
		deadline := time.Now().Add(5 * time.Second)
		for {
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ports[0]))
			if err == nil {
				c.Close()
				return fmt.Sprintf("http://127.0.0.1:%d/", ports[0])
			}
			select {
			case <-exited:
			case <-time.After(20 * time.Millisecond):
				if time.Now().Before(deadline) {
					continue
				}
				_ = cmd.Process.Kill()
				<-exited
			}
			break
		}
		last = out.String()
	}
	t.Fatalf("nginx did not start: %s", last)
	return ""
}

// The SWRR baseline, and so the period vnswrr precomputes, is nginx's own
// order, down servers and backups included.
func TestSWRRMatchesNginx(t *testing.T) {
	cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for _, tc := range []struct {
		upstream []string
		servers  []Server
	}{
		{[]string{"weight=1", "weight=2", "weight=3"}, weights(1, 2, 3)},
		{[]string{"weight=5", "weight=1", "weight=1"}, weights(5, 1, 1)},
		{[]string{"weight=4", "weight=3 down", "weight=2", "weight=7"},
			[]Server{{Weight: 4, Usable: true}, {Weight: 3}, {Weight: 2, Usable: true}, {Weight: 7, Usable: true}}},
	} {
		url := startNginx(t, tc.upstream)
		p := mustNew(t, Config{Balance: Balance{Algo: SWRR}, Servers: tc.servers})
		var got, want strings.Builder
		for range 30 {
			resp, err := cl.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want.WriteString(strings.TrimPrefix(string(body), "s"))
			fmt.Fprintf(&got, "%d", p.Pick(Key{}, -1)+1)
		}
		if got.String() != want.String() {
			t.Errorf("%v:\n got  %s\n want %s (nginx)", tc.upstream, got.String(), want.String())
		}
	}
}
