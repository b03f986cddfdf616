package ring

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func readDatagram(t *testing.T, pc net.PacketConn) string {
	t.Helper()
	buf := make([]byte, 4096)
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, err := pc.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

func TestUDPAndUnixTargets(t *testing.T) {
	reg := NewRegistry()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	sock := filepath.Join(t.TempDir(), "log.sock")
	ux, err := net.ListenPacket("unixgram", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ux.Close()
	m := &Meta{Facility: -1, Level: LevelInfo, Tag: []byte("haproxy"), PID: []byte("7"),
		Time: time.Date(2026, 11, 29, 20, 48, 56, 0, time.UTC)}
	for _, c := range []struct {
		words []string
		pc    net.PacketConn
		want  string
	}{
		{[]string{pc.LocalAddr().String(), "local0"}, pc, "<134>Nov 29 20:48:56 haproxy[7]: hello\n"},
		{[]string{"udp@" + pc.LocalAddr().String(), "len", "80", "format", "short", "local0"}, pc, "<6>hello\n"},
		{[]string{sock, "format", "priority", "daemon"}, ux, "<30>hello\n"},
		{[]string{"unix@" + sock, "format", "raw", "daemon"}, ux, "hello\n"},
	} {
		l, err := ParseLogArgs(c.words, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Open(reg); err != nil {
			t.Fatal(err)
		}
		l.Send(m, []byte("hello"))
		if got := readDatagram(t, c.pc); got != c.want {
			t.Errorf("%v: got %q want %q", c.words, got, c.want)
		}
		l.Close()
	}
	// The datagram is cut to len-1 bytes, then gets its LF.
	l, _ := ParseLogArgs([]string{pc.LocalAddr().String(), "len", "80", "format", "raw", "local0"}, true)
	l.Open(reg)
	defer l.Close()
	l.Send(m, []byte(strings.Repeat("x", 200)))
	if got := readDatagram(t, pc); got != strings.Repeat("x", 79)+"\n" {
		t.Errorf("truncated datagram %q", got)
	}
}

// A UNIX datagram target that appears after start is reached once it exists.
func TestUnixTargetLateSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "late.sock")
	l, _ := ParseLogArgs([]string{sock, "format", "raw", "local0"}, true)
	if err := l.Open(NewRegistry()); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Send(&Meta{Level: LevelInfo}, []byte("lost"))
	ux, err := net.ListenPacket("unixgram", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ux.Close()
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 64)
	for {
		l.Send(&Meta{Level: LevelInfo}, []byte("found"))
		ux.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if n, _, err := ux.ReadFrom(buf); err == nil {
			if string(buf[:n]) != "found\n" {
				t.Fatalf("got %q", buf[:n])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("late socket never reached")
		}
	}
}

func TestFDTarget(t *testing.T) {
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	// The logger wraps the descriptor in its own file, which closes it
	// when collected: give it a descriptor of its own and close that
	// here, or the collector would later close whatever socket reuses
	// the number.
	fd, err := syscall.Dup(int(wr.Fd()))
	wr.Close()
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseLogArgs([]string{fmt.Sprintf("fd@%d", fd), "format", "short", "local0"}, true)
	if err != nil {
		t.Fatal(err)
	}
	l.Open(NewRegistry())
	defer l.fd.Close()
	l.Send(&Meta{Level: LevelErr}, []byte("to the pipe"))
	buf := make([]byte, 64)
	n, _ := rd.Read(buf)
	if string(buf[:n]) != "<3>to the pipe\n" {
		t.Fatalf("got %q", buf[:n])
	}
}

// Many writers and readers at once: each reader sees every event once,
// each writer's events in its order.
func TestRingConcurrent(t *testing.T) {
	r := New("c", 1<<20)
	const writers, per, readers = 4, 2000, 3
	var wg sync.WaitGroup
	results := make([][]string, readers)
	rds := make([]*Reader, readers)
	for i := range rds {
		rds[i], _ = r.Attach(false)
	}
	done := make(chan struct{})
	for i := 0; i < readers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				out, n, _ := rds[i].Fill(buf[:0], 4096, FrameLF)
				buf = out
				if n > 0 {
					results[i] = append(results[i], strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")...)
					continue
				}
				if len(results[i]) == writers*per {
					return
				}
				select {
				case <-rds[i].Wake():
				case <-done:
				case <-time.After(10 * time.Millisecond):
				}
			}
		}()
	}
	var ww sync.WaitGroup
	for w := 0; w < writers; w++ {
		ww.Add(1)
		go func() {
			defer ww.Done()
			for i := 0; i < per; i++ {
				if !r.Write([]byte(fmt.Sprintf("w%d-%05d", w, i))) {
					t.Errorf("event dropped")
					return
				}
			}
		}()
	}
	ww.Wait()
	close(done)
	wg.Wait()
	for i, res := range results {
		next := make([]int, writers)
		for _, ev := range res {
			var w, n int
			fmt.Sscanf(ev, "w%d-%d", &w, &n)
			if n != next[w] {
				t.Fatalf("reader %d: %q after %d", i, ev, next[w])
			}
			next[w]++
		}
	}
}
