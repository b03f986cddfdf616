package check

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// spoaFrame builds a length-prefixed SPOP frame of the given type, flags
// and items (key, then an already encoded typed value).
func spoaFrame(typ byte, flags uint32, items ...[]byte) []byte {
	f := []byte{typ}
	f = binary.BigEndian.AppendUint32(f, flags)
	f = append(f, 0, 0)
	for _, it := range items {
		f = append(f, it...)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(f))), f...)
}

func spoaStr(key, val string) []byte {
	b := spopPutString(nil, key)
	b = append(b, spopTypeStr)
	return spopPutString(b, val)
}

func spoaUint(key string, v uint64) []byte {
	b := spopPutString(nil, key)
	b = append(b, spopTypeUint32)
	return spopPutVarint(b, v)
}

func spoaHello(version string, maxFrame uint64) []byte {
	return spoaFrame(spopAgentHello, spopFlagFin, spoaStr("version", version), spoaUint("max-frame-size", maxFrame), spoaStr("capabilities", ""))
}

func spoaDiscon(code uint64, msg string) []byte {
	return spoaFrame(spopAgentDiscon, spopFlagFin, spoaUint("status-code", code), spoaStr("message", msg))
}

// spoa is a small SPOE agent: it reads the whole HAPROXY-HELLO frame
// (checking it is one), then answers reply and closes.
func spoa(t testing.TB, reply []byte) *responder {
	return newResponder(t, func(c net.Conn) {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		var hdr [4]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		f := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(c, f); err != nil || len(f) == 0 || f[0] != spopHAProxyHello {
			return
		}
		c.Write(reply)
	})
}

func TestSPOPHelloFrame(t *testing.T) {
	// The 82-byte frame of HAProxy's spop-check reg-test, field by field.
	want := "0000004e" + "01" + "00000001" + "0000" +
		"12" + hex.EncodeToString([]byte("supported-versions")) + "08" + "03" + hex.EncodeToString([]byte("2.0")) +
		"0e" + hex.EncodeToString([]byte("max-frame-size")) + "03" + "fcf006" +
		"0c" + hex.EncodeToString([]byte("capabilities")) + "08" + "00" +
		"0b" + hex.EncodeToString([]byte("healthcheck")) + "11"
	if got := hex.EncodeToString(spopHealthcheckHello()); got != want {
		t.Fatalf("hello frame\n got  %s\n want %s", got, want)
	}
	if code, ok := spopCheckAgentFrame(spoaHello("2.0", 16380)[4:]); !ok {
		t.Fatalf("own agent hello refused: %s", spopErrorText(code))
	}
}

func TestSPOPCheck(t *testing.T) {
	rules := backendRules(t, w("option", "spop-check"))
	if rules.Proto != ProtoSPOP || rules.Set != SPOPRuleset() {
		t.Fatalf("option spop-check selected %v", rules.Proto)
	}
	regtestHello, _ := hex.DecodeString("00000036650000000100000776657273696F6E0803322E300E6D61782D6672616D652D73697A6503FCF0060C6361706162696C69746965730800")
	cases := []struct {
		name  string
		reply []byte
		st    Status
		desc  string
	}{
		{"hello", regtestHello, StatusL7OK, ""},
		{"empty-frame", []byte{0, 0, 0, 0}, StatusL7Rsp, "invalid frame received"},
		{"fragmented", spoaFrame(spopAgentHello, 0), StatusL7Rsp, "fragmentation not supported"},
		{"old-version", spoaFrame(spopAgentHello, spopFlagFin, spoaStr("version", "1.0")), StatusL7Rsp, "unsupported version"},
		{"bad-version", spoaHello("2.x", 16380), StatusL7Rsp, "unsupported version"},
		{"no-version", spoaFrame(spopAgentHello, spopFlagFin, spoaUint("max-frame-size", 1024)), StatusL7Rsp, "version value not found"},
		{"no-frame-size", spoaFrame(spopAgentHello, spopFlagFin, spoaStr("version", " 2.0 ")), StatusL7Rsp, "max-frame-size value not found"},
		{"small-frame", spoaHello("2.0", 255), StatusL7Rsp, "max-frame-size too big or too small"},
		{"big-frame", spoaHello("2.0", 16381), StatusL7Rsp, "max-frame-size too big or too small"},
		{"stream-id", append(spoaHello("2.0", 1024)[:9:9], append([]byte{1}, spoaHello("2.0", 1024)[10:]...)...), StatusL7Rsp, "invalid frame received"},
		{"garbage", []byte("HTTP/1.0 400 Bad Request\r\n\r\n"), StatusL7Rsp, "invalid frame received"},
		{"truncated", spoaHello("2.0", 1024)[:20], StatusL7Rsp, "invalid frame received"},
		{"short", []byte{0, 0}, StatusL7Rsp, "invalid frame received"},
		{"disconnect", spoaDiscon(spopErrBadFrameSize, "too big for me"), StatusL7Rsp, "max-frame-size too big or too small"},
		{"disconnect-normal", spoaDiscon(0, ""), StatusL7Rsp, "normal"},
		{"disconnect-unknown", spoaDiscon(1000, "?"), StatusL7Rsp, "an unknown error occurred"},
		{"disconnect-unassigned", spoaDiscon(50, "?"), StatusL7Rsp, "an unknown error occurred"},
		{"ack", spoaFrame(103, spopFlagFin), StatusL7Rsp, "invalid frame received"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := spoa(t, c.reply)
			o := run(t, rules, a.target(), shortTO)
			wantOutcome(t, o, c.st, 0, c.desc)
			if c.st == StatusL7OK {
				if o.Prior == nil || o.Prior.Status != StatusL7OK || o.Prior.Desc != "SPOA server is ok" {
					t.Fatalf("no early result: %+v", o.Prior)
				}
			} else if o.Prior != nil {
				t.Fatalf("early result on failure: %+v", o.Prior)
			}
		})
	}
	// An agent that closes without answering, one that never answers.
	closed := newResponder(t, func(c net.Conn) { readSome(c) })
	wantOutcome(t, run(t, rules, closed.target(), shortTO), StatusL7Rsp, 0, "TCPCHK got an empty response at step 2")
	silent := newResponder(t, func(c net.Conn) { readSome(c); time.Sleep(time.Second) })
	wantOutcome(t, run(t, rules, silent.target(), Timeouts{Inter: 200 * time.Millisecond}), StatusL7TOut, 0, "")
	wantOutcome(t, run(t, rules, &Target{Addr: "127.0.0.1", Port: closedPort(t)}, shortTO), StatusL4Con, 0, "Connection refused")
}

// A successful spop-check probe counts twice while the server rises, and
// is logged twice, the second time without info, as HAProxy 2.6 does.
func TestSPOPCheckCountsTwice(t *testing.T) {
	regtestHello := spoaHello("2.0", 16380)
	a := spoa(t, regtestHello)
	rules := backendRules(t, w("option", "spop-check"))
	rec := &recorder{reports: make(chan Report, 10)}
	s := NewServer(ServerConfig{Backend: "be", Name: "s", Addr: "127.0.0.1", Port: a.port(),
		Health: &Settings{Rules: rules, Rise: 3, Fall: 3, Inter: time.Second}}, rec)
	s.Health.ForceHealth(ForceDown)
	var lines []string
	for probe := 0; probe < 2; probe++ {
		if !s.Health.probeOnce(t.Context()) {
			t.Fatal("probe did not run")
		}
	}
	close(rec.reports)
	var verdicts []Verdict
	for rep := range rec.reports {
		verdicts = append(verdicts, rep.Verdict)
		if rep.Logged {
			lines = append(lines, CheckLogText(&rep, false, "be", "s", false))
		}
	}
	want := []string{
		`Health check for server be/s succeeded, reason: Layer7 check passed, code: 0, info: "SPOA server is ok", check duration: `,
		`Health check for server be/s succeeded, reason: Layer7 check passed, code: 0, check duration: `,
		`Health check for server be/s succeeded, reason: Layer7 check passed, code: 0, info: "SPOA server is ok", check duration: `,
	}
	if len(lines) != len(want) {
		t.Fatalf("logged %d lines, want %d: %q", len(lines), len(want), lines)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d\n got  %s\n want %s...", i, lines[i], want[i])
		}
	}
	for i, suffix := range []string{"status: 1/3 DOWN.", "status: 2/3 DOWN.", "status: 3/3 UP."} {
		if !strings.HasSuffix(lines[i], suffix) {
			t.Errorf("line %d %q does not end with %q", i, lines[i], suffix)
		}
	}
	// Only the last result of a probe may change the server's state.
	if !bytes.Equal([]byte{byte(verdicts[0]), byte(verdicts[2])}, []byte{byte(VerdictNone), byte(VerdictNone)}) || verdicts[3] != VerdictUp {
		t.Errorf("verdicts %v", verdicts)
	}
	if st := s.Health.Snapshot(); st.Desc != "" || st.Status != StatusL7OK {
		t.Errorf("stat info %q status %s, want empty info, L7OK", st.Desc, st.Status)
	}
}

// FuzzSPOPAgentFrame feeds arbitrary answers to the spop-check decoder:
// it must never panic nor read past the frame, and only a well-formed
// AGENT-HELLO may pass.
func FuzzSPOPAgentFrame(f *testing.F) {
	f.Add(spoaHello("2.0", 16380))
	f.Add(spoaDiscon(3, "too big"))
	f.Add(spoaFrame(spopAgentHello, spopFlagFin, spoaStr("version", "2.0"), spoaUint("max-frame-size", 1<<40)))
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte("\x00\x00\x00\x0ae\x00\x00\x00\x01\x00\x00\x07version"))
	rules := SPOPRuleset()
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 4 {
			frame := in[4:]
			code, ok := spopCheckAgentFrame(frame)
			if ok && (code != spopErrNone || frame[0] != spopAgentHello) {
				t.Fatalf("passed with code %d, type %d", code, frame[0])
			}
			if !ok && spopErrorText(code) == "" {
				t.Fatalf("no text for code %d", code)
			}
			// A passing frame still passes with bytes after it: the length
			// prefix bounds it.
			if ok {
				if _, ok2 := spopCheckAgentFrame(frame); !ok2 {
					t.Fatal("not deterministic")
				}
			}
		}
		for _, last := range []bool{false, true} {
			p := &probe{rules: &Rules{Set: rules, Proto: ProtoSPOP}, target: &Target{}, in: in}
			ret := spopExpect(p, rules.Rules[len(rules.Rules)-1], last)
			if last && ret == evalWait {
				t.Fatal("waits after the last read")
			}
			if ret == evalStop && p.out.Status != StatusL7Rsp {
				t.Fatalf("stopped with %s", p.out.Status)
			}
		}
	})
}

// FuzzSPOPVarint checks that SPOP's variable-length integers read back as
// written.
func FuzzSPOPVarint(f *testing.F) {
	for _, v := range []uint64{0, 239, 240, 2287, 2288, 16380, 1<<64 - 1} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v uint64) {
		b := spopPutVarint(nil, v)
		r := &spopReader{b: b, ok: true}
		if got := r.varint(); !r.ok || got != v || len(r.b) != 0 {
			t.Fatalf("%d encoded as %x read back as %d (ok %v, %d left)", v, b, got, r.ok, len(r.b))
		}
	})
}
