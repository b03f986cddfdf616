package ring

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const haproxyBin = "/usr/sbin/haproxy"

// startHAProxy runs haproxy -db with cfg and stops it (by its PID) at the
// end of the test.
func startHAProxy(t *testing.T, cfg string) {
	t.Helper()
	if _, err := os.Stat(haproxyBin); err != nil {
		t.Skip("haproxy not installed")
	}
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(haproxyBin, "-db", "-f", path)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
}

// HAProxy's log-forward reads what goha's forwarder sends, with both
// framings, and finds the same header fields: goha's rings relay through
// HAProxy into a sink, and come out as HAProxy re-emits them.
func TestHAProxyReadsOurFrames(t *testing.T) {
	out := newSink(t, "127.0.0.1:0")
	defer out.close()
	lfPort := freePort(t)
	startHAProxy(t, fmt.Sprintf(`global
    nbthread 1
defaults
    timeout connect 5s
    timeout client 30s
    timeout server 30s
ring out
    format rfc5424
    timeout connect 5s
    timeout server 30s
    server sink %s
log-forward lf
    bind 127.0.0.1:%d
    log ring@out local0
`, out.ln.Addr(), lfPort))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rings []*Ring
	for _, c := range []struct {
		f Format
		p Proto
	}{{FormatRFC5424, ProtoOctetCount}, {FormatRFC3164, ProtoLegacy}, {FormatRFC5424, ProtoLegacy}, {FormatRFC3164, ProtoOctetCount}} {
		r := New(c.f.String()+"/"+c.p.String(), DefaultSize)
		r.Format = c.f
		r.Servers = []*Server{{Name: "h", Addr: fmt.Sprintf("127.0.0.1:%d", lfPort), Proto: c.p}}
		r.Start(ctx)
		rings = append(rings, r)
	}
	defer func() {
		cancel()
		for _, r := range rings {
			r.Wait()
		}
	}()
	m := &Meta{Facility: 20, Level: LevelWarning, Host: []byte("gw1"), Tag: []byte("goha"), PID: []byte("99"),
		Time: time.Date(2026, 11, 29, 20, 53, 44, 129705000, time.UTC)}
	for _, r := range rings {
		waitFor(t, r.Servers[0].Connected)
		r.Log(m, FormatUnspec, 1023, []byte("via "+r.Name+" GET /x 200"))
	}
	want := []string{
		"<164>1 2026-11-29T20:53:44.129705+00:00 gw1 goha 99 - - via rfc5424/octet-count GET /x 200",
		"<164>1 2026-11-29T20:53:44-00:00 gw1 goha 99 - - via rfc3164/legacy GET /x 200",
		"<164>1 2026-11-29T20:53:44.129705+00:00 gw1 goha 99 - - via rfc5424/legacy GET /x 200",
		"<164>1 2026-11-29T20:53:44-00:00 gw1 goha 99 - - via rfc3164/octet-count GET /x 200",
	}
	total := 0
	for _, w := range want {
		total += len(w) + 1
	}
	got := strings.Split(strings.TrimSuffix(out.waitLen(t, total), "\n"), "\n")
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("HAProxy did not re-emit %q; got %q", w, got)
		}
	}
}

// goha's log-forward reads HAProxy's ring forwarding, with both framings,
// and keeps what HAProxy sent.
func TestWeReadHAProxyFrames(t *testing.T) {
	reg := NewRegistry()
	got, _ := reg.ParseRing([]string{"ring", "got"})
	got.Format = FormatUnspec
	lf, _ := ParseLogForward([]string{"log-forward", "in"})
	lf.ParseKeyword([]string{"log", "ring@got", "local0"})
	lf.Open(reg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { lf.ServeStream(ctx, ln); close(served) }()
	defer func() { cancel(); <-served }()

	udpPort := freePort(t)
	startHAProxy(t, fmt.Sprintf(`global
    nbthread 1
defaults
    timeout connect 5s
    timeout client 30s
    timeout server 30s
ring leg
    format rfc3164
    timeout connect 5s
    timeout server 30s
    server g %[1]s log-proto legacy
ring oc
    format rfc5424
    timeout connect 5s
    timeout server 30s
    server g %[1]s log-proto octet-count
log-forward lf
    dgram-bind 127.0.0.1:%[2]d
    log ring@leg local0
    log ring@oc local0
`, ln.Addr(), udpPort))
	u, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", udpPort))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	// HAProxy binds its UDP port shortly after start: resend until the
	// first message comes through, then send the real ones.
	deadline := time.Now().Add(10 * time.Second)
	for lf.Received() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("nothing relayed by haproxy")
		}
		u.Write([]byte("<13>1 2026-01-02T03:04:05.000001+00:00 h app 1 - - warm-up"))
		time.Sleep(100 * time.Millisecond)
	}
	waitFor(t, func() bool { return lf.Received() >= 2 })
	base := lf.Received()
	for i := 0; i < 20; i++ {
		fmt.Fprintf(u, "<165>1 2026-01-02T03:04:05.000001+00:00 host9 app 42 ID7 - event %02d with spaces", i)
	}
	waitFor(t, func() bool { return lf.Received() >= base+40 })
	var leg, oc []string
	for _, e := range events(got) {
		if !strings.Contains(e, "event ") {
			continue
		}
		if strings.HasPrefix(e, "<165>Jan  2 03:04:05 host9 app[42]: event ") {
			leg = append(leg, e)
		} else if strings.HasPrefix(e, "<165>1 2026-01-02T03:04:05.000001+00:00 host9 app 42 ID7 - event ") {
			oc = append(oc, e)
		} else {
			t.Errorf("unexpected relay %q", e)
		}
	}
	if len(leg) != 20 || len(oc) != 20 {
		t.Fatalf("legacy %d, octet-count %d: %q %q", len(leg), len(oc), leg, oc)
	}
	for i := range leg {
		if !strings.HasSuffix(leg[i], fmt.Sprintf("event %02d with spaces", i)) || !strings.HasSuffix(oc[i], fmt.Sprintf("event %02d with spaces", i)) {
			t.Fatalf("order: %q / %q", leg[i], oc[i])
		}
	}
}
