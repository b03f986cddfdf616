package stream

import (
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"goha/core"
)

// maxconn 1 holds the second connection while the first is open: the
// accept loop counts a connection before it looks for room again, and
// reserves the accept it waits for in accept(2) (Smax stays 1).
func TestListenMaxConnExact(t *testing.T) {
	for _, tc := range []struct{ name, fe string }{
		{"frontend", "    bind @BIND@\n    maxconn 1\n"},
		{"bind", "    bind @BIND@ maxconn 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proc := unitProc(t, unitTCPConf+"frontend fe\n"+tc.fe+"    default_backend be\nbackend be\n    server s1 "+unitEcho(t)+"\n")
			addr := unitFE(t, proc, "fe")
			c1 := dialUnit(t, addr)
			c1.echo("one")
			c2 := dialUnit(t, addr)
			c2.send("two")
			if !c2.held() {
				t.Errorf("maxconn 1: a second connection was served while the first was open (Smax %d)",
					proc.Conf.FindProxy("fe", core.CapFE).FE.Smax.Load())
			}
		})
	}
}

// After disable frontend no new connection is served, not even the one
// the accept loop was already waiting for in accept(2).
func TestListenDisableExact(t *testing.T) {
	proc := unitProc(t, unitTCPConf+"frontend fe\n    bind @BIND@\n    default_backend be\nbackend be\n    server s1 "+unitEcho(t)+"\n")
	fe := proc.Conf.FindProxy("fe", core.CapFE)
	addr := unitFE(t, proc, "fe")
	dialUnit(t, addr).echo("before")
	fe.DisableFrontend()
	c := dialUnit(t, addr)
	c.send("one")
	if !c.held() {
		t.Error("the first connection after disable frontend was served")
	}
}

func epollFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.Contains(l, "eventpoll") {
			n++
		}
	}
	return n
}

// A parker gives its epoll descriptor back when it closes: a program
// running process after process does not keep one per process.
func TestParkerEpollFDLeak(t *testing.T) {
	before := epollFDs(t)
	for i := 0; i < 10; i++ {
		pk, err := newParker()
		if err != nil {
			t.Skip(err)
		}
		pk.closeAll()
	}
	time.Sleep(600 * time.Millisecond) // the watchers' last EpollWait
	if after := epollFDs(t); after > before {
		t.Errorf("%d epoll descriptors left open by 10 closed parkers", after-before)
	}
}

// A park racing with closeAll is either refused or expired, never left
// behind with its connection (and the process's stream count) held.
func TestParkerCloseAllRace(t *testing.T) {
	for i := 0; i < 50; i++ {
		pk, err := newParker()
		if err != nil {
			t.Skip(err)
		}
		// Parked first, so that closeAll's expiry loop takes a while.
		for j := 0; j < 100; j++ {
			_, c := parkPair(t)
			pk.park(c, time.Time{}, func() {}, func() {})
		}
		var parkedOK, expiredN atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for j := 0; j < 20; j++ {
			_, c := parkPair(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if pk.park(c, time.Time{}, func() {}, func() { expiredN.Add(1) }) {
					parkedOK.Add(1)
				}
			}()
		}
		close(start)
		pk.closeAll()
		wg.Wait()
		if lost := parkedOK.Load() - expiredN.Load(); lost > 0 {
			t.Fatalf("iteration %d: %d connections accepted by park during closeAll were never expired", i, lost)
		}
	}
}
