package core

import (
	"slices"
	"strings"
	"testing"
)

// normalize-uri needs expose-experimental-directives in a global section
// read before it; without it HAProxy 2.6 alerts (haproxy -c) and reads no
// further, so the unknown keyword after it is not reported.
func TestExperimentalAction(t *testing.T) {
	const proxies = `defaults
  mode http
frontend f
  bind :8080
  http-request normalize-uri path-merge-slashes
  frobnicate
`
	_, ds := buildText(t, proxies)
	want := []string{"[ALERT] config : parsing [t.cfg:5] : 'normalize-uri' action is experimental, must be allowed via a global 'expose-experimental-directives'"}
	if !slices.Equal(ds, want) {
		t.Errorf("without the directive: %q, want %q", ds, want)
	}
	// A global section after the rule comes too late.
	_, ds = buildText(t, proxies+"global\n  expose-experimental-directives\n")
	if ds = slices.DeleteFunc(ds, func(d string) bool { return !strings.HasPrefix(d, "[ALERT]") }); !slices.Equal(ds, want) {
		t.Errorf("directive after the rule: %q, want %q", ds, want)
	}
	if _, ds := buildText(t, "global\n  expose-experimental-directives\n"+proxies); len(ds) != 1 || ds[0] != "[ALERT] config : parsing [t.cfg:8] : unknown keyword 'frobnicate' in 'frontend' section" {
		t.Errorf("with the directive: %q", ds)
	}
}
