package core

import (
	"net"
	"time"
)

// deadline re-arms a connection's deadline only when the one in force is
// too far from the wanted one: setting a deadline costs a timer update, and
// an inactivity timeout may fire a little late without harm. The slack is a
// quarter of the timeout, at most one second, so short timeouts stay exact
// enough.
type deadline struct {
	until time.Time // deadline in force; zero: none
}

func slack(to time.Duration) time.Duration {
	s := to / 4
	if s > time.Second {
		s = time.Second
	}
	return s
}

// arm sets c's deadline (set is SetReadDeadline, SetWriteDeadline or
// SetDeadline) to about now+to; to == 0 clears it.
func (d *deadline) arm(set func(time.Time) error, now time.Time, to time.Duration) {
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
	sl := slack(to)
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
