// Command ringbench is the load and the sink of scripts/bench-ring.sh, the
// side-by-side ring benchmark of goha and HAProxy. The script starts the
// proxies; this program only produces syslog datagrams and counts what a
// ring's forwarding server delivers.
//
//	ringbench sink -listen 127.0.0.1:P -proto legacy|octet-count -status FILE [-prefix S] [-expect S] [-seq]
//	ringbench send -to 127.0.0.1:P -rate R -dur D [-start N]
//	ringbench udpsink -listen 127.0.0.1:P -status FILE
//
// The sink accepts the proxy's forwarding connections, splits the stream
// with the given framing and checks every event: it must start with
// -prefix and contain -expect, and with -seq its "seq=N" suffixes must
// increase. Every 50 ms it rewrites FILE with one line:
//
//	events=E bytes=B bad=X disorder=Y conns=C
//
// udpsink receives datagrams and drops them, counting them in FILE
// (events=E bytes=B), at one system call per datagram under load: socat,
// the obvious alternative, makes three (select, recv and the write to
// /dev/null), and on a small machine shared with the proxy that cost lands
// in the proxy's numbers.
//
// send offers rfc5424 datagrams with increasing "seq=N" suffixes at the
// given rate and prints "sent=N" when done.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: ringbench sink|send [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "sink":
		err = sink(os.Args[2:])
	case "send":
		err = send(os.Args[2:])
	case "udpsink":
		err = udpSink(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ringbench:", err)
		os.Exit(1)
	}
}

// counters are the sink's totals over every connection.
type counters struct {
	events, bytes, bad, disorder, conns atomic.Int64
}

func sink(args []string) error {
	fs := flag.NewFlagSet("sink", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "TCP address to listen on")
	proto := fs.String("proto", "legacy", "framing: legacy or octet-count")
	status := fs.String("status", "", "status file, rewritten every 50 ms")
	prefix := fs.String("prefix", "", "every event starts with this")
	expect := fs.String("expect", "", "every event contains this")
	seq := fs.Bool("seq", false, "events end with seq=N, N increasing")
	_ = fs.Parse(args)
	if *status == "" {
		return errors.New("sink: -status is required")
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	var c counters
	// A reconnection continues the same stream, so the order check spans
	// connections.
	var mu sync.Mutex // guards last
	last := int64(-1)
	check := func(ev []byte) {
		ok := bytes.HasPrefix(ev, []byte(*prefix)) && bytes.Contains(ev, []byte(*expect))
		if ok && *seq {
			i := bytes.LastIndex(ev, []byte("seq="))
			n, err := strconv.ParseInt(string(ev[i+4:]), 10, 64)
			if i < 0 || err != nil {
				ok = false
			} else {
				mu.Lock()
				if n <= last {
					c.disorder.Add(1)
				} else {
					last = n
				}
				mu.Unlock()
			}
		}
		if !ok {
			c.bad.Add(1)
		}
		c.events.Add(1)
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			go func() {
				defer conn.Close()
				readFrames(bufio.NewReaderSize(&countReader{conn, &c.bytes}, 65536), *proto == "octet-count", check, &c)
			}()
		}
	}()
	tmp := *status + ".tmp"
	for {
		line := fmt.Sprintf("events=%d bytes=%d bad=%d disorder=%d conns=%d\n",
			c.events.Load(), c.bytes.Load(), c.bad.Load(), c.disorder.Load(), c.conns.Load())
		if err := os.WriteFile(tmp, []byte(line), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, *status); err != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readFrames splits one connection's stream into events until it ends. A
// stream that cannot be framed counts one bad event and is abandoned.
func readFrames(br *bufio.Reader, octet bool, check func([]byte), c *counters) {
	buf := make([]byte, 65536)
	for {
		if !octet {
			line, err := br.ReadSlice('\n')
			if err != nil {
				if len(line) > 0 {
					c.bad.Add(1)
				}
				return
			}
			check(line[:len(line)-1])
			continue
		}
		n := 0
		for digits := 0; ; digits++ {
			b, err := br.ReadByte()
			if err != nil {
				if digits > 0 {
					c.bad.Add(1)
				}
				return
			}
			if b == ' ' && digits > 0 {
				break
			}
			if b < '0' || b > '9' || digits > 5 {
				c.bad.Add(1)
				return
			}
			n = n*10 + int(b-'0')
		}
		if n > len(buf) {
			c.bad.Add(1)
			return
		}
		if _, err := io.ReadFull(br, buf[:n]); err != nil {
			c.bad.Add(1)
			return
		}
		check(buf[:n])
	}
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

func udpSink(args []string) error {
	fs := flag.NewFlagSet("udpsink", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "UDP address to listen on")
	status := fs.String("status", "", "status file, rewritten every 50 ms")
	_ = fs.Parse(args)
	if *status == "" {
		return errors.New("udpsink: -status is required")
	}
	pc, err := net.ListenPacket("udp", *listen)
	if err != nil {
		return err
	}
	u := pc.(*net.UDPConn)
	u.SetReadBuffer(4 << 20)
	var events, bytes atomic.Int64
	go func() {
		buf := make([]byte, 65536)
		for {
			n, err := u.Read(buf)
			if err != nil {
				return
			}
			events.Add(1)
			bytes.Add(int64(n))
		}
	}()
	tmp := *status + ".tmp"
	for {
		line := fmt.Sprintf("events=%d bytes=%d\n", events.Load(), bytes.Load())
		if err := os.WriteFile(tmp, []byte(line), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, *status); err != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The datagram is what an HAProxy would send for one HTTP request in
// rfc5424, so that both relays parse a realistic header.
const datagram = `<134>1 2026-11-29T20:48:56.256184+00:00 gw1 haproxy 4242 - - 127.0.0.1:41234 [29/Nov/2026:20:48:56.256] fe be/s1 0/0/0/1/1 200 120 - - ---- 1/1/0/0/0 0/0 "GET /index.html HTTP/1.1" seq=`

func send(args []string) error {
	fs := flag.NewFlagSet("send", flag.ExitOnError)
	to := fs.String("to", "", "UDP address of the relay")
	rate := fs.Int("rate", 50000, "datagrams per second")
	dur := fs.Duration("dur", 3*time.Second, "how long to send")
	start := fs.Int64("start", 0, "first sequence number")
	_ = fs.Parse(args)
	u, err := net.Dial("udp", *to)
	if err != nil {
		return err
	}
	defer u.Close()
	// Datagrams go out in small bursts, each burst on a schedule, so that
	// the offered rate holds whatever the sleep granularity.
	const burst = 10
	interval := time.Duration(float64(time.Second) * burst / float64(*rate))
	msg := []byte(datagram)
	seq := *start
	t0 := time.Now()
	next := t0
	for time.Since(t0) < *dur {
		for i := 0; i < burst; i++ {
			b := strconv.AppendInt(msg[:len(datagram)], seq, 10)
			if _, err := u.Write(b); err != nil && !errors.Is(err, syscall.ECONNREFUSED) {
				return err
			}
			seq++
		}
		next = next.Add(interval)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
	}
	fmt.Printf("sent=%d secs=%.3f\n", seq-*start, time.Since(t0).Seconds())
	return nil
}
