// Command relaybench measures the same syslog path in HAProxy and in goha:
// UDP datagrams into a `log-forward` section, `log ring@r`, and the ring's
// TCP server (legacy or octet-count framing) into a sink that counts the
// events it receives. The relay runs as its own process (haproxy, or this
// program re-executed with -relay) so that its CPU time can be read from
// /proc and compared per event.
//
//	go run ./ring/bench/relaybench -impl haproxy -proto octet-count
//	go run ./ring/bench/relaybench -impl goha -proto octet-count
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"goha/ring"
)

func main() {
	impl := flag.String("impl", "goha", "relay under test: goha or haproxy")
	proto := flag.String("proto", "legacy", "log-proto of the ring server: legacy or octet-count")
	n := flag.Int("n", 200000, "events to send")
	rate := flag.Int("rate", 50000, "events per second offered")
	haproxy := flag.String("haproxy", "/usr/sbin/haproxy", "haproxy binary")
	relay := flag.Bool("relay", false, "internal: run the goha relay (args: udp-addr sink-addr proto)")
	flag.Parse()
	if *relay {
		runRelay(flag.Args())
		return
	}
	if err := run(*impl, *proto, *n, *rate, *haproxy); err != nil {
		fmt.Fprintln(os.Stderr, "relaybench:", err)
		os.Exit(1)
	}
}

// runRelay is the goha side: one log-forward with a UDP bind relaying into
// ring r, forwarded to the sink. GOMAXPROCS is left to the caller.
func runRelay(args []string) {
	udpAddr, sinkAddr, proto := args[0], args[1], args[2]
	if path := os.Getenv("RELAYBENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	reg := ring.NewRegistry()
	r, err := reg.ParseRing([]string{"ring", "r"})
	check(err)
	for _, line := range [][]string{
		{"format", "rfc5424"}, {"size", "1048576"}, {"timeout", "connect", "5s"}, {"timeout", "server", "30s"},
		{"server", "sink", sinkAddr, "log-proto", proto},
	} {
		check(ring.ParseRingKeyword(r, line))
	}
	lf, err := ring.ParseLogForward([]string{"log-forward", "lf"})
	check(err)
	check(lf.ParseKeyword([]string{"dgram-bind", udpAddr}))
	check(lf.ParseKeyword([]string{"log", "ring@r", "local0"}))
	check(lf.Open(reg))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	reg.Start(ctx)
	check(lf.ListenAndServe(ctx))
	reg.Wait()
	fmt.Fprintf(os.Stderr, "goha relay: received=%d ring-dropped=%d\n", lf.Received(), r.TotalDropped())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
}

func freePort() (int, error) {
	for p := 21000; p < 32000; p += 7 {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		pc, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p))
		ln.Close()
		if err != nil {
			continue
		}
		pc.Close()
		return p, nil
	}
	return 0, errors.New("no free port")
}

func run(impl, proto string, n, rate int, haproxy string) error {
	sink, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer sink.Close()
	var events, bytes atomic.Int64
	go func() {
		for {
			c, err := sink.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				cr := &countReader{r: c, n: &bytes}
				fr := ring.NewFrameReader(cr, 65536)
				if proto == "legacy" {
					fr.AssumeLF = true
				}
				for {
					if _, err := fr.Next(); err != nil {
						return
					}
					events.Add(1)
				}
			}()
		}
	}()
	port, err := freePort()
	if err != nil {
		return err
	}
	udpAddr := "127.0.0.1:" + strconv.Itoa(port)

	var cmd *exec.Cmd
	switch impl {
	case "haproxy":
		dir, err := os.MkdirTemp("", "relaybench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg := fmt.Sprintf(`global
    nbthread 1
defaults
    timeout connect 5s
    timeout client 30s
    timeout server 30s
ring r
    format rfc5424
    size 1048576
    timeout connect 5s
    timeout server 30s
    server sink %s log-proto %s
log-forward lf
    dgram-bind %s
    log ring@r local0
`, sink.Addr(), proto, udpAddr)
		path := filepath.Join(dir, "haproxy.cfg")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			return err
		}
		cmd = exec.Command(haproxy, "-db", "-f", path)
	case "goha":
		self, err := os.Executable()
		if err != nil {
			return err
		}
		cmd = exec.Command(self, "-relay", udpAddr, sink.Addr().String(), proto)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	default:
		return fmt.Errorf("unknown -impl %q", impl)
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()

	// Wait for the relay's ring server connection, then a little more for
	// the UDP bind (both are set up at start).
	deadline := time.Now().Add(10 * time.Second)
	u, err := net.Dial("udp", udpAddr)
	if err != nil {
		return err
	}
	defer u.Close()
	for events.Load() == 0 {
		if time.Now().After(deadline) {
			return errors.New("relay did not deliver the warm-up event")
		}
		io.WriteString(u, "<134>1 2026-11-29T20:48:56.256184+00:00 host app 123 - - warm-up")
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	base := events.Load()
	cpu0, err := procCPU(cmd.Process.Pid)
	if err != nil {
		return err
	}
	msg := []byte(`<134>1 2026-11-29T20:48:56.256184+00:00 gw1 haproxy 4242 - - 127.0.0.1:41234 [29/Nov/2026:20:48:56.256] fe be/s1 0/0/0/1/1 200 120 - - ---- 1/1/0/0/0 0/0 "GET /index.html HTTP/1.1"`)
	start := time.Now()
	const batch = 10
	interval := time.Duration(float64(time.Second) * batch / float64(rate))
	next := start
	for sent := 0; sent < n; sent += batch {
		for i := 0; i < batch; i++ {
			u.Write(msg)
		}
		next = next.Add(interval)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
	}
	sendDone := time.Since(start)
	// Wait until the sink stops growing.
	last, stable := events.Load(), 0
	for stable < 5 {
		time.Sleep(100 * time.Millisecond)
		if cur := events.Load(); cur == last {
			stable++
		} else {
			last, stable = cur, 0
		}
	}
	cpu1, err := procCPU(cmd.Process.Pid)
	if err != nil {
		return err
	}
	got := last - base
	cpu := cpu1 - cpu0
	fmt.Printf("impl=%s proto=%s go=%s sent=%d delivered=%d (%.1f%%) offered=%.0f/s send-time=%v relay-cpu=%v cpu-per-event=%.2fus events-per-cpu-second=%.0f\n",
		impl, proto, runtime.Version(), n, got, 100*float64(got)/float64(n), float64(n)/sendDone.Seconds(), sendDone.Round(time.Millisecond),
		cpu.Round(time.Millisecond), float64(cpu.Microseconds())/float64(max(got, 1)), float64(got)/cpu.Seconds())
	return nil
}

type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// procCPU returns the user+system CPU time a process used so far.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / hz, nil
}
