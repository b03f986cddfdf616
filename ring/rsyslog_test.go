package ring

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const rsyslogd = "/usr/sbin/rsyslogd"

// rsyslog is an rsyslogd the test started, with its own configuration,
// work directory and pid file, writing every message's raw text to out.
type rsyslog struct {
	t         *testing.T
	dir, conf string
	out       string
	port      int // both framings, auto-detected per frame
	portLF    int // LF framing only (octet counting off)
	cmd       *exec.Cmd
	exited    chan struct{}
}

// freePort probes for a free loopback TCP port below 32768.
func freePort(t *testing.T) int {
	for i := 0; i < 200; i++ {
		p := 20000 + rand.IntN(12000)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err == nil {
			ln.Close()
			return p
		}
	}
	t.Fatal("no free port")
	return 0
}

func startRsyslog(t *testing.T) *rsyslog {
	t.Helper()
	if _, err := os.Stat(rsyslogd); err != nil {
		t.Skip("rsyslogd not installed")
	}
	dir := t.TempDir()
	rs := &rsyslog{t: t, dir: dir, out: filepath.Join(dir, "out.log"), port: freePort(t), portLF: freePort(t)}
	os.Mkdir(filepath.Join(dir, "work"), 0o700)
	conf := fmt.Sprintf(`global(workDirectory="%[1]s/work")
module(load="imtcp")
template(name="raw" type="string" string="%%rawmsg%%\n")
input(type="imtcp" address="127.0.0.1" port="%[2]d" ruleset="rs")
input(type="imtcp" address="127.0.0.1" port="%[3]d" ruleset="rs" supportOctetCountedFraming="off")
ruleset(name="rs") { action(type="omfile" file="%[4]s" template="raw") }
`, dir, rs.port, rs.portLF, rs.out)
	rs.conf = filepath.Join(dir, "rsyslog.conf")
	if err := os.WriteFile(rs.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	rs.start()
	t.Cleanup(rs.stop)
	return rs
}

func (rs *rsyslog) start() {
	rs.t.Helper()
	rs.cmd = exec.Command(rsyslogd, "-n", "-f", rs.conf, "-i", filepath.Join(rs.dir, "rsyslogd.pid"))
	rs.cmd.Stdout, rs.cmd.Stderr = os.Stderr, os.Stderr
	if err := rs.cmd.Start(); err != nil {
		rs.t.Fatal(err)
	}
	rs.exited = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { c.Wait(); close(done) }(rs.cmd, rs.exited)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", rs.port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			rs.t.Fatalf("rsyslogd not listening: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the rsyslogd this test started, by its PID.
func (rs *rsyslog) stop() {
	if rs.cmd == nil || rs.cmd.Process == nil {
		return
	}
	select {
	case <-rs.exited:
	default:
		rs.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-rs.exited:
		case <-time.After(10 * time.Second):
			rs.cmd.Process.Kill()
			<-rs.exited
		}
	}
	rs.cmd = nil
}

func (rs *rsyslog) lines() []string {
	f, err := os.Open(rs.out)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// waitLines waits until rsyslog wrote at least n lines matching keep.
func (rs *rsyslog) waitLines(n int, keep func(string) bool) []string {
	rs.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got []string
		for _, l := range rs.lines() {
			if keep(l) {
				got = append(got, l)
			}
		}
		if len(got) >= n {
			// Give a duplicate the chance to show up before checking.
			time.Sleep(100 * time.Millisecond)
			got = got[:0]
			for _, l := range rs.lines() {
				if keep(l) {
					got = append(got, l)
				}
			}
			return got
		}
		if time.Now().After(deadline) {
			rs.t.Fatalf("rsyslog wrote %d of %d lines: %q", len(got), n, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var allFormats = []Format{FormatRFC3164, FormatRFC5424, FormatLocal, FormatShort, FormatPriority, FormatTimed, FormatISO, FormatRaw}

// Every message of every format reaches rsyslog once, intact and in order,
// over both framings.
func TestRsyslogFormatsAndFramings(t *testing.T) {
	rs := startRsyslog(t)
	const n = 40
	type combo struct {
		r    *Ring
		tag  string
		want []string
	}
	var combos []*combo
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel() }()
	for _, proto := range []Proto{ProtoLegacy, ProtoOctetCount} {
		for _, f := range allFormats {
			port := rs.port
			if proto == ProtoLegacy && f == FormatISO {
				// An LF-framed line that starts with a digit looks
				// octet-counted to a receiver that detects framing.
				port = rs.portLF
			}
			c := &combo{r: New(f.String()+"-"+proto.String(), 64<<10), tag: f.String() + "/" + proto.String()}
			c.r.Format = f
			c.r.Servers = []*Server{{Name: "rsys", Addr: fmt.Sprintf("127.0.0.1:%d", port), Proto: proto}}
			c.r.Start(ctx)
			combos = append(combos, c)
		}
	}
	meta := &Meta{Facility: 16, Level: LevelInfo, Host: []byte("gw1"), Tag: []byte("haproxy"), PID: []byte("27703")}
	for i := 0; i < n; i++ {
		for _, c := range combos {
			meta.Time = time.Now()
			msg := fmt.Sprintf("msg %s seq=%03d GET /x?y=%d 200", c.tag, i, i)
			if !c.r.Log(meta, FormatUnspec, 1023, []byte(msg)) {
				t.Fatalf("%s: event %d dropped", c.tag, i)
			}
			c.want = append(c.want, string(AppendLine(nil, c.r.Format, meta, []byte(msg), 1023)))
		}
	}
	for _, c := range combos {
		got := rs.waitLines(n, func(l string) bool { return strings.Contains(l, "msg "+c.tag+" ") })
		if len(got) != n {
			t.Errorf("%s: %d lines, want %d", c.tag, len(got), n)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s line %d:\n got %q\nwant %q", c.tag, i, got[i], c.want[i])
				break
			}
		}
	}
	cancel()
	for _, c := range combos {
		c.r.Wait()
	}
}

// rsyslog stopped for 3 seconds and started again: the backlog arrives in
// order; nothing is lost while the ring has room, and when it has not the
// drop count announced is exact.
func TestRsyslogRestartBacklog(t *testing.T) {
	for _, proto := range []Proto{ProtoLegacy, ProtoOctetCount} {
		t.Run(proto.String(), func(t *testing.T) {
			rs := startRsyslog(t)
			r := New("restart", 4096)
			r.Format = FormatRFC5424
			srv := &Server{Name: "rsys", Addr: fmt.Sprintf("127.0.0.1:%d", rs.port), Proto: proto}
			r.Servers = []*Server{srv}
			ctx, cancel := context.WithCancel(context.Background())
			defer func() { cancel(); r.Wait() }()
			r.Start(ctx)
			waitFor(t, srv.Connected)
			meta := &Meta{Facility: 16, Level: LevelInfo, Tag: []byte("haproxy"), PID: []byte("1")}
			var want []string
			logf := func(format string, a ...any) bool {
				meta.Time = time.Now()
				msg := fmt.Sprintf(format, a...)
				ok := r.Log(meta, FormatUnspec, 1023, []byte(msg))
				if ok {
					want = append(want, msg)
				}
				return ok
			}
			body := func(l string) string {
				// "<pri>1 TIME - haproxy 1 - - body"
				if i := strings.Index(l, " - haproxy 1 - - "); i >= 0 {
					return l[i+len(" - haproxy 1 - - "):]
				}
				return l
			}
			for i := 0; i < 5; i++ {
				logf("before %d", i)
			}
			rs.waitLines(5, func(string) bool { return true })

			// Outage 1: the ring has room for everything.
			rs.stop()
			waitFor(t, func() bool { return !srv.Connected() })
			for i := 0; i < 20; i++ {
				if !logf("room %02d", i) {
					t.Fatalf("event %d dropped with room left", i)
				}
			}
			time.Sleep(3 * time.Second)
			rs.start()
			waitFor(t, srv.Connected)
			got := rs.waitLines(len(want), func(string) bool { return true })
			for i := range got {
				got[i] = body(got[i])
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("after outage with room\n got %q\nwant %q", got, want)
			}

			// Outage 2: the ring fills up; the forwarder holds the oldest
			// undelivered event, so new ones drop and are counted.
			rs.stop()
			waitFor(t, func() bool { return !srv.Connected() })
			drops, before := 0, r.TotalDropped()
			for i := 0; i < 100; i++ {
				if !logf("full %03d %s", i, strings.Repeat("p", 60)) {
					drops++
				}
			}
			if drops == 0 || uint64(drops) != r.TotalDropped()-before {
				t.Fatalf("drops %d, ring says %d", drops, r.TotalDropped()-before)
			}
			time.Sleep(3 * time.Second)
			rs.start()
			// The backlog frees the ring as it is delivered; the next event
			// then finds room for the drop announcement.
			rs.waitLines(len(want), func(string) bool { return true })
			logf("final")
			got = rs.waitLines(len(want)+1, func(string) bool { return true })
			announced := 0
			var events []string
			for _, l := range got {
				b := body(l)
				var k int
				switch {
				case b == "1 event dropped":
					announced++
				case strings.HasSuffix(b, " events dropped"):
					fmt.Sscanf(b, "%d events dropped", &k)
					announced += k
				default:
					events = append(events, b)
				}
			}
			if announced != drops {
				t.Fatalf("announced %d drops, %d happened: %q", announced, drops, got)
			}
			if strings.Join(events, "|") != strings.Join(want, "|") {
				t.Fatalf("events after full outage\n got %q\nwant %q", events, want)
			}
			if last := body(got[len(got)-1]); last != "final" || !strings.HasSuffix(body(got[len(got)-2]), "dropped") {
				t.Fatalf("tail %q", got[len(got)-2:])
			}
		})
	}
}
