package check

import (
	"testing"
	"time"
)

// The expected lines were captured from haproxy 2.6.12 (-db, stderr).
func TestStateChangeText(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		ev     StateEvent
		px, sv string
		why    Reason
		n      Counts
		want   string
	}{
		{EventDown, "be", "s1", Reason{Check: &Outcome{Status: StatusL4Con, Desc: "Connection refused"}}, Counts{Active: 1},
			`Server be/s1 is DOWN, reason: Layer4 connection problem, info: "Connection refused", check duration: 0ms. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.`},
		{EventDown, "be2", "h1", Reason{Check: &Outcome{Status: StatusL7Sts, Code: 503, Desc: "Service Unavailable"}}, Counts{},
			`Server be2/h1 is DOWN, reason: Layer7 wrong status, code: 503, info: "Service Unavailable", check duration: 0ms. 0 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.`},
		{EventUp, "be", "s2", Reason{Check: &Outcome{Status: StatusL4OK}}, Counts{Active: 1},
			`Server be/s2 is UP, reason: Layer4 check passed, check duration: 0ms. 1 active and 0 backup servers online. 0 sessions requeued, 0 total in queue.`},
		{EventDown, "be3", "a1", Reason{Check: &Outcome{Status: StatusL7Sts, Desc: "via agent : down (gone away)"}}, Counts{},
			`Server be3/a1 is DOWN, reason: Layer7 wrong status, code: 0, info: "via agent : down (gone away)", check duration: 0ms. 0 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.`},
		{EventUp, "be3", "a1", Reason{Check: &Outcome{Status: StatusL7OK, Desc: "via agent : up", Duration: ms}}, Counts{},
			`Server be3/a1 is UP, reason: Layer7 check passed, code: 0, info: "via agent : up", check duration: 1ms. 0 active and 0 backup servers online. 0 sessions requeued, 0 total in queue.`},
		{EventDown, "be", "s1", Reason{}, Counts{Active: 1},
			`Server be/s1 is DOWN. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.`},
		{EventDown, "be", "s1", Reason{Via: "be0/t1"}, Counts{Backup: 1, Sessions: 3, Xferred: 2, Queue: 1},
			`Server be/s1 is DOWN via be0/t1. 0 active and 1 backup servers left. Running on backup. 3 sessions active, 2 requeued, 1 remaining in queue.`},
		{EventStopping, "be", "s1", Reason{Text: "changed from CLI"}, Counts{Active: 2},
			`Server be/s1 is stopping, changed from CLI. 2 active and 0 backup servers online. 0 sessions requeued, 0 total in queue.`},
		{EventDown, "be", "s1", Reason{Check: &Outcome{Status: StatusHANA, Desc: `a "q" <x>`, Duration: -1}}, Counts{},
			`Server be/s1 is DOWN, reason: Health analyze, info: "a <22>q<22> <3C>x<3E>". 0 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.`},
	}
	for _, c := range cases {
		if got := StateChangeText(c.ev, false, c.px, c.sv, c.why, c.n); got != c.want {
			t.Errorf("\n got  %s\n want %s", got, c.want)
		}
	}
	if got := StateChangeText(EventUp, true, "be", "b", Reason{}, Counts{}); got != "Backup Server be/b is UP. 0 active and 0 backup servers online. 0 sessions requeued, 0 total in queue." {
		t.Errorf("backup: %s", got)
	}
}

func TestCheckLogText(t *testing.T) {
	cases := []struct {
		r      Report
		px, sv string
		want   string
	}{
		{Report{Outcome: Outcome{Status: StatusL4Con, Desc: "Connection refused", Duration: 2 * time.Millisecond}, Health: 0, Rise: 2, Fall: 2}, "be", "s1",
			`Health check for server be/s1 failed, reason: Layer4 connection problem, info: "Connection refused", check duration: 2ms, status: 0/2 DOWN.`},
		{Report{Outcome: Outcome{Status: StatusL4OK}, Health: 3, Rise: 2, Fall: 2}, "be", "s2",
			`Health check for server be/s2 succeeded, reason: Layer4 check passed, check duration: 0ms, status: 2/2 UP.`},
		{Report{Outcome: Outcome{Status: StatusL7Sts, Code: 503, Desc: "Service Unavailable", Duration: time.Millisecond}, Health: 0, Rise: 1, Fall: 1}, "be2", "h1",
			`Health check for server be2/h1 failed, reason: Layer7 wrong status, code: 503, info: "Service Unavailable", check duration: 1ms, status: 0/1 DOWN.`},
		{Report{Agent: true, Outcome: Outcome{Status: StatusL7TOut, Duration: 202 * time.Millisecond}, Health: 1, Rise: 1, Fall: 1}, "be3", "a1",
			`Agent check for server be3/a1 failed, reason: Layer7 timeout, check duration: 202ms, status: 1/1 UP.`},
	}
	for _, c := range cases {
		if got := CheckLogText(&c.r, false, c.px, c.sv, false); got != c.want {
			t.Errorf("\n got  %s\n want %s", got, c.want)
		}
	}
	r := Report{Outcome: Outcome{Status: StatusL7OKC}, Health: 4, Rise: 2, Fall: 3}
	if got := CheckLogText(&r, true, "be", "s", true); got != "Health check for backup server be/s conditionally succeeded, reason: Layer7 check conditionally passed, code: 0, check duration: 0ms, status: 3/3 DRAIN." {
		t.Errorf("got %s", got)
	}
	if NoServerText("backend", "be2", false) != "backend 'be2' has no server available!" ||
		NoServerText("backend", "be2", true) != "backend be2 has no server available!" {
		t.Error("no server text")
	}
}

// A real probe against a closed port produces HAProxy's DOWN line.
func TestLogTextFromProbe(t *testing.T) {
	s := NewServer(ServerConfig{Backend: "be", Name: "s1", Addr: "127.0.0.1", Port: closedPort(t),
		Health: &Settings{Rise: 2, Fall: 2}, Timeouts: Timeouts{Connect: time.Second}}, nil)
	rules, tg := s.Health.targetLocked()
	o := run(t, rules, &tg, Timeouts{Inter: time.Second})
	rep := apply(s.Health, o)
	if rep.Verdict != VerdictDown {
		t.Fatalf("%+v", rep)
	}
	o.Duration = 0 // loopback refusals take well under a millisecond
	got := StateChangeText(EventDown, false, "be", "s1", Reason{Check: &o}, Counts{Active: 1})
	want := `Server be/s1 is DOWN, reason: Layer4 connection problem, info: "Connection refused", check duration: 0ms. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.`
	if got != want {
		t.Fatalf("\n got  %s\n want %s", got, want)
	}
}

func TestStatusColumn(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{StatusColumn(OpRunning, false, true, 4, 2, 3, false, 0), "UP"},
		{StatusColumn(OpRunning, false, true, 2, 2, 3, false, 0), "UP 1/3"},
		{StatusColumn(OpRunning, true, true, 2, 2, 3, false, 0), "DRAIN 1/3"},
		{StatusColumn(OpRunning, true, true, 4, 2, 3, true, 1), "DRAIN (agent)"},
		{StatusColumn(OpRunning, true, false, 0, 0, 0, false, 0), "DRAIN"},
		{StatusColumn(OpRunning, false, false, 0, 0, 0, false, 0), "no check"},
		{StatusColumn(OpStopping, false, true, 3, 2, 3, false, 0), "NOLB 2/3"},
		{StatusColumn(OpStopping, false, true, 4, 2, 3, false, 0), "NOLB"},
		{StatusColumn(OpStopped, false, true, 0, 2, 3, true, 0), "DOWN (agent)"},
		{StatusColumn(OpStopped, false, true, 0, 2, 3, false, 0), "DOWN"},
		{StatusColumn(OpStopped, false, true, 1, 2, 3, false, 0), "DOWN 1/2"},
		{StatusColumn(OpStopped, false, false, 0, 0, 0, false, 0), "DOWN"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("%d: got %q want %q", i, c.got, c.want)
		}
	}
	if StatName(StatusL7OK, true) != "* L7OK" || StatName(StatusL4Con, false) != "L4CON" {
		t.Error("stat name")
	}
	if StatusL7OK.Desc() != "Layer7 check passed" || Status(99).String() != "UNK" || StatusL7OKC.Result() != ResultCondPass {
		t.Error("status table")
	}
}
