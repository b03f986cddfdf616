package stream

import (
	"net"
	"testing"
	"time"
)

// parkPair returns both ends of a loopback TCP connection: the client's,
// and the accepted one, which is what a parker watches.
func parkPair(t *testing.T) (client, accepted net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	accepted, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { accepted.Close() })
	return client, accepted
}

// newUnitParker is a parker closed when the test ends.
func newUnitParker(t *testing.T) *parker {
	t.Helper()
	pk, err := newParker()
	if err != nil {
		t.Skipf("no epoll: %v", err)
	}
	t.Cleanup(pk.closeAll)
	return pk
}

// parkedCount is how many connections pk watches.
func parkedCount(pk *parker) int {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	return len(pk.conns)
}

// unitPark parks c on pk; its channels close on resume and on expiry.
func unitPark(t *testing.T, pk *parker, c net.Conn, deadline time.Time) (resumed, expired chan struct{}) {
	t.Helper()
	resumed, expired = make(chan struct{}), make(chan struct{})
	if !pk.park(c, deadline, func() { close(resumed) }, func() { close(expired) }) {
		t.Fatal("a TCP connection could not be parked")
	}
	return resumed, expired
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Bytes arriving on a parked connection resume it, once, and leave them
// for the resumed reader.
func TestParkerResumesOnData(t *testing.T) {
	pk := newUnitParker(t)
	client, c := parkPair(t)
	resumed, expired := unitPark(t, pk, c, time.Now().Add(time.Hour))
	if n := parkedCount(pk); n != 1 {
		t.Fatalf("%d connections parked, want 1", n)
	}
	if _, err := client.Write([]byte("GET")); err != nil {
		t.Fatal(err)
	}
	waitDone(t, "the parked connection to resume", resumed)
	if n := parkedCount(pk); n != 0 {
		t.Errorf("%d connections still parked after the resume", n)
	}
	if isClosed(expired) {
		t.Error("a resumed connection was also expired")
	}
	c.SetReadDeadline(time.Now().Add(unitWait))
	b := make([]byte, 8)
	if n, err := c.Read(b); err != nil || string(b[:n]) != "GET" {
		t.Errorf("the resumed reader got %q, %v; want the bytes that woke it", b[:n], err)
	}
	// Taken off the watcher: closing it now must not reach the parker.
	pk.closeAll()
	if isClosed(expired) {
		t.Error("closeAll expired a connection that had resumed")
	}
}

// A client closing a parked connection resumes it too: its reader must
// see the end of stream and release it, rather than wait for the
// keep-alive timeout.
func TestParkerResumesOnPeerClose(t *testing.T) {
	pk := newUnitParker(t)
	client, c := parkPair(t)
	resumed, _ := unitPark(t, pk, c, time.Time{})
	client.Close()
	waitDone(t, "the parked connection to resume on the peer's close", resumed)
}

// The sweep expires a parked connection whose deadline passed, and only
// it: one without a deadline, parked at the same time, stays.
func TestParkerExpiresAtDeadline(t *testing.T) {
	pk := newUnitParker(t)
	_, due := parkPair(t)
	_, forever := parkPair(t)
	dueResumed, dueExpired := unitPark(t, pk, due, time.Now().Add(time.Millisecond))
	foreverResumed, foreverExpired := unitPark(t, pk, forever, time.Time{})
	waitDone(t, "the connection past its deadline to expire", dueExpired)
	if isClosed(dueResumed) {
		t.Error("an expired connection was also resumed")
	}
	// The sweep that expired the first saw the second too.
	if isClosed(foreverExpired) || isClosed(foreverResumed) {
		t.Error("a connection without a deadline left the parker")
	}
	if n := parkedCount(pk); n != 1 {
		t.Errorf("%d connections parked, want the one without a deadline", n)
	}
}

// closeAll expires every parked connection, and the parker takes no more.
func TestParkerCloseAll(t *testing.T) {
	pk := newUnitParker(t)
	var expired []chan struct{}
	for i := 0; i < 3; i++ {
		_, c := parkPair(t)
		_, e := unitPark(t, pk, c, time.Time{})
		expired = append(expired, e)
	}
	pk.closeAll()
	for i, e := range expired {
		if !isClosed(e) {
			t.Errorf("parked connection %d not expired by closeAll", i)
		}
	}
	_, c := parkPair(t)
	if pk.park(c, time.Time{}, func() {}, func() {}) {
		t.Error("a closed parker took a connection")
	}
	select {
	case <-pk.done:
	default:
		t.Error("the watcher was not told to stop")
	}
}

// A connection without a socket to watch (TLS, a pipe) is refused: its
// goroutine keeps waiting on it itself.
func TestParkerRefusesNonSocket(t *testing.T) {
	pk := newUnitParker(t)
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if pk.park(a, time.Time{}, func() {}, func() {}) {
		t.Error("a pipe was parked")
	}
	if n := parkedCount(pk); n != 0 {
		t.Errorf("%d connections parked after a refusal", n)
	}
}

// Through a process: a keep-alive client idle for a while is parked by
// its stream, and its next request is served by the resumed connection.
func TestParkerServesAfterParking(t *testing.T) {
	o := newUnitOrigin(t, okHandler)
	proc, addr := unitHTTPProxy(t, "", "    server s1 "+o.addr+noPurge+"\n")
	if proc.idle == nil {
		t.Skip("no epoll: nothing parks")
	}
	c := dialUnit(t, addr)
	if r, _ := c.get("/1"); r.StatusCode != 200 {
		t.Fatalf("status %d", r.StatusCode)
	}
	waitFor(t, "the idle client to be parked", func() bool { return parkedCount(proc.idle) == 1 })
	if r, body := c.get("/2"); r.StatusCode != 200 || body != "ok" {
		t.Fatalf("request after parking: %d %q", r.StatusCode, body)
	}
	if n := o.accepts.Load(); n != 1 {
		t.Errorf("origin accepted %d connections: the pooled one was not reused after parking", n)
	}
}

// TestWatchCloseFiresOnClose: option abortonclose's watcher reports a
// client that closes, and only that: a pipelined request is left in the
// socket, unread, and an unwatched connection may be parked again.
func TestWatchCloseFiresOnClose(t *testing.T) {
	pk := newUnitParker(t)

	client, accepted := parkPair(t)
	aborted := make(chan struct{})
	id := pk.watchClose(accepted, func() { close(aborted) })
	if id == 0 {
		t.Fatal("a TCP connection could not be watched")
	}
	client.Close()
	select {
	case <-aborted:
	case <-time.After(10 * time.Second):
		t.Fatal("the client's close was not reported")
	}

	// Data is not a close: the watcher reports nothing and consumes
	// nothing; after unwatch the connection parks as before.
	client, accepted = parkPair(t)
	fired := make(chan struct{}, 1)
	id = pk.watchClose(accepted, func() { fired <- struct{}{} })
	if _, err := client.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	// The event is taken (one-shot) once the data arrives.
	deadline := time.Now().Add(10 * time.Second)
	for parkedCount(pk) != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	pk.unwatch(id)
	buf := make([]byte, 64)
	accepted.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := accepted.Read(buf); err != nil || string(buf[:n]) != "GET / HTTP/1.1\r\n\r\n" {
		t.Fatalf("the request was not left in the socket: %q, %v", buf[:n], err)
	}
	resumed, _ := unitPark(t, pk, accepted, time.Time{})
	client.Write([]byte("x"))
	select {
	case <-resumed:
	case <-time.After(10 * time.Second):
		t.Fatal("a connection watched then unwatched could not be parked")
	}
	select {
	case <-fired:
		t.Fatal("pipelined data was taken for a close")
	default:
	}
}
