package proxy

import (
	"net/http"
	"os"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// TestGovernorGivesBackThreads: on a machine whose CPUs are all busy with
// other work, a goha that is not using its second scheduler thread gives
// it back (docs/architecture.md, "Scheduler threads"), and goes on
// serving.
func TestGovernorGivesBackThreads(t *testing.T) {
	if goruntime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs")
	}
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set, which turns the governor off")
	}
	origin := harness.NewOrigin(t, "o", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	p := harness.Start(t, bin.Path(t, "goha"), `
global
    nbthread 2
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    server o `+origin.Addr+`
`, "fe")
	harness.WaitListening(t, p.Addrs["fe"], 5*time.Second)

	// Keep every CPU busy, as a saturated machine is.
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range goruntime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := 0
			for !stop.Load() {
				for i := range 1 << 16 {
					x += i
				}
			}
			_ = x
		}()
	}
	ok := p.WaitOutput("scheduler threads 2 -> 1 ", 10*time.Second)
	stop.Store(true)
	wg.Wait()
	if !ok {
		t.Fatalf("no change of scheduler threads; output:\n%s", p.Output())
	}
	if code, body := harness.Get(t, http.DefaultClient, p.Addrs["fe"], "/"); code != 200 || body != "ok\n" {
		t.Errorf("after the change: %d %q", code, body)
	}
}
