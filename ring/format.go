package ring

import (
	"sync/atomic"
	"time"
)

// Format is a syslog header layout, as named by `format` on a `log` line or
// in a `ring` section.
type Format uint8

const (
	// FormatUnspec chooses the layout from the event's metadata (implicit
	// rings and log-forward relays with no `format`).
	FormatUnspec Format = iota
	FormatLocal
	FormatRFC3164
	FormatRFC5424
	FormatPriority
	FormatShort
	FormatTimed
	FormatISO
	FormatRaw
)

var formatNames = [...]string{
	FormatUnspec:   "",
	FormatLocal:    "local",
	FormatRFC3164:  "rfc3164",
	FormatRFC5424:  "rfc5424",
	FormatPriority: "priority",
	FormatShort:    "short",
	FormatTimed:    "timed",
	FormatISO:      "iso",
	FormatRaw:      "raw",
}

// ParseFormat returns the format named s.
func ParseFormat(s string) (Format, bool) {
	for f := FormatLocal; f <= FormatRaw; f++ {
		if formatNames[f] == s {
			return f, true
		}
	}
	return FormatUnspec, false
}

func (f Format) String() string {
	if int(f) < len(formatNames) && f != FormatUnspec {
		return formatNames[f]
	}
	return "unspec"
}

// Syslog levels (RFC 5424 severities).
const (
	LevelEmerg = iota
	LevelAlert
	LevelCrit
	LevelErr
	LevelWarning
	LevelNotice
	LevelInfo
	LevelDebug
)

var levelNames = [...]string{"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"}

var facilityNames = [...]string{
	"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
	"uucp", "cron", "auth2", "ftp", "ntp", "audit", "alert", "cron2",
	"local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
}

// ParseLevel returns the number of the level named s (emerg=0 ... debug=7).
func ParseLevel(s string) (int, bool) {
	for i, n := range levelNames {
		if n == s {
			return i, true
		}
	}
	return -1, false
}

// LevelName returns the name of level l, or "" when out of range.
func LevelName(l int) string {
	if l < 0 || l >= len(levelNames) {
		return ""
	}
	return levelNames[l]
}

// ParseFacility returns the number of the facility named s (kern=0 ... local7=23).
func ParseFacility(s string) (int, bool) {
	for i, n := range facilityNames {
		if n == s {
			return i, true
		}
	}
	return -1, false
}

// FacilityName returns the name of facility f, or "" when out of range.
func FacilityName(f int) string {
	if f < 0 || f >= len(facilityNames) {
		return ""
	}
	return facilityNames[f]
}

// Meta is what a header is built from. Empty fields are left out or shown
// as "-", as each format requires. Slices are only read.
type Meta struct {
	// Facility is 0..23; a negative value means "the logger's facility".
	Facility int
	// Level is 0..7.
	Level int
	// Time is the event's time; the zero value means now. It is rendered
	// in its own location (time.Now() gives local time, as HAProxy does).
	Time time.Time
	// RawTime is a timestamp taken from a forwarded message: either a
	// 15-byte rfc3164 stamp or an ISO one (or "-"). When set it is reused
	// instead of Time, converted if the format needs the other kind.
	RawTime []byte
	// Host is the hostname (`log-send-hostname`, or a forwarded one).
	Host []byte
	// Tag is the program name (`log-tag`, default "haproxy").
	Tag []byte
	// PID is the process id as text.
	PID []byte
	// MsgID and SD are rfc5424's MSGID and STRUCTURED-DATA.
	MsgID []byte
	SD    []byte
	// Prio tells that a forwarded message carried a PRI.
	Prio bool
}

const (
	legacyTimeLen = 15 // "Mmm dd hh:mm:ss"
	isoTimeMinLen = 20 // "YYYY-MM-DDThh:mm:ssZ"
)

var monthNames = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// Resolve returns the format used for f and m: f itself unless it is
// FormatUnspec, in which case the metadata decides as HAProxy does: a
// hostname gives rfc5424 (ISO or "-" time) or rfc3164, a tag without
// hostname gives local, a parsed PRI gives priority, and raw otherwise.
func Resolve(f Format, m *Meta) Format {
	if f != FormatUnspec {
		return f
	}
	switch {
	case len(m.Host) > 0:
		if (len(m.RawTime) == 1 && m.RawTime[0] == '-') || len(m.RawTime) >= isoTimeMinLen {
			return FormatRFC5424
		}
		return FormatRFC3164
	case len(m.Tag) > 0:
		return FormatLocal
	case m.Prio:
		return FormatPriority
	}
	return FormatRaw
}

// needsTime reports whether format f prints a timestamp.
func needsTime(f Format) bool {
	switch f {
	case FormatLocal, FormatRFC3164, FormatRFC5424, FormatTimed, FormatISO:
		return true
	}
	return false
}

// AppendLine appends the header for f and m, then msg without its trailing
// LF and NUL bytes, and cuts the result to limit bytes when limit > 0.
// It does not allocate when dst has room.
func AppendLine(dst []byte, f Format, m *Meta, msg []byte, limit int) []byte {
	start := len(dst)
	for len(msg) > 0 && (msg[len(msg)-1] == '\n' || msg[len(msg)-1] == 0) {
		msg = msg[:len(msg)-1]
	}
	dst = AppendHeader(dst, f, m)
	if limit > 0 {
		room := limit - (len(dst) - start)
		if room <= 0 {
			return dst[:start+limit]
		}
		if len(msg) > room {
			msg = msg[:room]
		}
	}
	return append(dst, msg...)
}

// AppendHeader appends the header of format f (resolved with Resolve) for
// m to dst, ending with the space before the message when there is one.
func AppendHeader(dst []byte, f Format, m *Meta) []byte {
	f = Resolve(f, m)
	level := clamp(m.Level, 0, 7)
	fac := clamp(m.Facility, 0, 23)

	switch f {
	case FormatLocal, FormatRFC3164, FormatRFC5424, FormatPriority:
		dst = append(dst, '<')
		dst = appendUint(dst, uint64(fac*8+level))
		dst = append(dst, '>')
	case FormatTimed, FormatShort:
		dst = append(dst, '<', byte('0'+level), '>')
	}

	switch f {
	case FormatLocal, FormatRFC3164:
		dst = appendLegacyStamp(dst, m)
	case FormatRFC5424:
		dst = append(dst, '1', ' ')
		if len(m.RawTime) == 1 && m.RawTime[0] == '-' {
			dst = append(dst, '-', ' ')
			break
		}
		dst = appendISOStamp(dst, m)
	case FormatTimed, FormatISO:
		dst = appendISOStamp(dst, m)
	}

	switch f {
	case FormatRFC3164:
		if len(m.Host) > 0 {
			dst = append(dst, m.Host...)
			dst = append(dst, ' ')
		} else {
			dst = append(dst, "localhost "...)
		}
		fallthrough
	case FormatLocal:
		if len(m.Tag) == 0 {
			break
		}
		dst = append(dst, m.Tag...)
		if len(m.PID) > 0 {
			dst = append(dst, '[')
			dst = append(dst, m.PID...)
			dst = append(dst, ']')
		}
		dst = append(dst, ':', ' ')
	case FormatRFC5424:
		dst = appendNil(dst, m.Host)
		dst = appendNil(dst, m.Tag)
		dst = appendNil(dst, m.PID)
		dst = appendNil(dst, m.MsgID)
		dst = appendNil(dst, m.SD)
	}
	return dst
}

func appendNil(dst, v []byte) []byte {
	if len(v) == 0 {
		return append(dst, '-', ' ')
	}
	dst = append(dst, v...)
	return append(dst, ' ')
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

func eventTime(m *Meta) time.Time {
	if m.Time.IsZero() {
		return time.Now()
	}
	return m.Time
}

// appendLegacyStamp appends "Mmm dd hh:mm:ss ", reusing or converting a
// forwarded timestamp when there is one.
func appendLegacyStamp(dst []byte, m *Meta) []byte {
	ts := m.RawTime
	if len(ts) == legacyTimeLen {
		dst = append(dst, ts...)
		return append(dst, ' ')
	}
	if len(ts) >= isoTimeMinLen {
		// ISO "YYYY-MM-DDThh:mm:ss...": keep month, day and clock.
		month := int(ts[5]-'0')*10 + int(ts[6]-'0')
		if month > 0 {
			month--
		}
		if month >= 0 && month <= 11 {
			dst = append(dst, monthNames[month]...)
			dst = append(dst, ' ')
			if ts[8] != '0' {
				dst = append(dst, ts[8])
			} else {
				dst = append(dst, ' ')
			}
			dst = append(dst, ts[9], ' ')
			dst = append(dst, ts[11:19]...)
			return append(dst, ' ')
		}
	}
	dst = append(dst, stampsFor(eventTime(m)).legacy[:]...)
	return append(dst, ' ')
}

// stamps holds the parts of the current second's timestamps, so that
// events logged in the same second skip the calendar computation.
type stamps struct {
	sec    int64
	loc    *time.Location
	iso    [19]byte // "YYYY-MM-DDThh:mm:ss"
	off    [6]byte  // "+hh:mm"
	legacy [15]byte // "Mmm dd hh:mm:ss"
}

var stampCache atomic.Pointer[stamps]

func stampsFor(t time.Time) *stamps {
	sec := t.Unix()
	if c := stampCache.Load(); c != nil && c.sec == sec && c.loc == t.Location() {
		return c
	}
	c := &stamps{sec: sec, loc: t.Location()}
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	_, off := t.Zone()
	b := append4(c.iso[:0], clamp(y, 0, 9999)) // keeps the stamp 19 bytes long
	b = append(b, '-')
	b = append2(b, int(mo))
	b = append(b, '-')
	b = append2(b, d)
	b = append(b, 'T')
	b = append2(b, h)
	b = append(b, ':')
	b = append2(b, mi)
	b = append(b, ':')
	b = append2(b, s)
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	o := append(c.off[:0], sign)
	o = append2(o, off/3600)
	o = append(o, ':')
	append2(o, off%3600/60)
	l := append(c.legacy[:0], monthNames[mo-1]...)
	l = append(l, ' ')
	if d < 10 {
		l = append(l, ' ', byte('0'+d))
	} else {
		l = append2(l, d)
	}
	l = append(l, ' ')
	l = append2(l, h)
	l = append(l, ':')
	l = append2(l, mi)
	l = append(l, ':')
	append2(l, s)
	stampCache.Store(c)
	return c
}

// appendISOStamp appends an ISO 8601 time and a space, reusing or
// converting a forwarded timestamp when there is one. A converted rfc3164
// stamp gets the year of now (the previous one if its month is ahead of
// ours) and the unknown offset "-00:00".
func appendISOStamp(dst []byte, m *Meta) []byte {
	ts := m.RawTime
	if len(ts) >= isoTimeMinLen {
		dst = append(dst, ts...)
		return append(dst, ' ')
	}
	if len(ts) == legacyTimeLen {
		month := -1
		for i, n := range monthNames {
			if string(ts[:3]) == n {
				month = i
				break
			}
		}
		if month >= 0 {
			now := eventTime(m)
			y := now.Year()
			if int(now.Month())-1 < month {
				y--
			}
			dst = append4(dst, y)
			dst = append(dst, '-')
			dst = append2(dst, month+1)
			dst = append(dst, '-')
			if ts[4] != ' ' {
				dst = append(dst, ts[4])
			} else {
				dst = append(dst, '0')
			}
			dst = append(dst, ts[5], 'T')
			dst = append(dst, ts[7:15]...)
			return append(dst, "-00:00 "...)
		}
	}
	dst = AppendISOTime(dst, eventTime(m))
	return append(dst, ' ')
}

// AppendISOTime appends t as "YYYY-MM-DDThh:mm:ss.uuuuuu+hh:mm", the form
// HAProxy uses for its own timestamps.
func AppendISOTime(dst []byte, t time.Time) []byte {
	c := stampsFor(t)
	dst = append(dst, c.iso[:]...)
	us := t.Nanosecond() / 1000
	dst = append(dst, '.', byte('0'+us/100000), byte('0'+us/10000%10), byte('0'+us/1000%10),
		byte('0'+us/100%10), byte('0'+us/10%10), byte('0'+us%10))
	return append(dst, c.off[:]...)
}

func append2(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/10%10), byte('0'+v%10))
}

func append4(dst []byte, v int) []byte {
	if v < 0 || v > 9999 {
		return appendUint(dst, uint64(max(v, 0)))
	}
	return append(dst, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}
