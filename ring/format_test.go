package ring

import (
	"testing"
	"time"
)

// The captures of HAProxy 2.6.12 in reference/ring.md §2.2 (PID 11230,
// local0.info, TZ=UTC).
func TestFormatsMatchCaptures(t *testing.T) {
	at := time.Date(2026, 11, 29, 20, 48, 56, 256184000, time.UTC)
	m := &Meta{Facility: 16, Level: LevelInfo, Time: at, Tag: []byte("haproxy"), PID: []byte("11230")}
	msg := []byte("hello GET /legacy-test-1 200")
	cases := []struct {
		f    Format
		want string
	}{
		{FormatRFC3164, "<134>Nov 29 20:48:56 localhost haproxy[11230]: hello GET /legacy-test-1 200"},
		{FormatLocal, "<134>Nov 29 20:48:56 haproxy[11230]: hello GET /legacy-test-1 200"},
		{FormatRFC5424, "<134>1 2026-11-29T20:48:56.256184+00:00 - haproxy 11230 - - hello GET /legacy-test-1 200"},
		{FormatPriority, "<134>hello GET /legacy-test-1 200"},
		{FormatShort, "<6>hello GET /legacy-test-1 200"},
		{FormatTimed, "<6>2026-11-29T20:48:56.256184+00:00 hello GET /legacy-test-1 200"},
		{FormatISO, "2026-11-29T20:48:56.256184+00:00 hello GET /legacy-test-1 200"},
		{FormatRaw, "hello GET /legacy-test-1 200"},
	}
	for _, c := range cases {
		if got := string(AppendLine(nil, c.f, m, msg, 0)); got != c.want {
			t.Errorf("%v:\n got %q\nwant %q", c.f, got, c.want)
		}
	}
	h := *m
	h.Host = []byte("gw1")
	h.PID = []byte("27703")
	h.Time = time.Date(2026, 11, 29, 20, 53, 44, 129705000, time.UTC)
	one := []byte("hello GET /one 200")
	if got, want := string(AppendLine(nil, FormatRFC3164, &h, one, 0)), "<134>Nov 29 20:53:44 gw1 haproxy[27703]: hello GET /one 200"; got != want {
		t.Errorf("rfc3164+host: got %q want %q", got, want)
	}
	if got, want := string(AppendLine(nil, FormatRFC5424, &h, one, 0)), "<134>1 2026-11-29T20:53:44.129705+00:00 gw1 haproxy 27703 - - hello GET /one 200"; got != want {
		t.Errorf("rfc5424+host: got %q want %q", got, want)
	}
}

func TestFormatDetails(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.FixedZone("x", -(5*3600+30*60)))
	m := &Meta{Facility: 0, Level: LevelEmerg, Time: at}
	if got, want := string(AppendLine(nil, FormatRFC3164, m, []byte("m\n\x00\n"), 0)), "<0>Jan  2 03:04:05 localhost m"; got != want {
		t.Errorf("no tag: got %q want %q", got, want)
	}
	m.Tag = []byte("app")
	if got, want := string(AppendLine(nil, FormatLocal, m, []byte("m"), 0)), "<0>Jan  2 03:04:05 app: m"; got != want {
		t.Errorf("tag without pid: got %q want %q", got, want)
	}
	if got, want := string(AppendLine(nil, FormatISO, m, []byte("m"), 0)), "2026-01-02T03:04:05.000006-05:30 m"; got != want {
		t.Errorf("negative offset: got %q want %q", got, want)
	}
	// Truncation counts the header.
	if got, want := string(AppendLine(nil, FormatShort, &Meta{Level: 3}, []byte("abcdef"), 5)), "<3>ab"; got != want {
		t.Errorf("limit: got %q want %q", got, want)
	}
	if got, want := string(AppendLine(nil, FormatShort, &Meta{Level: 3}, []byte("abcdef"), 2)), "<3"; got != want {
		t.Errorf("limit inside header: got %q want %q", got, want)
	}
}

// Forwarded timestamps are reused and converted (ring.md §2.2, §4.5).
func TestFormatForwardedTime(t *testing.T) {
	now := time.Date(2026, 11, 29, 20, 51, 49, 0, time.UTC)
	legacy := &Meta{Facility: 1, Level: 5, Time: now, RawTime: []byte("Nov 29 10:00:00"), Host: []byte("myhost"), Tag: []byte("app"), PID: []byte("12"), Prio: true}
	if got, want := string(AppendLine(nil, FormatRFC5424, legacy, []byte("x"), 0)), "<13>1 2026-11-29T10:00:00-00:00 myhost app 12 - - x"; got != want {
		t.Errorf("legacy->iso: got %q want %q", got, want)
	}
	dec := &Meta{Facility: 1, Level: 5, Time: time.Date(2027, 1, 3, 0, 0, 0, 0, time.UTC), RawTime: []byte("Dec  9 10:00:00")}
	if got, want := string(AppendLine(nil, FormatISO, dec, []byte("x"), 0)), "2026-12-09T10:00:00-00:00 x"; got != want {
		t.Errorf("year guess: got %q want %q", got, want)
	}
	iso := &Meta{Facility: 4, Level: 6, Time: now, RawTime: []byte("2024-01-02T03:04:05+01:00"), Prio: true}
	if got, want := string(AppendLine(nil, FormatRFC3164, iso, []byte("udp rfc5424 nil fields"), 0)), "<38>Jan  2 03:04:05 localhost udp rfc5424 nil fields"; got != want {
		t.Errorf("iso->legacy: got %q want %q", got, want)
	}
	nilTime := &Meta{Facility: 1, Level: 6, RawTime: []byte("-"), Prio: true}
	if got, want := string(AppendLine(nil, FormatRFC5424, nilTime, []byte("x"), 0)), "<14>1 - - - - - - x"; got != want {
		t.Errorf("nil time: got %q want %q", got, want)
	}
}

func TestResolveUnspec(t *testing.T) {
	cases := []struct {
		m    Meta
		want Format
	}{
		{Meta{Host: []byte("h"), RawTime: []byte("Nov 29 10:00:00")}, FormatRFC3164},
		{Meta{Host: []byte("h"), RawTime: []byte("2003-10-11T22:14:15.003Z")}, FormatRFC5424},
		{Meta{Host: []byte("h"), RawTime: []byte("-")}, FormatRFC5424},
		{Meta{Tag: []byte("haproxy")}, FormatLocal},
		{Meta{Prio: true}, FormatPriority},
		{Meta{}, FormatRaw},
	}
	for _, c := range cases {
		if got := Resolve(FormatUnspec, &c.m); got != c.want {
			t.Errorf("Resolve(%+v) = %v, want %v", c.m, got, c.want)
		}
	}
}

func TestNames(t *testing.T) {
	for i := 0; i < 24; i++ {
		if f, ok := ParseFacility(FacilityName(i)); !ok || f != i {
			t.Errorf("facility %d round trip", i)
		}
	}
	if f, _ := ParseFacility("local0"); f != 16 {
		t.Errorf("local0 = %d", f)
	}
	if l, _ := ParseLevel("info"); l != 6 {
		t.Errorf("info = %d", l)
	}
	if _, ok := ParseLevel("information"); ok {
		t.Error("accepted a bad level")
	}
	for _, n := range []string{"local", "rfc3164", "rfc5424", "priority", "short", "timed", "iso", "raw"} {
		if f, ok := ParseFormat(n); !ok || f.String() != n {
			t.Errorf("format %q", n)
		}
	}
}

func BenchmarkFormat(b *testing.B) {
	m := &Meta{Facility: 16, Level: LevelInfo, Tag: []byte("haproxy"), PID: []byte("11230"), Host: []byte("gw1")}
	msg := []byte(`127.0.0.1:41234 [29/Nov/2026:20:48:56.256] fe be/s1 0/0/0/1/1 200 120 - - ---- 1/1/0/0/0 0/0 "GET /legacy-test-1 HTTP/1.1"`)
	for _, f := range []Format{FormatRFC3164, FormatRFC5424, FormatLocal, FormatShort, FormatTimed, FormatISO, FormatRaw} {
		b.Run(f.String(), func(b *testing.B) {
			buf := make([]byte, 0, 1024)
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendLine(buf[:0], f, m, msg, 1023)
			}
		})
	}
}
