// Package ring carries goha's event sinks: a byte-bounded ring buffer of log
// events with one writer position and many reader positions, the syslog
// formats HAProxy emits (rfc3164, rfc5424, local, short, priority, iso,
// timed, raw), the `log` and `ring` configuration parsers, the forwarders
// that drain a ring to TCP syslog servers (legacy or octet-count framing,
// RFC 6587) and the receive side of `log-forward`.
//
// # The ring
//
// A Ring is an area of Size bytes used as a circle. Events are stored one
// after the other as a uvarint length followed by the payload (the formatted
// line, without a trailing LF). Positions are absolute byte counters that
// only grow; an index in the area is position % Size. head is the position
// of the oldest stored event, tail the position where the next one goes:
//
//	  head                                tail
//	   v                                   v
//	...[len|event 1][len|event 2][len|event 3]..........(free)...........
//	                 ^                         ^
//	              reader A                  reader B (caught up)
//
//	invariants: head <= every attached reader <= tail,  tail-head <= Size
//
// Writing appends at tail. When the new record does not fit, the writer
// removes the oldest events from head until it does, but it never removes
// the event an attached reader stands on:
//
//	full, nobody at head: event 1 is overwritten, the ring wraps
//	  [len|event 1][len|event 2][len|event 3] + event 4
//	  => [len|event 2][len|event 3][len|event 4]
//
//	full, reader A waits at event 1: event 4 is dropped and counted
//	  [len|event 1][len|event 2][len|event 3]   dropped=1
//	   ^ A
//
// A reader that is slow or whose server is down therefore keeps the oldest
// events and makes new ones drop, while a ring nobody reads from simply
// keeps the newest. A dropped event is never silent: before the next event
// is written the writer first stores "1 event dropped" or "N events
// dropped" at level notice, in the ring's format. If even that does not fit,
// the new event is dropped too (and counted), so that the order seen by
// readers stays the order of writes. A record larger than the whole area is
// always dropped.
//
// Readers attach lazily: a forwarder takes its position the first time its
// server accepts a connection, at the oldest event (HAProxy's behaviour), and
// keeps it across reconnections, so that a backlog arrives in order once the
// server is back. `show events -n` attaches at tail instead.
//
// # Concurrency
//
// Ring.mu guards the area, head, tail, the reader list and the drop
// counters. Writers (the data path) hold it only to format into a scratch
// buffer and copy the record into the area; they never wait for a reader:
// a full ring drops. Readers copy events out under the lock and do their I/O
// after releasing it. Each reader has a one-slot wake channel that the writer
// fills without blocking, so that a reader waiting for new events sleeps on
// a channel, not on the lock.
//
// # Forwarding
//
// A forwarder sends, in one write, every event between its position and
// tail (up to 16 KiB, HAProxy's buffer size), then moves its position past
// them. When it has caught up it sleeps on its wake channel. The writer
// that fills the channel makes the forwarder the next goroutine its
// scheduler runs, ahead of the connections that are about to log more, so
// the forwarder yields once before reading: the events those connections
// write meanwhile go out in the same write. Under HTTP load this turns one
// write per event into one per batch, which is what HAProxy's forwarding
// applet does by running once per pass of its event loop.
//
// On Linux, `log-forward` reads its UDP sockets several datagrams per
// system call (recvmmsg through the runtime's poller), in arrival order,
// and both that read and the forwarder's write are non-blocking calls made
// without the scheduler's system call bookkeeping, as the data path's are:
// a loopback write of a few tens of microseconds would otherwise hand the
// processor to another thread and back.
//
// # Backing file
//
// With `backing-file <path>` the area lives in a shared memory mapping of
// the file, so its content survives a restart (and a crash) of the process.
// The file starts with a 64-byte header, then the area:
//
//	offset  size  field
//	0       8     magic "GOHARNG1"
//	8       8     area size (little endian)
//	16      8     head position
//	24      8     tail position
//	32      32    reserved, zero
//	64      size  area
//
// The file is rounded up to 4 KiB. On open, a file whose magic, size or
// event chain does not check out is renamed to <path>.bak and a fresh ring
// is started; otherwise its events are kept and readers find them as if they
// had been written by this process.
package ring
