package ring

import (
	"goha/core/diag"
	"net"
	"strings"
	"testing"
)

func TestParseLog(t *testing.T) {
	cases := []struct {
		line     string
		inGlobal bool
		want     string // substring of the error, or "" for success
		check    func(*Logger) bool
	}{
		{"log 127.0.0.1:514 local0", true, "", func(l *Logger) bool {
			return l.Target.Kind == TargetUDP && l.Target.Addr == "127.0.0.1:514" && l.Facility == 16 &&
				l.Level == LevelDebug && l.MinLevel == 0 && l.Len == 1024 && l.Format == FormatUnspec
		}},
		{"log 10.0.0.1 len 200 format rfc5424 sample 1,3-4:5 daemon info notice", false, "", func(l *Logger) bool {
			return l.Target.Addr == "10.0.0.1:514" && l.Len == 200 && l.Format == FormatRFC5424 &&
				l.Sample.Size == 5 && len(l.Sample.Ranges) == 2 && l.Facility == 3 && l.Level == 6 && l.MinLevel == 5
		}},
		{"log ring@buf local7 err", false, "", func(l *Logger) bool { return l.Target.Kind == TargetRing && l.Target.Ring == "buf" }},
		{"log tcp@127.0.0.1:601 local0", false, "", func(l *Logger) bool {
			return l.Target.Kind == TargetStream && l.Target.Network == "tcp" && l.Target.Addr == "127.0.0.1:601"
		}},
		{"log stdout format raw local0", false, "", func(l *Logger) bool { return l.Target.Kind == TargetFD && l.Target.FD == 1 }},
		{"log stderr local0", false, "", func(l *Logger) bool { return l.Target.Kind == TargetFD && l.Target.FD == 2 }},
		{"log fd@3 local0", false, "", func(l *Logger) bool { return l.Target.FD == 3 }},
		{"log /dev/log local0", false, "", func(l *Logger) bool { return l.Target.Kind == TargetUnixgram && l.Target.Addr == "/dev/log" }},
		{"log unix@/tmp/x.sock local0", false, "", func(l *Logger) bool { return l.Target.Kind == TargetUnixgram && l.Target.Addr == "/tmp/x.sock" }},
		{"log ipv6@::1:514 local0", false, "", func(l *Logger) bool { return l.Target.Network == "udp6" && l.Target.Addr == "[::1]:514" }},
		{"log global", false, "", func(l *Logger) bool { return l.Inherit }},
		{"log global", true, "'global' is not supported for a global syslog server", nil},
		{"log", false, "expects <address> and <facility> or global as arguments", nil},
		{"log 1.2.3.4", true, "expects <address> and <facility>  as arguments", nil},
		{"log 1.2.3.4 len 79 local0", false, "invalid log length '79', must be between 80 and 65535", nil},
		{"log 1.2.3.4 len 65536 local0", false, "invalid log length '65536', must be between 80 and 65535", nil},
		{"log 1.2.3.4 format json local0", false, "unknown log format 'json'", nil},
		{"log 1.2.3.4 sample 1-2 local0", false, "Missing sample size", nil},
		{"log 1.2.3.4 sample 2-1:5 local0", false, "wrong sample range '2-1'", nil},
		{"log 1.2.3.4 sample 1-3,2:5 local0", false, "ranges are overlapping", nil},
		{"log 1.2.3.4 sample :5 local0", false, "no sampling ranges given", nil},
		{"log 1.2.3.4 sample 1:x local0", false, "wrong sample size 'x' for sample range '1'", nil},
		{"log 1.2.3.4 sample 1-6:5 local0", false, "sample size 5 should be greater or equal to 6 the maximum of the high ranges limits", nil},
		{"log 1.2.3.4 locl0", false, "unknown log facility 'locl0'", nil},
		{"log 1.2.3.4 local0 inf", false, "unknown optional log level 'inf'", nil},
		{"log 1.2.3.4 local0 info x", false, "unknown optional minimum log level 'x'", nil},
		{"log 1.2.3.4 local0 info err extra", false, "cannot handle unexpected argument 'extra'", nil},
		{"log 1.2.3.4:99999 local0", false, "invalid port '99999'", nil},
		{"log 1.2.3.4:5x local0", false, "invalid character 'x' in port number '5x' in '1.2.3.4:5x'", nil},
		{"log fd@x local0", false, "file descriptor 'x' is not a valid integer in 'fd@x'", nil},
		{"log foo@bar local0", false, "unknown address family 'foo' in 'foo@bar'", nil},
	}
	for _, c := range cases {
		l, err := ParseLog(strings.Fields(c.line), c.inGlobal)
		if c.want != "" {
			if err == nil || err.Error() != c.want {
				t.Errorf("%q: err = %v, want %q", c.line, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		if c.check != nil && !c.check(l) {
			t.Errorf("%q: parsed %+v", c.line, l)
		}
	}
	if err := ParseNoLog([]string{"no", "log", "x"}); err == nil || err.Error() != "'no log' does not expect arguments" {
		t.Errorf("no log x: %v", err)
	}
}

func TestSampleTakes(t *testing.T) {
	s, err := ParseSample("1,3-4:5")
	if err != nil {
		t.Fatal(err)
	}
	var got []bool
	for i := 0; i < 10; i++ {
		got = append(got, s.take())
	}
	want := []bool{true, false, true, true, false, true, false, true, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sample pattern %v, want %v", got, want)
		}
	}
}

func TestRingSection(t *testing.T) {
	reg := NewRegistry()
	if _, err := reg.ParseRing([]string{"ring"}); err == nil || err.Error() != "missing ring name." {
		t.Errorf("no name: %v", err)
	}
	if _, err := reg.ParseRing([]string{"ring", "a/b"}); err == nil || err.Error() != "invalid ring name 'a/b' (character '/' is not permitted)." {
		t.Errorf("bad name: %v", err)
	}
	if _, err := reg.ParseRing([]string{"ring", "buf0"}); err == nil || err.Error() != "sink named 'buf0' already exists." {
		t.Errorf("dup: %v", err)
	}
	r, err := reg.ParseRing([]string{"ring", "myring"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Format != FormatRaw || r.Description() != "myring" {
		t.Errorf("defaults: format %v desc %q", r.Format, r.Description())
	}
	ok := [][]string{
		{"description", "My local buffer"},
		{"format", "rfc5424"},
		{"maxlen", "1200"},
		{"size", "32764"},
		{"timeout", "connect", "5s"},
		{"timeout", "server", "10s"},
		{"timeout", "queue", "junk"},
		{"server", "mysyslogsrv", "127.0.0.1:6514", "log-proto", "octet-count"},
		{"server", "s2", "127.0.0.1:6515", "check", "inter", "2s"},
	}
	for _, a := range ok {
		if err := ParseRingKeyword(r, a); err != nil {
			t.Errorf("%v: %v", a, err)
		}
	}
	if r.Desc != "My local buffer" || r.Format != FormatRFC5424 || r.MaxLen != 1200 || r.Size() != 32764 ||
		r.TimeoutConnect.Seconds() != 5 || r.TimeoutServer.Seconds() != 10 || len(r.Servers) != 2 ||
		r.Servers[0].Proto != ProtoOctetCount || r.Servers[1].Proto != ProtoLegacy || r.Servers[0].Addr != "127.0.0.1:6514" {
		t.Errorf("ring after section: %+v", r)
	}
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"size", "0"}, "invalid size '0' for new sink buffer."},
		{[]string{"size", "12q"}, "invalid size '12q' for new sink buffer."},
		{[]string{"maxlen", "x"}, "invalid size 'x' for new sink buffer."},
		{[]string{"format", "json"}, "unknown format 'json'."},
		{[]string{"description"}, "missing ring description text."},
		{[]string{"timeout", "connect"}, "'timeout connect' expects <time> as argument."},
		{[]string{"timeout", "server", "5x"}, "unexpected character 'x' in argument to <timeout server>."},
		{[]string{"timeout", "server", "30d"}, "timer overflow in argument <30d> to <timeout server>, maximum value is 2147483647 ms (~24.8 days)."},
		{[]string{"timeout", "server", "10us"}, "timer underflow in argument <10us> to <timeout server>, minimum non-null value is 1 ms."},
		{[]string{"server", "s", "127.0.0.1:1", "log-proto", "rfc5424"}, "'log-proto' expects one of 'legacy' or 'octet-count' but got 'rfc5424'"},
		{[]string{"bogus"}, "unknown statement 'bogus'."},
	}
	for _, b := range bad {
		if err := ParseRingKeyword(r, b.args); err == nil || err.Error() != b.want {
			t.Errorf("%v: err = %v, want %q", b.args, err, b.want)
		}
	}
	if err := ParseRingKeyword(r, []string{"size", "64k"}); err != nil || r.Size() != 65536 {
		t.Errorf("size 64k: %v, %d", err, r.Size())
	}
}

func TestRingSectionSizeWarning(t *testing.T) {
	r := New("w", 1024)
	r.Write([]byte(strings.Repeat("x", 900)))
	err := ParseRingKeyword(r, []string{"size", "100"})
	if _, ok := err.(*diag.Warn); !ok || !strings.Contains(err.Error(), "ignoring new size '100' that is smaller than contents") {
		t.Fatalf("err = %#v", err)
	}
}

func TestLoggerOpen(t *testing.T) {
	reg := NewRegistry()
	l, _ := ParseLog([]string{"log", "ring@later", "local0"}, true)
	if err := l.Open(reg); err == nil || err.Error() != "uses unknown ring named 'later'" {
		t.Errorf("unknown ring: %v", err)
	}
	reg.ParseRing([]string{"ring", "later"})
	if err := l.Open(reg); err != nil {
		t.Errorf("forward reference: %v", err)
	}
	l2, _ := ParseLog([]string{"log", "ring@stdout", "local0"}, true)
	if err := l2.Open(reg); err == nil || err.Error() != "uses incompatible ring 'stdout'" {
		t.Errorf("fd sink: %v", err)
	}
	l3, _ := ParseLog([]string{"log", "tcp@127.0.0.1:1", "local0"}, true)
	l3.File, l3.Line = "x.cfg", 7
	if err := l3.Open(reg); err != nil {
		t.Fatal(err)
	}
	ir := l3.Ring()
	if !strings.HasPrefix(ir.Name, "ring#") || ir.Format != FormatUnspec || ir.Size() != DefaultSize ||
		len(ir.Servers) != 1 || ir.Servers[0].Proto != ProtoLegacy ||
		ir.Description() != "created from log directive declared into 'x.cfg' at line 7" {
		t.Errorf("implicit ring %+v", ir)
	}
	if reg.Ring(ir.Name) != ir {
		t.Error("implicit ring not registered")
	}
}

func TestLoggerLevelsAndTruncation(t *testing.T) {
	reg := NewRegistry()
	r, _ := reg.ParseRing([]string{"ring", "r"})
	r.Format = FormatUnspec
	l, err := ParseLog([]string{"log", "ring@r", "len", "80", "format", "priority", "local1", "notice", "err"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Open(reg); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("y", 200)
	Loggers{l}.Send(&Meta{Facility: -1, Level: LevelInfo}, []byte("filtered"))
	Loggers{l}.Send(&Meta{Facility: -1, Level: LevelWarning}, []byte("kept"))
	// emerg is more severe than the minimum level err: it is lowered to err.
	Loggers{l}.Send(&Meta{Facility: 4, Level: LevelEmerg}, []byte(long))
	got := events(r)
	if len(got) != 2 || got[0] != "<140>kept" || got[1] != "<35>"+long[:79-4] {
		t.Fatalf("got %q", got)
	}
}

// The data path's cost: one access log line through a `log` line.
func BenchmarkLoggerSend(b *testing.B) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 2048)
		udp := pc.(*net.UDPConn)
		for {
			if _, _, err := udp.ReadFromUDPAddrPort(buf); err != nil {
				return
			}
		}
	}()
	reg := NewRegistry()
	r, _ := reg.ParseRing([]string{"ring", "r"})
	r.Resize(1 << 20)
	msg := []byte(`127.0.0.1:41234 [29/Nov/2026:20:48:56.256] fe be/s1 0/0/0/1/1 200 120 - - ---- 1/1/0/0/0 0/0 "GET /index.html HTTP/1.1"`)
	for _, target := range []string{"ring@r", "udp@" + pc.LocalAddr().String()} {
		b.Run(strings.SplitN(target, "@", 2)[0], func(b *testing.B) {
			l, err := ParseLog([]string{"log", target, "format", "rfc5424", "local0"}, true)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Open(reg); err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			ls := Loggers{l}
			m := &Meta{Facility: -1, Level: LevelInfo, Tag: []byte("haproxy"), PID: []byte("4242")}
			b.ReportAllocs()
			for b.Loop() {
				ls.Send(m, msg)
			}
		})
	}
}

func TestLoggerClone(t *testing.T) {
	l, _ := ParseLogArgs([]string{"ring@r", "sample", "1:2", "local3", "info"}, true)
	c := l.Clone()
	l.Sample.take()
	if !c.Sample.take() || c.Facility != 19 || c.Level != LevelInfo || c.Target.Ring != "r" {
		t.Fatalf("clone %+v", c)
	}
}
