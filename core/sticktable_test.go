package core

import (
	"strings"
	"testing"

	"goha/core/stick"
)

// A stick-table line reads into the table HAProxy builds from it.
func TestParseStickTable(t *testing.T) {
	c, warn, err := parseStickTable("stick-table", "fe", strings.Fields("type string len 8 size 2k expire 30s nopurge store gpc(3),gpc_rate(3,1m),conn_rate(10s),http_req_cnt srvkey addr"), false)
	if err != nil || warn != nil {
		t.Fatal(err, warn)
	}
	if c.Key != stick.KeyString || c.KeyLen != 9 || c.Size != 2048 || c.Expire != 30000 || !c.NoPurge || c.SrvKey != "addr" {
		t.Fatalf("%+v", c)
	}
	want := []stick.Stored{{Type: stick.GPC, N: 3}, {Type: stick.GPCRate, N: 3, Period: 60000}, {Type: stick.ConnRate, N: 1, Period: 10000}, {Type: stick.HTTPReqCnt, N: 1}}
	if len(c.Store) != len(want) {
		t.Fatalf("store %+v", c.Store)
	}
	for i := range want {
		if c.Store[i] != want[i] {
			t.Fatalf("store %d: %+v, want %+v", i, c.Store[i], want[i])
		}
	}
	for _, bad := range []string{"type ip", "size 1", "type ip size 1 store gpc", "type ip size 1 store gpc(0)", "type ip size 1 store conn_cnt(1)",
		"type ip size 1 store conn_rate(", "type ip size 1 store bogus", "type ip size x", "type ip size 1 expire 1x", "type ip size 1 srvkey id", "type ip size 1 bogus"} {
		if _, _, err := parseStickTable("stick-table", "fe", strings.Fields(bad), false); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseStickTable(f *testing.F) {
	for _, s := range []string{"type ip size 1m expire 1h store gpc0,conn_rate(10s)", "type string len 32 size 10 store gpc(2),gpc_rate(2,1s)", "type binary len 4 size 1 store server_id,server_key srvkey addr"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		c, _, err := parseStickTable("stick-table", "fe", strings.Fields(line), false)
		if err != nil {
			return
		}
		tb := stick.New(*c)
		e := tb.Get(stick.KeyFromBytes(nil, stick.KeyBinary, max(c.KeyLen, 1), []byte("k")), stick.Now())
		if e != nil {
			tb.AppendEntry(nil, e, stick.Now())
		}
	})
}

// localpeer names this process in peers sections, unless a peers section
// came first (or -L named it): then the host name stays.
func TestLocalPeer(t *testing.T) {
	peers := "peers p\n    peer me 127.0.0.1:10000\n    peer other 127.0.0.1:10001\n    table t type ip size 10\n"
	cfg, msgs := buildText(t, "global\n    localpeer me\n"+peers)
	if len(cfg.Peers) != 1 || cfg.Peers[0].LocalName != "me" || cfg.Peers[0].Local != "127.0.0.1:10000" || len(cfg.Peers[0].Peers) != 1 {
		t.Fatalf("%+v %v", cfg.Peers, msgs)
	}
	if len(cfg.Peers[0].Tables) != 1 || cfg.Peers[0].Tables[0].Name != "p/t" {
		t.Fatalf("tables %+v", cfg.Peers[0].Tables)
	}
	cfg, _ = buildText(t, peers+"global\n    localpeer me\n")
	if len(cfg.Peers) != 0 {
		t.Fatalf("localpeer after the section changed its local peer: %+v", cfg.Peers)
	}
}

// A table that names a peers section needs one, as HAProxy checks.
func TestStickTableUnknownPeers(t *testing.T) {
	_, msgs := buildText(t, "backend b\n    stick-table type ip size 10 peers nope\n")
	found := false
	for _, m := range msgs {
		found = found || m == "[ALERT] config : Proxy 'b': unable to find sync peers 'nope'."
	}
	if !found {
		t.Fatalf("no alert: %q", msgs)
	}
}
