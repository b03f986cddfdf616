package check

import (
	"testing"
	"time"
)

func apply(c *Check, o Outcome) Report {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	return c.applyLocked(o)
}

type recorder struct {
	reports chan Report
}

func (r *recorder) CheckResult(rep Report) { r.reports <- rep }

func TestRiseFall(t *testing.T) {
	s := NewServer(ServerConfig{Backend: "be", Name: "s1", Health: &Settings{Rise: 2, Fall: 3}}, nil)
	c := s.Health
	fail := Outcome{Status: StatusL4Con, Desc: "Connection refused"}
	pass := Outcome{Status: StatusL4OK}
	if st := c.Snapshot(); st.Health != 2 || st.Status != StatusIni || st.State != StConfigured|StEnabled {
		t.Fatalf("initial %+v", st)
	}
	steps := []struct {
		o       Outcome
		health  int
		verdict Verdict
		logged  bool
	}{
		{fail, 0, VerdictDown, true}, // starts at rise: one failure is enough
		{fail, 0, VerdictDown, false},
		{pass, 1, VerdictNone, true},
		{pass, 4, VerdictUp, true},  // reaching rise jumps to rise+fall-1
		{pass, 4, VerdictUp, false}, // nothing moved, same status: not logged
		{fail, 3, VerdictNone, true},
		{pass, 4, VerdictUp, true},
		{fail, 3, VerdictNone, true},
		{fail, 2, VerdictNone, true},
		{fail, 0, VerdictDown, true},
	}
	for i, st := range steps {
		rep := apply(c, st.o)
		if rep.Health != st.health || rep.Verdict != st.verdict {
			t.Fatalf("step %d: health %d verdict %d, want %d %d", i, rep.Health, rep.Verdict, st.health, st.verdict)
		}
		if rep.Logged != st.logged {
			t.Fatalf("step %d: logged %v", i, rep.Logged)
		}
	}
	if rep := apply(c, Outcome{Status: StatusChecked}); rep.Logged || rep.Health != 0 {
		t.Fatal("neutral result must change nothing")
	}
	if rep := apply(c, Outcome{Status: StatusL7OKC}); rep.Health != 1 || rep.Verdict != VerdictNone {
		t.Fatalf("condpass %+v", rep)
	}
	if rep := apply(c, Outcome{Status: StatusL7OKC}); rep.Health != 4 || rep.Verdict != VerdictStopping {
		t.Fatalf("condpass %+v", rep)
	}
}

func TestIntervals(t *testing.T) {
	s := NewServer(ServerConfig{Health: &Settings{Inter: 2 * time.Second, FastInter: 500 * time.Millisecond, DownInter: 5 * time.Second}}, nil)
	c := s.Health
	apply(c, Outcome{Status: StatusL4OK})
	if c.Interval() != 2*time.Second {
		t.Fatalf("up: %v", c.Interval())
	}
	apply(c, Outcome{Status: StatusL4Con})
	if c.Interval() != 500*time.Millisecond {
		t.Fatalf("going down: %v", c.Interval())
	}
	apply(c, Outcome{Status: StatusL4Con})
	apply(c, Outcome{Status: StatusL4Con})
	s.SetOpState(OpStopped)
	if c.Interval() != 5*time.Second {
		t.Fatalf("down: %v", c.Interval())
	}
	apply(c, Outcome{Status: StatusL4OK})
	if c.Interval() != 500*time.Millisecond {
		t.Fatalf("going up: %v", c.Interval())
	}
}

func TestAgentHealth(t *testing.T) {
	s := NewServer(ServerConfig{Health: &Settings{}, Agent: &Settings{}}, nil)
	h, a := s.Health, s.Agent
	if st := a.Snapshot(); st.Rise != 1 || st.Fall != 1 || st.State&StAgent == 0 || st.Inter != DefaultInter {
		t.Fatalf("agent defaults %+v", st)
	}
	// Failing to reach the agent does not count.
	if rep := apply(a, Outcome{Status: StatusL4Con}); rep.Health != 1 || rep.Verdict != VerdictNone || rep.FailedCheck {
		t.Fatalf("%+v", rep)
	}
	down := AgentReply{Health: "down"}
	rep := apply(a, Outcome{Status: StatusL7Sts, Desc: "via agent : down", Agent: &down})
	if rep.Health != 0 || rep.Verdict != VerdictDown || !rep.Agent {
		t.Fatalf("%+v", rep)
	}
	// Health check passes, but the agent still holds the server down.
	if rep := apply(h, Outcome{Status: StatusL4OK}); rep.Verdict != VerdictNone {
		t.Fatalf("%+v", rep)
	}
	up := AgentReply{Health: "up"}
	if rep := apply(a, Outcome{Status: StatusL7OK, Agent: &up}); rep.Health != 1 || rep.Verdict != VerdictUp {
		t.Fatalf("%+v", rep)
	}
	// An agent "up" does not lift a server in NOLB.
	s.SetOpState(OpStopping)
	if rep := apply(a, Outcome{Status: StatusL7OK, Agent: &up}); rep.Verdict != VerdictNone {
		t.Fatalf("%+v", rep)
	}
	// Disabling the agent takes it out of the decision.
	a.Disable()
	apply(a, Outcome{Status: StatusL7Sts, Agent: &down})
	s.SetOpState(OpStopped)
	if rep := apply(h, Outcome{Status: StatusL4OK}); rep.Verdict != VerdictUp {
		t.Fatalf("%+v", rep)
	}
}

func TestObserve(t *testing.T) {
	rec := &recorder{reports: make(chan Report, 10)}
	s := NewServer(ServerConfig{Backend: "be", Name: "s", Health: &Settings{Rise: 2, Fall: 3, FastInter: time.Second},
		Observe: ObserveLayer7, ErrorLimit: 3}, rec)
	c := s.Health
	apply(c, Outcome{Status: StatusL7OK}) // health 4
	s.Observe(EventHTTPStatus)
	s.Observe(EventHTTPStatus)
	s.Observe(EventHTTPOK) // resets
	s.Observe(EventHTTPStatus)
	s.Observe(EventHTTPStatus)
	if len(rec.reports) != 0 {
		t.Fatal("reported before error-limit")
	}
	rep := s.Observe(EventHTTPStatus)
	if rep == nil || !rep.HANA || rep.Health != 3 || rep.Outcome.Status != StatusHANA ||
		rep.Outcome.Desc != "Detected 3 consecutive errors, last one was: Wrong http response" ||
		rep.Outcome.Duration != -1 || rep.Verdict != VerdictNone {
		t.Fatalf("%+v", rep)
	}
	<-rec.reports
	// layer7 ignores layer-4 successes but counts layer-4 errors.
	s.Observe(EventL4OK)
	s.Observe(EventL4Err)
	s.Observe(EventL4Err)
	if rep := s.Observe(EventL4Err); rep == nil || rep.Health != 2 {
		t.Fatalf("%+v", rep)
	}
	<-rec.reports

	s.SetObserve(ObserveLayer4, 1, OnErrorMarkDown)
	if rep := s.Observe(EventHTTPStatus); rep != nil {
		t.Fatal("layer4 must ignore HTTP statuses")
	}
	rep = s.Observe(EventL4Err)
	if rep == nil || rep.Health != 0 || rep.Verdict != VerdictDown {
		t.Fatalf("mark-down %+v", rep)
	}
	<-rec.reports

	apply(c, Outcome{Status: StatusL4OK})
	apply(c, Outcome{Status: StatusL4OK}) // health 4
	s.SetObserve(ObserveLayer4, 1, OnErrorSuddenDeath)
	rep = s.Observe(EventL4Err)
	if rep == nil || rep.Health != 2 || rep.Verdict != VerdictNone {
		t.Fatalf("sudden-death first error %+v", rep)
	}
	<-rec.reports
	if rep = s.Observe(EventL4Err); rep == nil || rep.Health != 0 || rep.Verdict != VerdictDown {
		t.Fatalf("sudden-death second error %+v", rep)
	}
	<-rec.reports

	s.SetObserve(ObserveLayer4, 1, OnErrorFastInter)
	if rep := s.Observe(EventL4Err); rep != nil {
		t.Fatal("fastinter only reschedules")
	}
}

func TestMaint(t *testing.T) {
	s := NewServer(ServerConfig{Health: &Settings{Rise: 2, Fall: 3}, Disabled: true}, nil)
	if st := s.Health.Snapshot(); st.State&StPaused == 0 || st.Health != 0 || st.Shown() {
		t.Fatalf("%+v", st)
	}
	if !s.LeaveMaint() {
		t.Fatal("health at rise allows running")
	}
	if st := s.Health.Snapshot(); st.State&StPaused != 0 || st.Health != 2 || !st.Shown() {
		t.Fatalf("%+v", st)
	}
	s.EnterMaint()
	if st := s.Health.Snapshot(); st.Health != 0 || st.State&StPaused == 0 {
		t.Fatalf("%+v", st)
	}
	s.Health.ForceHealth(ForceUp)
	if st := s.Health.Snapshot(); st.Health != 4 {
		t.Fatalf("%+v", st)
	}
}

func TestStatColumns(t *testing.T) {
	s := NewServer(ServerConfig{Health: &Settings{}, Agent: &Settings{}}, nil)
	st, code, dur, desc, last := s.Health.Snapshot().StatColumns(false)
	if st != "INI" || code != "" || dur != "" || desc != "Initializing" || last != "" {
		t.Fatalf("%q %q %q %q %q", st, code, dur, desc, last)
	}
	apply(s.Health, Outcome{Status: StatusL7Sts, Code: 503, Desc: "Service Unavailable", Duration: 3 * time.Millisecond})
	st, code, dur, desc, last = s.Health.Snapshot().StatColumns(false)
	if st != "L7STS" || code != "503" || dur != "3" || desc != "Layer7 wrong status" || last != "Service Unavailable" {
		t.Fatalf("%q %q %q %q %q", st, code, dur, desc, last)
	}
	s.EnterMaint()
	if st, _, _, _, _ := s.Health.Snapshot().StatColumns(false); st != "" {
		t.Fatal("paused check shown")
	}
	if st, _, dur, _, _ := s.Agent.Snapshot().StatColumns(true); st != "INI" || dur != "0" {
		t.Fatalf("agent %q %q", st, dur)
	}
}
