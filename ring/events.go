package ring

import (
	"fmt"
	"io"
	"runtime"
)

// ListHeader is the first line of the `show events` sink list (3.2+ text).
const ListHeader = "Supported events sinks are listed below. Add -0(zero), -w(wait), -n(new). Any key to stop.\n"

// WriteList writes the `show events` sink list: the header, then one line
// per sink, "    %-10s : type=%s, %u dropped, %s". The runtime sends it
// as a message of level warning and ends the response.
func (reg *Registry) WriteList(w io.Writer) error {
	reg.mu.Lock()
	sinks := append([]sink(nil), reg.sinks...)
	reg.mu.Unlock()
	buf := []byte(ListHeader)
	for _, s := range sinks {
		typ, dropped, desc := "fd", uint64(0), s.desc
		if s.ring != nil {
			typ, dropped, desc = "buffer", s.ring.Dropped(), s.ring.Description()
		}
		buf = fmt.Appendf(buf, "    %-10s : type=%s, %d dropped, %s\n", s.name, typ, dropped, desc)
	}
	_, err := w.Write(buf)
	return err
}

// ShowEvents serves `show events [<sink>] [-w] [-n] [-0]`; args are the
// words after "show events". With no sink it writes the list. Otherwise
// it writes the ring's events, oldest first (-n: none of the existing
// ones), each ending with LF (-0: NUL), and returns once caught up, or,
// with -w, keeps writing new events until stop is closed (the client
// wrote something or went away) or a write fails. If w has a Flush()
// error method it is called after each batch.
//
// Before anything is written it may return ErrNoSuchSink,
// ErrNothingToReport (an fd sink) or ErrUnknownOption.
func (reg *Registry) ShowEvents(w io.Writer, args []string, stop <-chan struct{}) error {
	if arg(args, 0) == "" {
		return reg.WriteList(w)
	}
	r, isFD := reg.lookup(args[0])
	if isFD {
		return ErrNothingToReport
	}
	if r == nil {
		return ErrNoSuchSink
	}
	wait, seekNew, frame := false, false, FrameFunc(FrameLF)
	for _, a := range args[1:] {
		switch a {
		case "-w":
			wait = true
		case "-n":
			seekNew = true
		case "-0":
			frame = FrameNUL
		case "-nw", "-wn":
			wait, seekNew = true, true
		case "":
		default:
			return ErrUnknownOption
		}
	}
	return r.Dump(w, seekNew, wait, frame, stop)
}

// Dump writes the ring's events to w through frame, from the oldest (or,
// with fromEnd, only new ones), as its own reader. Without wait it returns
// when it has caught up; with wait it stays until stop is closed or a
// write fails. `show startup-logs` is Dump(w, false, false, FrameLF, nil).
func (r *Ring) Dump(w io.Writer, fromEnd, wait bool, frame FrameFunc, stop <-chan struct{}) error {
	rd, err := r.Attach(fromEnd)
	if err != nil {
		return err
	}
	defer rd.Close()
	flusher, _ := w.(interface{ Flush() error })
	buf := make([]byte, 0, 16384)
	for {
		out, n, next, err := rd.peek(buf[:0], 16384, frame, false)
		if err != nil {
			return err
		}
		rd.Advance(next)
		buf = out[:0]
		if n > 0 {
			if _, err := w.Write(out); err != nil {
				return err
			}
			continue
		}
		if flusher != nil {
			if err := flusher.Flush(); err != nil {
				return err
			}
		}
		if !wait {
			return nil
		}
		select {
		case <-rd.Wake():
		case <-stop:
			return nil
		}
		// As the forwarders do: let the writers that woke us log more
		// before we read, so that a busy ring streams in batches.
		runtime.Gosched()
	}
}

// Usage strings of the stats socket commands served from this package, in
// HAProxy's `help` layout.
const (
	ShowEventsUsage      = "show events [<sink>] [-w] [-n] [-0]     : show event sink state"
	ShowStartupLogsUsage = "show startup-logs                       : report logs emitted during HAProxy startup"
	StartupLogSize       = 65536 // HAProxy's STARTUP_LOG_SIZE
	startupLogsRingName  = "startup-logs"
)

// NewStartupLogs returns the ring that keeps the diagnostics printed while
// the process starts. Each diagnostic is stored with Write, as printed but
// without its trailing LF ("[ALERT]    (pid) : config : ..."); `show
// startup-logs` is Dump(w, false, false, FrameLF, nil). It is not listed
// by `show events`.
func NewStartupLogs() *Ring {
	return New(startupLogsRingName, StartupLogSize)
}
