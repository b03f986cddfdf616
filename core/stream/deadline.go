package stream

import (
	"net"
	"time"
)

// deadline re-arms a connection's deadline only when the one in force is
// too far from the wanted one: setting a deadline costs a timer update, and
// an inactivity timeout may fire a little late without harm. The slack is
// a quarter of the timeout up to 50 ms, and for long timeouts a 64th of
// it up to maxSlack: a timeout of a few seconds fires at most 50 ms late
// (logs compared with HAProxy's see no difference), one of 30 s or more at
// most maxSlack (under 1%), and a busy connection re-arms at most once per
// slack period. With 1,000 keep-alive clients each sending a request every
// 70 ms, a 50 ms slack on 30 s timeouts re-armed both sides' deadlines on
// nearly every request: 1-2% of the CPU.
type deadline struct {
	until time.Time // deadline in force; zero: none
}

// maxSlack bounds how late a timeout may fire.
const maxSlack = 250 * time.Millisecond

func slack(to time.Duration) time.Duration {
	return max(min(to/4, 50*time.Millisecond), min(to/64, maxSlack))
}

// arm sets c's deadline (set is SetReadDeadline, SetWriteDeadline or
// SetDeadline) to about now+to; to == 0 clears it.
func (d *deadline) arm(set func(time.Time) error, now time.Time, to time.Duration) {
	d.armWithin(set, now, to, slack(to))
}

// armWithin is arm with a slack of sl rather than the timeout's own.
func (d *deadline) armWithin(set func(time.Time) error, now time.Time, to, sl time.Duration) {
	if to <= 0 {
		if !d.until.IsZero() {
			set(time.Time{})
			d.until = time.Time{}
		}
		return
	}
	// The deadline in force may be up to one slack later than wanted (the
	// timeout then fires that much late), never earlier.
	min := now.Add(to)
	if !d.until.IsZero() && !d.until.Before(min) && d.until.Sub(min) <= sl {
		return
	}
	d.until = min.Add(sl)
	set(d.until)
}

// conn deadlines kept per connection.
type connDeadlines struct {
	read, write, both deadline
}

func (cd *connDeadlines) armRead(c net.Conn, now time.Time, to time.Duration) {
	cd.read.arm(c.SetReadDeadline, now, to)
}

func (cd *connDeadlines) armBoth(c net.Conn, now time.Time, to time.Duration) {
	cd.both.arm(c.SetDeadline, now, to)
}

// Which deadline an activeConn re-arms.
const (
	armRead = iota
	armWrite
	armBoth
)

// activeConn re-arms an inactivity timeout before each read or write of
// a body being streamed: HAProxy's client and server timeouts count
// inactivity, so a transfer that keeps moving is never cut by a timeout
// counted from its start. The deadline tracker keeps this cheap.
type activeConn struct {
	c    net.Conn
	dl   *deadline
	to   time.Duration
	kind int // armRead, armWrite or armBoth
}

func (a *activeConn) arm() {
	if a.to <= 0 {
		return
	}
	switch a.kind {
	case armRead:
		a.dl.arm(a.c.SetReadDeadline, time.Now(), a.to)
	case armWrite:
		a.dl.arm(a.c.SetWriteDeadline, time.Now(), a.to)
	default:
		a.dl.arm(a.c.SetDeadline, time.Now(), a.to)
	}
}

func (a *activeConn) Read(p []byte) (int, error) {
	a.arm()
	return a.c.Read(p)
}

func (a *activeConn) Write(p []byte) (int, error) {
	a.arm()
	return a.c.Write(p)
}
