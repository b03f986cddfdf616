package lb

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// realHAProxy runs HAProxy 2.6 with one backend whose servers are listen
// sections of the same process answering their own name, so that a test can
// watch which server HAProxy picks for each request. It skips the test when
// no haproxy binary is installed.
type realHAProxy struct {
	t    *testing.T
	url  string
	sock string
	// ports of the server listen sections, s1 first
	ports []int
	cl    *http.Client
}

// startHAProxy starts HAProxy with backend lines be (balance, hash-type, ...)
// and servers named s1..sN with the given extra parameters ("weight 2",
// "backup", ...). A server given as "#" is not declared: it is a spare
// listen section for "add server", at port {sN} in CLI commands. A server
// whose parameters contain "dead" has nothing listening behind it.
func startHAProxy(t *testing.T, be []string, servers []string) *realHAProxy {
	t.Helper()
	return startHAProxyTo(t, be, servers, nil)
}

// startHAProxyTo is startHAProxy with servers at the given ports instead of
// listen sections (nil: listen sections).
func startHAProxyTo(t *testing.T, be []string, servers []string, at []int) *realHAProxy {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/haproxy"); err != nil {
			t.Skip("haproxy not installed")
		}
		bin = "/usr/sbin/haproxy"
	}
	// The ports are free when drawn but another process may take one
	// before HAProxy binds it: try again with new ones.
	var last string
	for range 3 {
		h, out, ok := tryHAProxy(t, bin, be, servers, at)
		if ok {
			return h
		}
		last = out
	}
	t.Fatalf("haproxy did not start: %s", last)
	return nil
}

func tryHAProxy(t *testing.T, bin string, be, servers []string, at []int) (*realHAProxy, string, bool) {
	t.Helper()
	ports := freePorts(t, len(servers)+1)
	if at != nil {
		ports = append(ports[:1], at...)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "stats.sock")
	var b strings.Builder
	fmt.Fprintf(&b, "global\n    nbthread 1\n    stats socket %s level admin\n", sock)
	b.WriteString("defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n")
	fmt.Fprintf(&b, "frontend fe\n    bind 127.0.0.1:%d\n    default_backend be\n", ports[0])
	b.WriteString("backend be\n")
	for _, l := range be {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	for i, s := range servers {
		if strings.HasPrefix(s, "#") {
			continue // a spare, for "add server"
		}
		fmt.Fprintf(&b, "    server s%d 127.0.0.1:%d %s\n", i+1, ports[i+1], strings.ReplaceAll(s, "dead", ""))
	}
	for i := range servers {
		if at != nil {
			break
		}
		if strings.Contains(servers[i], "dead") {
			continue // nothing listens: connections are refused
		}
		fmt.Fprintf(&b, "listen l%d\n    bind 127.0.0.1:%d\n", i+1, ports[i+1])
		fmt.Fprintf(&b, "    http-request return status 200 content-type text/plain string s%d\n", i+1)
	}
	cfg := filepath.Join(dir, "h.cfg")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-db", "-f", cfg)
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
	h := &realHAProxy{
		t:     t,
		url:   fmt.Sprintf("http://127.0.0.1:%d", ports[0]),
		sock:  sock,
		ports: ports[1:],
		cl:    &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second},
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		// HAProxy renames its UNIX socket into place after binding,
		// possibly after the TCP listener accepts: wait for both.
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ports[0]))
		if err == nil {
			c.Close()
			if u, err := net.Dial("unix", sock); err == nil {
				u.Close()
				break
			}
		}
		select {
		case <-exited:
			return nil, out.String(), false
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return nil, out.String(), false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return h, "", true
}

// get sends one request and returns the index (0-based) of the server that
// answered.
func (h *realHAProxy) get(path string, hdr map[string]string) int {
	h.t.Helper()
	req, err := http.NewRequest("GET", h.url+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := h.cl.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var n int
	if _, err := fmt.Sscanf(string(body), "s%d", &n); err != nil {
		h.t.Fatalf("unexpected answer %d %q", resp.StatusCode, body)
	}
	return n - 1
}

// cli runs one command on the stats socket and returns the reply.
func (h *realHAProxy) cli(cmd string) string {
	h.t.Helper()
	c, err := net.Dial("unix", h.sock)
	if err != nil {
		h.t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "%s\n", cmd)
	var b strings.Builder
	r := bufio.NewReader(c)
	for {
		l, err := r.ReadString('\n')
		b.WriteString(l)
		if err != nil {
			break
		}
	}
	return b.String()
}

// freePorts returns n distinct loopback ports below 32768 that were free a
// moment ago: ports the kernel hands out for port 0 come from the
// ephemeral range, where other programs' outgoing connections take
// theirs.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ps []int
	for tries := 0; len(ps) < n; tries++ {
		if tries == 1000 {
			t.Fatal("no free port")
		}
		p := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		ls = append(ls, l)
		ps = append(ps, p)
	}
	for _, l := range ls {
		l.Close()
	}
	return ps
}
