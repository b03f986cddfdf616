package core

import (
	"reflect"
	"strings"
	"testing"

	"goha/core/comp"
	"goha/core/config"
	"goha/core/diag"
)

func compBuild(t *testing.T, text string) (*Config, string) {
	t.Helper()
	var d diag.Collector
	secs := config.Parse("t.cfg", []byte(text), config.Options{}, &d)
	c := Build(secs, &d)
	var b strings.Builder
	for _, x := range d.All() {
		b.WriteString(x.Line(0))
		b.WriteByte('\n')
	}
	return c, b.String()
}

// TestCompressionInheritance checks HAProxy's lists: each line's words go
// in front, a defaults section's algorithms and types follow a proxy's
// own, and offload is not inherited.
func TestCompressionInheritance(t *testing.T) {
	c, diags := compBuild(t, `defaults
  mode http
  compression algo identity
  compression type text/css
frontend f
  bind 127.0.0.1:8
  compression algo gzip deflate
  compression offload
  default_backend b
backend b
  compression type text/plain text/html
`)
	if strings.Contains(diags, "ALERT") {
		t.Fatalf("unexpected alerts:\n%s", diags)
	}
	fe, be := c.Proxies[0], c.Proxies[1]
	if want := []comp.Algo{comp.Deflate, comp.Gzip, comp.Identity}; !reflect.DeepEqual(fe.Comp.Algos, want) {
		t.Errorf("frontend algos %v, want %v", fe.Comp.Algos, want)
	}
	if want := []string{"text/css"}; !reflect.DeepEqual(fe.Comp.Types, want) {
		t.Errorf("frontend types %v, want %v", fe.Comp.Types, want)
	}
	if !fe.Comp.Offload || be.Comp.Offload {
		t.Errorf("offload: frontend %v, backend %v", fe.Comp.Offload, be.Comp.Offload)
	}
	if want := []string{"text/html", "text/plain", "text/css"}; !reflect.DeepEqual(be.Comp.Types, want) {
		t.Errorf("backend types %v, want %v", be.Comp.Types, want)
	}
	if want := []comp.Algo{comp.Identity}; !reflect.DeepEqual(be.Comp.Algos, want) {
		t.Errorf("backend algos %v, want %v", be.Comp.Algos, want)
	}
	c, _ = compBuild(t, "defaults\n  mode http\nbackend b\n")
	if c.Proxies[0].Comp != nil {
		t.Error("a backend without compression lines has settings")
	}
}

// TestCompressionDiagnostics compares the messages with the real
// HAProxy's: every line it prints must be among goha's, in order.
func TestCompressionDiagnostics(t *testing.T) {
	cases := map[string]string{
		"syntax": `defaults
  mode http
  compression offload
  compression algo
frontend f
  bind 127.0.0.1:8
  compression foo
  compression type
  compression algo gzip brotli
  filter compression x
`,
		"twice": `frontend f
  mode http
  bind 127.0.0.1:8
  filter compression
  filter compression
`,
		"global": `global
  maxzlibmem
  maxcompcpuusage 101
  tune.comp.maxlevel 10
  tune.comp.maxlevel 3 4
  tune.comp.maxlevel
`,
	}
	for name, input := range cases {
		t.Run(name, func(t *testing.T) {
			hap := captureHAProxyDiags(t, name, input)
			_, got := compBuild(t, input)
			got = strings.ReplaceAll(got, "t.cfg", name+".cfg")
			g := strings.Split(got, "\n")
			k := 0
			for _, h := range strings.Split(strings.TrimSuffix(hap, "\n"), "\n") {
				if h == "" {
					continue
				}
				for k < len(g) && g[k] != h {
					k++
				}
				if k == len(g) {
					t.Fatalf("HAProxy printed a line goha does not (in this order):\n%s\n--- goha\n%s--- haproxy\n%s", h, got, hap)
				}
				k++
			}
		})
	}
}

// TestCompressionLimitsRefused: the limits goha does not implement are
// refused unless they set no limit; maxcomprate and tune.comp.maxlevel
// are kept.
func TestCompressionLimitsRefused(t *testing.T) {
	for line, refused := range map[string]bool{
		"maxzlibmem 0": false, "maxzlibmem 64": true,
		"maxcompcpuusage 100": false, "maxcompcpuusage 50": true,
		"maxcomprate 0": false, "maxcomprate 100": false,
		"tune.comp.maxlevel 9": false,
	} {
		_, diags := compBuild(t, "global\n  "+line+"\n")
		if got := strings.Contains(diags, "ALERT"); got != refused {
			t.Errorf("%q: refused %v, want %v:\n%s", line, got, refused, diags)
		}
	}
	c, _ := compBuild(t, "global\n  tune.comp.maxlevel 6\n  maxcomprate 300\n")
	if c.Global.CompMaxLevel != 6 {
		t.Errorf("tune.comp.maxlevel: %d", c.Global.CompMaxLevel)
	}
	if got := c.RateLimit(RateCompression); got != 300 {
		t.Errorf("maxcomprate: %d", got)
	}
}

// TestCompFilterRule: a proxy with other filters must declare the
// compression filter, which must not precede a cache filter.
func TestCompFilterRule(t *testing.T) {
	b := &builder{cfg: &Config{}, d: &diag.Collector{}}
	mk := func(name string, filters ...string) *Proxy {
		return &Proxy{Name: name, Cap: CapFE, ProxyConf: ProxyConf{Comp: &Compression{}}, filterOrder: filters}
	}
	b.cfg.Proxies = []*Proxy{mk("a", "trace"), mk("b", "compression", "cache:x"), mk("c", "cache:x", "compression"), mk("d"), mk("e", "fcgi-app")}
	checkCompFilter(b)
	var got []string
	for _, x := range b.d.All() {
		got = append(got, x.Msg)
	}
	want := []string{
		"config: frontend 'a': require an explicit filter declaration to use HTTP compression",
		"config: frontend 'b': unable to enable the compression filter before any cache filter.",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
