package core

import "testing"

// A named defaults section's http-request capture ... len rules declare
// slots that the frontends inheriting them have first, each its own copy,
// as HAProxy 2.6 does (reg-tests/http-rules/default_rules.vtc).
func TestDefaultsCaptureSlots(t *testing.T) {
	cfg, ds := buildText(t, `defaults base
  mode http
  timeout client 1s
  timeout connect 1s
  timeout server 1s
  http-request capture hdr(host) len 64
  http-request capture hdr(x-a) len 32
frontend f1 from base
  bind :8080
  declare capture request len 16
  http-request capture hdr(x-b) id 2
frontend f2 from base
  bind :8081
  http-request capture hdr(x-b) id 1
`)
	if len(ds) != 0 {
		t.Fatalf("diagnostics: %q", ds)
	}
	f1, f2 := cfg.FindProxy("f1", CapFE), cfg.FindProxy("f2", CapFE)
	if len(f1.ReqCaps) != 3 || f1.ReqCaps[0].Len != 64 || f1.ReqCaps[1].Len != 32 || f1.ReqCaps[2].Len != 16 {
		t.Errorf("f1 slots: %+v", f1.ReqCaps)
	}
	if len(f2.ReqCaps) != 2 {
		t.Errorf("f2 slots: %+v", f2.ReqCaps)
	}
	if got := f1.HTTPReqRules[0].Words; len(got) < 4 || got[2] != "id" || got[3] != "0" {
		t.Errorf("f1's first rule: %q", got)
	}
}
