package stream

import (
	"net"
	"time"

	"goha/core/diag"
	"goha/core/sample"
)

// What a stream records as it goes, for its log line.

// streamInfo is what an access log line reports about one stream.
type streamInfo struct {
	hc          *hconn // the HTTP exchange's connection state; nil in tcp mode
	accept      time.Time
	client      net.Addr
	fe, be      *proxy
	srv         *server
	applet      string        // the proxy's own responder that answered (<STATS>, <CACHE>) when no server did
	tw, tc, tt  time.Duration // queue, connect, total
	tr, ta, trq time.Duration // response, active, request
	bytesOut    int64         // bytes sent to the client
	bytesIn     int64
	status      int
	term        [2]byte // termination state: who ended it and in which phase
	retries     int
	redisp      bool // sent to another server after failures: %rc gets a '+'
	reqLine     []byte
	keepClient  bool
	host        []byte // request Host, valid while the request is in the buffer
	headless    bool   // answered before a request head was parsed
	left        bool   // the stream no longer counts in its backend and server
	gotResp     bool   // a response head came from the server (Tr is set)
	connected   bool   // a server connection was established (Tc is set)
	logged      bool   // counted and logged before its last write (see exchangeDone)
	ck          cookieState
	// view is what the stream's expressions read, which its log line's
	// evaluate too; logSmp is their sample, kept here not to be
	// allocated. nil view: none (tests).
	view   *sample.Request
	logSmp sample.Sample
	// caps are the stream's capture slots; nil before a request head was
	// parsed (HAProxy then logs from the connection, without them).
	caps *captures
	// uid is the unique id once uidState is uidSet (see uniqueID).
	uid      []byte
	uidState uint8
	logLevel int8 // set-log-level: 0 the default, logSilent, else the level plus one
	// lastRule is the position of the last rule whose final action ended
	// its rule set's evaluation (last_rule_file, last_rule_line); nil
	// when none did.
	lastRule *diag.Pos
}

// beConns is %bc: the backend's streams other than this one, as HAProxy
// logs once the stream has left its backend.
func (si *streamInfo) beConns() int64 {
	if si.be == nil {
		return 0
	}
	return othersThan(si.be.BE.Scur.Load(), si.left)
}

// srvConns is %sc, counted as beConns is.
func (si *streamInfo) srvConns() int64 {
	if si.srv == nil {
		return 0
	}
	return othersThan(si.srv.Counters.Scur.Load(), si.left)
}

func othersThan(cur int64, left bool) int64 {
	if !left {
		cur--
	}
	return max(cur, 0)
}
