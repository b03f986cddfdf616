package check

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func cpuTime() (user, sys time.Duration) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

type countRep struct {
	n, failed atomic.Int64
	first     atomic.Value
}

func (c *countRep) CheckResult(r Report) {
	c.n.Add(1)
	if r.Outcome.Result() == ResultFailed {
		if c.failed.Add(1) == 1 {
			c.first.Store(r.Outcome.Status.String() + " " + r.Outcome.Desc)
		}
	}
}

// fastListener accepts and serves connections with as little work as
// possible: close at once, or answer one HTTP request.
func fastListener(b *testing.B, http bool) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !http {
				c.Close()
				continue
			}
			go func() {
				buf := make([]byte, 512)
				c.Read(buf)
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
				c.Close()
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// nginxListener starts the installed nginx on a free loopback port,
// answering 200 to every request, so that the listener's CPU is not
// counted in the process under measure. It returns 0 when nginx is absent.
func nginxListener(b *testing.B) int {
	path, err := exec.LookPath("nginx")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
			return 0
		}
		path = "/usr/sbin/nginx"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := b.TempDir()
	conf := fmt.Sprintf(`daemon off; master_process off; worker_processes 1; pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path %[1]s; proxy_temp_path %[1]s; fastcgi_temp_path %[1]s;
  uwsgi_temp_path %[1]s; scgi_temp_path %[1]s;
  server { listen 127.0.0.1:%[2]d backlog=8192; location / { return 200; } }
}
`, dir, port)
	if err := os.WriteFile(dir+"/nginx.conf", []byte(conf), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(path, "-c", dir+"/nginx.conf", "-p", dir)
	if err := cmd.Start(); err != nil {
		return 0
	}
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return port
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}

// benchFleet runs n checks every inter for dur and reports the CPU time the
// whole process (checks and the in-process listener) used per second.
func benchFleet(b *testing.B, n int, inter, dur time.Duration, rules *Rules, http bool) {
	port := nginxListener(b)
	if port == 0 {
		port = fastListener(b, http)
	} else {
		b.Log("listener: nginx (separate process)")
	}
	rep := &countRep{}
	var servers []*Server
	for i := 0; i < n; i++ {
		servers = append(servers, NewServer(ServerConfig{Addr: "127.0.0.1", Port: port,
			Timeouts: Timeouts{Connect: time.Second, Check: time.Second},
			Health:   &Settings{Rules: rules, Inter: inter}}, rep))
	}
	sc := NewScheduler(0, 0)
	b.ResetTimer()
	u0, s0 := cpuTime()
	t0 := time.Now()
	sc.Start(servers)
	time.Sleep(dur)
	sc.Stop()
	u1, s1 := cpuTime()
	t1 := time.Now()
	b.StopTimer()
	secs := t1.Sub(t0).Seconds()
	b.ReportMetric((u1-u0+s1-s0).Seconds()/secs, "cpu-s/s")
	b.ReportMetric((u1-u0).Seconds()/secs, "user-s/s")
	b.ReportMetric(float64(rep.n.Load())/secs, "probes/s")
	b.ReportMetric(float64(rep.failed.Load())/secs, "failed/s")
	if f := rep.first.Load(); f != nil {
		b.Logf("first failure: %v", f)
	}
}

// go test -run XXX -bench Fleet -benchtime=1x ./core/check
func BenchmarkFleet1000TCP(b *testing.B) {
	for i := 0; i < b.N; i++ {
		benchFleet(b, 1000, 100*time.Millisecond, 3*time.Second, &Rules{Set: DefaultRuleset()}, false)
	}
}

func BenchmarkFleet1000HTTP(b *testing.B) {
	nb := NewBackend("bench", false)
	nb.Option([]string{"option", "httpchk", "GET", "/health"})
	rules, _, _ := nb.Finalize("backend")
	for i := 0; i < b.N; i++ {
		benchFleet(b, 1000, 100*time.Millisecond, 3*time.Second, rules, true)
	}
}

// BenchmarkProbeTCP is the cost of one connect-only probe.
func BenchmarkProbeTCP(b *testing.B) {
	port := fastListener(b, false)
	rules := &Rules{Set: DefaultRuleset()}
	tg := &Target{Addr: "127.0.0.1", Port: port}
	to := Timeouts{Inter: time.Second}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if o := Run(context.Background(), rules, tg, to); o.Status != StatusL4OK {
			b.Fatal(o)
		}
	}
}
