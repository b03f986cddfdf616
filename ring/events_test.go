package ring

import (
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestShowEventsList(t *testing.T) {
	reg := NewRegistry()
	r, _ := reg.ParseRing([]string{"ring", "myring"})
	ParseRingKeyword(r, []string{"description", "my test ring"})
	var b bytes.Buffer
	if err := reg.ShowEvents(&b, nil, nil); err != nil {
		t.Fatal(err)
	}
	want := "Supported events sinks are listed below. Add -0(zero), -w(wait), -n(new). Any key to stop.\n" +
		"    stdout     : type=fd, 0 dropped, standard output (fd#1)\n" +
		"    stderr     : type=fd, 0 dropped, standard output (fd#2)\n" +
		"    buf0       : type=buffer, 0 dropped, in-memory ring buffer\n" +
		"    myring     : type=buffer, 0 dropped, my test ring\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	// Held events make new ones drop; the list shows the count.
	rd, _ := r.Attach(false)
	defer rd.Close()
	for i := 0; i < 2000; i++ {
		r.Write([]byte("0123456789"))
	}
	b.Reset()
	reg.WriteList(&b)
	if !strings.Contains(b.String(), "    myring     : type=buffer, 511 dropped, my test ring\n") {
		t.Fatalf("list after drops:\n%s", b.String())
	}
}

func TestShowEventsErrors(t *testing.T) {
	reg := NewRegistry()
	for _, c := range []struct {
		args []string
		want error
	}{
		{[]string{"nope"}, ErrNoSuchSink},
		{[]string{"stdout"}, ErrNothingToReport},
		{[]string{"buf0", "-x"}, ErrUnknownOption},
	} {
		var b bytes.Buffer
		if err := reg.ShowEvents(&b, c.args, nil); err != c.want || b.Len() != 0 {
			t.Errorf("%v: err %v output %q", c.args, err, b.String())
		}
	}
}

func TestShowEventsDump(t *testing.T) {
	reg := NewRegistry()
	r, _ := reg.ParseRing([]string{"ring", "r"})
	r.Format = FormatRFC5424
	m := &Meta{Facility: 16, Level: LevelNotice, Tag: []byte("haproxy"), PID: []byte("4929"),
		Time: time.Date(2026, 11, 29, 20, 47, 6, 554023000, time.UTC)}
	r.Log(m, FormatUnspec, 0, []byte("Server be1/s1 is UP"))
	r.Write([]byte("second"))
	var b bytes.Buffer
	if err := reg.ShowEvents(&b, []string{"r"}, nil); err != nil {
		t.Fatal(err)
	}
	if want := "<133>1 2026-11-29T20:47:06.554023+00:00 - haproxy 4929 - - Server be1/s1 is UP\nsecond\n"; b.String() != want {
		t.Fatalf("dump %q", b.String())
	}
	b.Reset()
	reg.ShowEvents(&b, []string{"r", "-0"}, nil)
	if !strings.HasSuffix(b.String(), "second\x00") {
		t.Fatalf("-0 dump %q", b.String())
	}
	b.Reset()
	reg.ShowEvents(&b, []string{"r", "-n"}, nil)
	if b.Len() != 0 {
		t.Fatalf("-n dump %q", b.String())
	}
}

// `show events <ring> -nw` over a real socket: only new events stream,
// until the client writes something.
func TestShowEventsWait(t *testing.T) {
	reg := NewRegistry()
	r, _ := reg.ParseRing([]string{"ring", "r"})
	r.Write([]byte("old"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan error, 1)
	var attached sync.WaitGroup
	attached.Add(1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		// The client's first input stops the stream, as on the CLI.
		stop := make(chan struct{})
		go func() {
			var one [1]byte
			c.Read(one[:])
			close(stop)
		}()
		attached.Done()
		served <- reg.ShowEvents(c, []string{"r", "-nw"}, stop)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	attached.Wait()
	// The reader attaches at the end when ShowEvents starts; wait for it.
	waitFor(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.readers) == 1 })
	r.Write([]byte("new1"))
	r.Write([]byte("new2"))
	got := make([]byte, 0, 64)
	buf := make([]byte, 64)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for len(got) < len("new1\nnew2\n") {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("read: %v after %q", err, got)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != "new1\nnew2\n" {
		t.Fatalf("streamed %q", got)
	}
	r.Write([]byte("new3"))
	n, _ := io.ReadAtLeast(c, buf, 5)
	if string(buf[:n]) != "new3\n" {
		t.Fatalf("third %q", buf[:n])
	}
	c.Write([]byte("\n"))
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("show events -w did not stop on client input")
	}
	waitFor(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.readers) == 0 })
}

// Events larger than one output batch are shown whole.
func TestShowEventsLargeEvent(t *testing.T) {
	r := New("big", 1<<20)
	big := strings.Repeat("b", 40000)
	r.Write([]byte("small"))
	r.Write([]byte(big))
	r.Write([]byte("after"))
	var b bytes.Buffer
	if err := r.Dump(&b, false, false, FrameLF, nil); err != nil {
		t.Fatal(err)
	}
	if b.String() != "small\n"+big+"\nafter\n" {
		t.Fatalf("dump of %d bytes", b.Len())
	}
}
