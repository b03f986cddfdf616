package runtime

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"goha/ring"
)

func init() {
	Register(&Command{Words: []string{"show", "events"}, Usage: "show events [<sink>] [-w] [-n]",
		Help: "show event sink state", Run: cmdShowEvents})
}

// eventsListHeader is 2.6's first line of the sink list.
const eventsListHeader = "Supported events sinks are listed below. Add -w(wait), -n(new). Any key to stop\n"

// flushWriter lets a long dump push its output to the client as it goes,
// with the session's write deadline.
type flushWriter struct{ s *session }

func (f flushWriter) Write(b []byte) (int, error) { return f.s.w.Write(b) }
func (f flushWriter) Flush() error {
	if !f.s.flush() {
		return errors.New("runtime: client gone")
	}
	return nil
}

func cmdShowEvents(c *Ctx) {
	args := c.Args[2:]
	if len(args) > 0 && !c.Need(LevelOperator) {
		return
	}
	if len(args) == 0 {
		var b strings.Builder
		if err := c.Proc.Conf.LogRegistry().ShowEvents(&b, nil, nil); err != nil {
			c.Err(err.Error())
			return
		}
		txt := b.String()
		if i := strings.IndexByte(txt, '\n'); i >= 0 {
			txt = eventsListHeader + txt[i+1:]
		}
		c.Warn(txt)
		return
	}
	wait := false
	for _, a := range args[1:] {
		if strings.Contains(a, "w") && strings.HasPrefix(a, "-") {
			wait = true
		}
	}
	var stop chan struct{}
	var done chan struct{}
	s := c.s
	if wait {
		// Any input from the client, or its going away, ends the wait.
		stop, done = make(chan struct{}), make(chan struct{})
		s.conn.SetReadDeadline(time.Time{})
		go func() {
			defer close(done)
			s.r.ReadByte()
			close(stop)
		}()
	}
	err := c.Proc.Conf.LogRegistry().ShowEvents(flushWriter{s}, args, stop)
	if wait {
		s.conn.SetReadDeadline(time.Now())
		<-done
		s.conn.SetReadDeadline(time.Time{})
	}
	switch {
	case err == nil:
	case errors.Is(err, ring.ErrNoSuchSink):
		c.Err("No such event sink")
	case errors.Is(err, ring.ErrNothingToReport):
		c.Err("Nothing to report for this sink")
	case errors.Is(err, ring.ErrUnknownOption):
		c.Err("unknown option")
	default:
		c.Err(fmt.Sprint(err))
	}
}
