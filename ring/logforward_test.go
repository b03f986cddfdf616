package ring

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestParseMessage(t *testing.T) {
	cases := []struct {
		in                                   string
		fac, lvl                             int
		time, host, tag, pid, msgid, sd, msg string
	}{
		{"<13>Nov 29 10:00:00 myhost app[12]: tcp lf-framed rfc3164", 1, 5, "Nov 29 10:00:00", "myhost", "app", "12", "", "", "tcp lf-framed rfc3164"},
		{"<165>1 2003-10-11T22:14:15.003Z host2 app2 77 ID47 - tcp octet-counted rfc5424", 20, 5, "2003-10-11T22:14:15.003Z", "host2", "app2", "77", "ID47", "", "tcp octet-counted rfc5424"},
		{"<14>no header at all, crlf", 1, 6, "", "", "", "", "", "", "no header at all, crlf"},
		{"<38>1 2024-01-02T03:04:05+01:00 - - - - - udp rfc5424 nil fields", 4, 6, "2024-01-02T03:04:05+01:00", "", "", "", "", "", "udp rfc5424 nil fields"},
		{`<165>1 - h a p m [ex@1 k="v\]x"][y@2 a="b"] body`, 20, 5, "-", "h", "a", "p", "m", `[ex@1 k="v\]x"][y@2 a="b"]`, "body"},
		{"<13>Jan  1 00:00:00 host tag: m", 1, 5, "Jan  1 00:00:00", "host", "tag", "", "", "", "m"},
		{"<13>Jan  1 00:00:00 host no tag here", 1, 5, "Jan  1 00:00:00", "host", "", "", "", "", "no tag here"},
		{"<13>Jan  1 00:00:00 host app[12]x: m", 1, 5, "Jan  1 00:00:00", "host", "app", "", "", "", "app[12]x: m"},
		{"<13>Jan  1 00:00:00 host", 1, 5, "", "", "", "", "", "", "Jan  1 00:00:00 host"},
		{"<13>1 2003-10-11T22:14:15.003Z host", 1, 5, "", "", "", "", "", "", "1 2003-10-11T22:14:15.003Z host"},
		{"<13>1 2003-10-11T22:14:15.0x3Z h a p m - x", 1, 5, "", "", "", "", "", "", "1 2003-10-11T22:14:15.0x3Z h a p m - x"},
		{"no pri", -1, -1, "", "", "", "", "", "", "no pri"},
		{"<1234>x", -1, -1, "", "", "", "", "", "", "<1234>x"},
		{"<192>x", -1, -1, "", "", "", "", "", "", "<192>x"},
		{"<>x", -1, -1, "", "", "", "", "", "", "<>x"},
	}
	for _, c := range cases {
		var m Meta
		msg := ParseMessage([]byte(c.in), &m)
		got := []string{string(m.RawTime), string(m.Host), string(m.Tag), string(m.PID), string(m.MsgID), string(m.SD), string(msg)}
		want := []string{c.time, c.host, c.tag, c.pid, c.msgid, c.sd, c.msg}
		if m.Facility != c.fac || m.Level != c.lvl || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%q:\n got %d.%d %q\nwant %d.%d %q", c.in, m.Facility, m.Level, got, c.fac, c.lvl, want)
		}
	}
}

func TestFrameReader(t *testing.T) {
	in := "<13>lf one\n24 <14>octet counted, no LF<15>crlf\r\n4 a\nbc<1>last\n"
	fr := NewFrameReader(strings.NewReader(in), 0)
	var got []string
	for {
		m, err := fr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, string(m))
	}
	want := []string{"<13>lf one", "<14>octet counted, no LF", "<15>crlf", "a\nbc", "<1>last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q", got)
	}
	for _, bad := range []struct {
		in   string
		want error
	}{
		{"0 x", ErrFraming},
		{"x", ErrFraming},
		{"12x abc", ErrFraming},
		{"99999 abc", ErrFrameTooLarge},
		{"<1>" + strings.Repeat("a", DefaultMaxFrame+10) + "\n", ErrFrameTooLarge},
		{"<1>no end", io.ErrUnexpectedEOF},
		{"10 short", io.ErrUnexpectedEOF},
	} {
		_, err := NewFrameReader(strings.NewReader(bad.in), 0).Next()
		if !errors.Is(err, bad.want) {
			t.Errorf("%.20q: err = %v, want %v", bad.in, err, bad.want)
		}
	}
	fr = NewFrameReader(strings.NewReader("12 not counted\n"), 0)
	fr.AssumeLF = true
	if m, err := fr.Next(); err != nil || string(m) != "12 not counted" {
		t.Errorf("assume LF: %q %v", m, err)
	}
}

// The relay of ring.md §4.5: incoming facility and level are kept; a ring
// without `format` is raw; rfc3164 and rfc5424 rings re-emit headers.
func TestLogForwardRelay(t *testing.T) {
	reg := NewRegistry()
	rings := map[string]*Ring{}
	for _, n := range []string{"nofmt", "r3164", "r5424"} {
		rings[n], _ = reg.ParseRing([]string{"ring", n})
	}
	ParseRingKeyword(rings["r3164"], []string{"format", "rfc3164"})
	ParseRingKeyword(rings["r5424"], []string{"format", "rfc5424"})
	lf, err := ParseLogForward([]string{"log-forward", "sylog-loadb"})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"bind 127.0.0.1:0", "dgram-bind 127.0.0.1:0", "maxconn 5", "timeout client 10s",
		"log ring@nofmt local0", "log ring@r3164 local0", "log ring@r5424 local0", "option host keep",
	} {
		if err := lf.ParseKeyword(strings.Fields(line)); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
	}
	if err := lf.Open(reg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}, 2)
	go func() { lf.ServeStream(ctx, ln); done <- struct{}{} }()
	go func() { lf.ServePacket(ctx, pc); done <- struct{}{} }()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "<13>Nov 29 10:00:00 myhost app[12]: tcp lf-framed rfc3164\n")
	oc := "<165>1 2003-10-11T22:14:15.003Z host2 app2 77 ID47 - tcp octet-counted rfc5424"
	io.WriteString(c, itoa(len(oc))+" "+oc)
	io.WriteString(c, "<14>no header at all, crlf\r\n")
	c.Close()
	waitFor(t, func() bool { return lf.Received() == 3 })
	u, _ := net.Dial("udp", pc.LocalAddr().String())
	io.WriteString(u, "<38>1 2024-01-02T03:04:05+01:00 - - - - - udp rfc5424 nil fields")
	u.Close()
	waitFor(t, func() bool { return lf.Received() == 4 })

	want := map[string][]string{
		"nofmt": {"tcp lf-framed rfc3164", "tcp octet-counted rfc5424", "no header at all, crlf", "udp rfc5424 nil fields"},
		"r3164": {"<13>Nov 29 10:00:00 myhost app[12]: tcp lf-framed rfc3164",
			"<165>Oct 11 22:14:15 host2 app2[77]: tcp octet-counted rfc5424",
			"<14>* localhost no header at all, crlf",
			"<38>Jan  2 03:04:05 localhost udp rfc5424 nil fields"},
		"r5424": {"<13>1 *-11-29T10:00:00-00:00 myhost app 12 - - tcp lf-framed rfc3164",
			"<165>1 2003-10-11T22:14:15.003Z host2 app2 77 ID47 - tcp octet-counted rfc5424",
			"<14>1 * - - - - - no header at all, crlf",
			"<38>1 2024-01-02T03:04:05+01:00 - - - - - udp rfc5424 nil fields"},
	}
	// Received counts a message before it reaches the rings: wait for
	// the rings themselves.
	waitFor(t, func() bool {
		for name, lines := range want {
			if len(events(rings[name])) < len(lines) {
				return false
			}
		}
		return true
	})
	for name, lines := range want {
		got := events(rings[name])
		if len(got) != len(lines) {
			t.Fatalf("%s: got %q", name, got)
		}
		for i, w := range lines {
			if !globMatch(w, got[i]) {
				t.Errorf("%s[%d]:\n got %q\nwant %q", name, i, got[i], w)
			}
		}
	}
	// A stream with bad framing is closed and counted.
	c, _ = net.Dial("tcp", ln.Addr().String())
	io.WriteString(c, "garbage\n")
	buf := make([]byte, 1)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(buf); err != io.EOF {
		t.Errorf("bad framing: read %v, want EOF", err)
	}
	c.Close()
	if lf.FailedRequests() != 1 {
		t.Errorf("failed requests = %d", lf.FailedRequests())
	}
	cancel()
	<-done
	<-done
}

// globMatch matches pattern against s, "*" standing for any run of bytes.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1:] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return s == ""
}

func TestLogForwardHostOptions(t *testing.T) {
	src := AddrText(netip.MustParseAddr("192.0.2.7"))
	for _, c := range []struct {
		opt  string
		in   string
		want string
	}{
		{"fill", "<14>1 - - a - - - m", "<14>1 - 192.0.2.7 a - - - m"},
		{"fill", "<14>1 - h a - - - m", "<14>1 - h a - - - m"},
		{"replace", "<14>1 - h a - - - m", "<14>1 - 192.0.2.7 a - - - m"},
		{"append", "<14>1 - h a - - - m", "<14>1 - h,192.0.2.7 a - - - m"},
		{"keep", "<14>1 - - a - - - m", "<14>1 - - a - - - m"},
	} {
		reg := NewRegistry()
		r, _ := reg.ParseRing([]string{"ring", "r"})
		r.Format = FormatRFC5424
		lf, _ := ParseLogForward([]string{"log-forward", "f"})
		lf.ParseKeyword([]string{"log", "ring@r", "local0"})
		lf.ParseKeyword([]string{"option", "host", c.opt})
		lf.Open(reg)
		lf.Process(src, []byte(c.in))
		if got := events(r); len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: got %q want %q", c.opt, got, c.want)
		}
	}
}

func TestLogForwardKeywords(t *testing.T) {
	lf, _ := ParseLogForward([]string{"log-forward", "f"})
	for _, c := range []struct{ line, want string }{
		{"bind 127.0.0.1", "missing port specification in '127.0.0.1'"},
		{"maxconn x", "'maxconn' expects an integer argument."},
		{"option host bogus", "'option host' requires one of 'replace', 'fill', 'keep', 'append'."},
		{"frobnicate", "unknown keyword 'frobnicate' in log-forward section"},
		{"log global", "'log global' is not supported in a log-forward section"},
	} {
		if err := lf.ParseKeyword(strings.Fields(c.line)); err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %q", c.line, err, c.want)
		}
	}
	if _, err := ParseLogForward([]string{"log-forward"}); err == nil {
		t.Error("nameless section accepted")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func FuzzLogForward(f *testing.F) {
	for _, s := range []string{
		"<13>Nov 29 10:00:00 myhost app[12]: tcp lf-framed rfc3164\n",
		"79 <165>1 2003-10-11T22:14:15.003Z host2 app2 77 ID47 - tcp octet-counted rfc5424",
		"<14>no header\r\n",
		`<165>1 - h a p m [ex@1 k="v\]x"] body` + "\n",
		"<13>1 2003-10-11T22:14:15.1+", "<1>Jan  1 00:00:00 h [1]: x\n",
	} {
		f.Add([]byte(s))
	}
	reg := NewRegistry()
	r, _ := reg.ParseRing([]string{"ring", "r"})
	r.Format = FormatUnspec
	l, _ := ParseLog([]string{"log", "ring@r", "local0"}, false)
	l.Open(reg)
	lf := &LogForward{Loggers: Loggers{l}}
	f.Fuzz(func(t *testing.T, data []byte) {
		// As one datagram.
		lf.Process([]byte("127.0.0.1"), data)
		var m Meta
		msg := ParseMessage(data, &m)
		if len(msg) > len(data) {
			t.Fatalf("body longer than input")
		}
		for _, f := range []Format{FormatUnspec, FormatRFC3164, FormatRFC5424, FormatLocal, FormatISO, FormatTimed} {
			AppendLine(nil, f, &m, msg, 0)
		}
		// As a stream.
		fr := NewFrameReader(bytes.NewReader(data), 256)
		for i := 0; i < len(data)+1; i++ {
			m, err := fr.Next()
			if err != nil {
				break
			}
			if len(m) > 256 {
				t.Fatalf("frame of %d bytes over the limit", len(m))
			}
			lf.Process(nil, m)
		}
	})
}

func FuzzParseLog(f *testing.F) {
	for _, s := range []string{
		"log 127.0.0.1:514 len 200 format rfc5424 sample 1,3-4:5 local0 info err",
		"log ring@x local0", "log tcp@[::1]:601 daemon", "log fd@1 user", "log global",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		l, err := ParseLog(args, false)
		if err == nil && l == nil {
			t.Fatal("nil logger without error")
		}
		if err == nil && !l.Inherit && (l.Len < 80 || l.Len > 65535 || l.Facility < 0 || l.Facility > 23) {
			t.Fatalf("bad logger %+v", l)
		}
		ParseTarget(line)
		if s, err := ParseSample(line); err == nil {
			for i := 0; i < 5; i++ {
				s.take()
			}
		}
		r := New("f", 1024)
		if len(args) > 0 && args[0] != "backing-file" { // no files from fuzz input
			ParseRingKeyword(r, args)
		}
		ParseServer(args)
	})
}

// Relaying a datagram costs no allocation.
func TestLogForwardProcessAllocs(t *testing.T) {
	reg := NewRegistry()
	r, _ := reg.ParseRing([]string{"ring", "r"})
	r.Format = FormatRFC5424
	lf, _ := ParseLogForward([]string{"log-forward", "f"})
	lf.ParseKeyword([]string{"log", "ring@r", "local0"})
	lf.Open(reg)
	src := AddrText(netip.MustParseAddr("127.0.0.1"))
	msg := []byte(`<134>1 2026-11-29T20:48:56.256184+00:00 - haproxy 4242 - - 127.0.0.1:41234 [29/Nov/2026:20:48:56.256] fe be/s1`)
	if n := testing.AllocsPerRun(1000, func() { lf.Process(src, msg) }); n != 0 {
		t.Fatalf("%v allocations per message", n)
	}
}

// A burst of datagrams, some queued before the relay reads (so that one
// receive returns several), from an IPv4 and an IPv6 sender: every
// message is relayed once, in the order each sender sent them, with its
// own sender's address filled in as hostname, and messages of different
// lengths do not bleed into each other.
func TestLogForwardDatagramBurst(t *testing.T) {
	for _, network := range []string{"udp4", "udp6"} {
		t.Run(network, func(t *testing.T) {
			host := "127.0.0.1"
			if network == "udp6" {
				host = "::1"
			}
			pc, err := net.ListenPacket(network, net.JoinHostPort(host, "0"))
			if err != nil {
				t.Skip(err)
			}
			reg := NewRegistry()
			r, _ := reg.ParseRing([]string{"ring", "r"})
			r.Format = FormatRFC5424
			r.Resize(1 << 20)
			lf, _ := ParseLogForward([]string{"log-forward", "f"})
			lf.ParseKeyword([]string{"log", "ring@r", "local0"})
			if err := lf.Open(reg); err != nil {
				t.Fatal(err)
			}
			u, err := net.Dial(network, pc.LocalAddr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			const n = 300
			msg := func(i int) string {
				return "<14>1 - - app - - - message " + itoa(i) + " " + strings.Repeat("x", i%37)
			}
			// The first third waits in the socket buffer before the
			// relay starts reading.
			for i := range n / 3 {
				io.WriteString(u, msg(i))
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { lf.ServePacket(ctx, pc); close(done) }()
			// The rest in bursts, never more queued than the socket
			// buffer holds (about 250 small datagrams by default).
			for i := n / 3; i < n; i++ {
				if i%50 == 0 {
					waitFor(t, func() bool { return lf.Received() >= uint64(i-100) })
				}
				io.WriteString(u, msg(i))
			}
			waitFor(t, func() bool { return lf.Received() == n })
			cancel()
			<-done
			got := events(r)
			if len(got) != n {
				t.Fatalf("got %d events, want %d", len(got), n)
			}
			for i, ev := range got {
				want := "<14>1 - " + host + " app - - - " + msg(i)[len("<14>1 - - app - - - "):]
				if ev != want {
					t.Fatalf("event %d:\n got %q\nwant %q", i, ev, want)
				}
			}
		})
	}
}
