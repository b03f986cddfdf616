//go:build regtest

package runtime_test

import (
	"fmt"
	"goha/core/stream"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"goha/core"
	"goha/core/config"
	"goha/core/diag"
	"goha/regtests/internal/harness"
	"goha/runtime"
)

// mapsCfg uses map files from converters and ACLs (-f, -M, -u, inline
// patterns); @DIR@ is where the files are.
const mapsCfg = `global
    maxconn 1000
%s
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe1
    bind 127.0.0.1:%d
    acl from_lan src -f @DIR@/nets.lst
    acl api path_beg -u 7 /api /v2
    acl known hdr(host) -M -f @DIR@/hosts.map
    acl big req.hdr_cnt(x) gt 3
    http-request set-header x-be %[req.hdr(host),map_str(@DIR@/hosts.map,none)]
    http-request set-header x-pfx %[path,map_beg(@DIR@/paths.map)]
    http-request set-header x-dom %[req.hdr(host),map_dom(@DIR@/hosts.map)]
    http-request set-header x-net %[src,map_ip(@DIR@/nets.map,-)]
    http-request set-header x-n %[req.hdr(x-n),map_int_int(@DIR@/ints.map,0)]
    http-request set-header x-re %[path,map_regm(@DIR@/re.map)]
    http-request set-header x-str-int %[path,map_str_int(@DIR@/nums.map)]
    default_backend be1
backend be1
    server s1 127.0.0.1:%d
`

var mapFiles = map[string]string{
	"nets.lst":  "10.0.0.0/8\n# lan\n192.168.0.0/16\n",
	"hosts.map": "www.example.com be_www\napi.example.com\tbe_api  \n\n  # not a comment\nempty.example.com\n",
	"paths.map": "/ root\n/api/ api\n/api/v2/ api2\n",
	"nets.map":  "10.0.0.0/8 lan\n10.1.0.0/16 lan1\n2001:db8::/32 doc6\n127.0.0.1 self\n",
	"ints.map":  "1:9 1\n10 10\n",
	"re.map":    "^/u/([^/]*)/(.*)$ user=\\1,rest=\\2\n",
	"nums.map":  "/a 1\n/b -2\n",
}

// startMaps runs haproxy and goha (prepared, so that maps are loaded) on
// mapsCfg.
func startMaps(t *testing.T) (*pair, string) {
	hap := "/usr/sbin/haproxy"
	if _, err := os.Stat(hap); err != nil {
		t.Skip("haproxy not installed")
	}
	dir := t.TempDir()
	for name, text := range mapFiles {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	tmpl := strings.ReplaceAll(strings.ReplaceAll(mapsCfg, "@DIR@", dir), "%[", "%%[")
	sockLines := func(prefix string) string {
		var b strings.Builder
		for _, l := range levels {
			fmt.Fprintf(&b, "    stats socket %s level %s\n", filepath.Join(dir, prefix+l+".sock"), l)
		}
		return b.String()
	}
	p1, p2 := harness.FreePort(t), harness.FreePort(t)
	hcfg := fmt.Sprintf(tmpl, sockLines("h-"), p1, p2)
	gp1 := harness.FreePort(t)
	gcfg := fmt.Sprintf(tmpl, sockLines("g-"), gp1, p2)
	// Both files have the same name, in two directories, so that the
	// references' descriptions agree.
	os.MkdirAll(filepath.Join(dir, "h"), 0o755)
	os.MkdirAll(filepath.Join(dir, "g"), 0o755)
	hpath, gpath := filepath.Join(dir, "h", "x.cfg"), filepath.Join(dir, "g", "x.cfg")
	os.WriteFile(hpath, []byte(hcfg), 0o644)
	cmd := exec.Command(hap, "-db", "-f", hpath)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	d := &diag.Collector{}
	cfg := core.Build(config.Parse(gpath, []byte(gcfg), config.Options{Version: "2.6.12"}, d), d)
	p := stream.New(cfg)
	p.Prepare(d)
	if d.HasAlert() {
		t.Fatalf("goha config: %v", d.All())
	}
	srv, err := runtime.Serve(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	pr := &pair{hap: map[string]string{}, goha: map[string]string{}}
	for _, l := range levels {
		pr.hap[l] = filepath.Join(dir, "h-"+l+".sock")
		pr.goha[l] = filepath.Join(dir, "g-"+l+".sock")
	}
	harness.Eventually(t, "haproxy to start", func() bool {
		out, err := send(pr.hap["admin"], "show version\n")
		return err == nil && strings.HasSuffix(out, "\n\n")
	})
	return pr, dir
}

var (
	// HAProxy's internal httpclient proxy has ACLs of its own.
	httpclientACL = regexp.MustCompile(`(?m)^[0-9]+ \(\) acl '[^']*' file 'httpclient' line 0\..*\n`)
	entryID       = regexp.MustCompile(`0x[0-9a-f]+`)
	cfgDirRe      = regexp.MustCompile(`/[hg]/x\.cfg`)
)

func maskMaps(s string) string {
	s = httpclientACL.ReplaceAllString(s, "")
	return cfgDirRe.ReplaceAllString(entryID.ReplaceAllString(mask(s), "ID"), "/X/x.cfg")
}

// firstID returns the entry id show map prints first for key.
func firstID(t *testing.T, path, ref, key string) string {
	out, err := send(path, "show map "+ref+"\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, ln := range strings.Split(out, "\n") {
		if f := strings.Fields(ln); len(f) >= 2 && f[1] == key {
			return f[0]
		}
	}
	t.Fatalf("no %s in %q", key, out)
	return ""
}

// TestMapCommandsLikeHAProxy sends the map and acl commands, good and
// bad, at each level, to HAProxy 2.6 and goha, and compares the replies,
// entry ids and configuration paths masked.
func TestMapCommandsLikeHAProxy(t *testing.T) {
	pr, dir := startMaps(t)
	f := func(n string) string { return filepath.Join(dir, n) }
	cmds := []string{
		"show map", "show acl",
		"show map " + f("hosts.map"), "show map #0", "show map #1", "show map #", "show map #99", "show map nosuch",
		"show map @0 " + f("hosts.map"), "show map @1 " + f("hosts.map"), "show map @1",
		"show acl " + f("nets.lst"), "show acl #7", "show acl " + f("hosts.map"), "show map " + f("nets.lst"),
		"get map " + f("hosts.map") + " www.example.com",
		"get map " + f("hosts.map") + " a.www.example.com",
		"get map " + f("hosts.map") + " nothing",
		"get map " + f("paths.map") + " /api/v2/x",
		"get map " + f("paths.map") + " /api/v3",
		"get map " + f("nets.map") + " 10.1.2.3",
		"get map " + f("nets.map") + " 2001:db8::1",
		"get map " + f("nets.map") + " ::ffff:10.9.9.9",
		"get map " + f("nets.map") + " 127.0.0.1",
		"get map " + f("nets.map") + " nonsense",
		"get map " + f("ints.map") + " 5",
		"get map " + f("ints.map") + " 10",
		"get map " + f("ints.map") + " x",
		"get map " + f("re.map") + " /u/bob/x/y",
		"get map " + f("nums.map") + " /b",
		"get acl " + f("nets.lst") + " 10.2.3.4", "get acl " + f("nets.lst") + " 11.2.3.4",
		"get acl #7 /api/x", "get acl #7 /v3",
		"get map", "get map " + f("hosts.map"), "get acl nosuch x", "get map nosuch x",
		"add map " + f("hosts.map") + " new.example.com be_new",
		"add map " + f("hosts.map") + " only.key",
		"add map", "add map nosuch k v", "add acl", "add acl " + f("nets.lst"),
		"add map " + f("nets.map") + " 10.2.0.0/16 lan2",
		"add map " + f("nets.map") + " notanip x",
		"add map " + f("ints.map") + " x y",
		"add map " + f("nums.map") + " /c notanint",
		"add acl " + f("nets.lst") + " 172.16.0.0/12",
		"add acl " + f("nets.lst") + " bogus",
		"add acl " + f("hosts.map") + " x",
		"add acl #7 /v3",
		"get acl #7 /v3",
		"add map @1 " + f("hosts.map") + " future v",
		"prepare map " + f("hosts.map"), "prepare map nosuch", "prepare acl " + f("hosts.map"), "prepare map " + f("nets.lst"),
		"add map @1 " + f("hosts.map") + " v1.example.com be_v1",
		"add map @2 " + f("hosts.map") + " v2.example.com be_v2",
		"show map @1 " + f("hosts.map"),
		"show map",
		"get map " + f("hosts.map") + " v1.example.com",
		"commit map @5 " + f("hosts.map"), "commit map " + f("hosts.map"), "commit map @1", "commit map @1 nosuch",
		"commit map @1 " + f("hosts.map"),
		"show map " + f("hosts.map"),
		"get map " + f("hosts.map") + " v1.example.com",
		"commit map @1 " + f("hosts.map"), "commit map @0 " + f("hosts.map"),
		"set map " + f("hosts.map") + " v1.example.com be_set",
		"set map " + f("hosts.map") + " nosuch v",
		"set map " + f("hosts.map"), "set map nosuch k v",
		"set map " + f("hosts.map") + " #0xzz v",
		"set map " + f("hosts.map") + " #0x1 v",
		"set map " + f("nums.map") + " /a NaN",
		"set map " + f("nums.map") + " /a 42",
		"get map " + f("nums.map") + " /a",
		"del map " + f("hosts.map") + " v1.example.com",
		"del map " + f("hosts.map") + " v1.example.com",
		"del map " + f("hosts.map"), "del map nosuch k", "del acl " + f("hosts.map") + " x", "del acl nosuch x",
		"del map " + f("hosts.map") + " #0xzz", "del map " + f("hosts.map") + " #0x1",
		"del map " + f("nets.lst") + " 10.0.0.0/8",
		"del acl " + f("nets.lst") + " 10.0.0.0/8",
		"show acl " + f("nets.lst"),
		"clear map", "clear map nosuch", "clear map @3 " + f("paths.map"),
		"show map " + f("paths.map"),
		"clear map " + f("paths.map"),
		"show map " + f("paths.map"),
		"clear acl #7", "show acl #7",
		"add map " + f("paths.map") + " <<\n/x/ x\n/y/\ty\n",
		"add map " + f("paths.map") + " <<\n/z/\n",
		"show map " + f("paths.map"),
		"show map",
		"show acl",
	}
	for _, level := range []string{"admin", "user"} {
		for _, c := range cmds {
			h, g := pr.both(t, level, c+"\n")
			if hm, gm := maskMaps(h), maskMaps(g); hm != gm {
				t.Errorf("%s: %q\nhaproxy: %q\ngoha:    %q", level, c, hm, gm)
			}
		}
	}
	// Entries named by their ids.
	for _, verb := range []string{"set map %s %s changed", "del map %s %s"} {
		ref := f("hosts.map")
		hid, gid := firstID(t, pr.hap["admin"], ref, "new.example.com"), firstID(t, pr.goha["admin"], ref, "new.example.com")
		h, _ := send(pr.hap["admin"], fmt.Sprintf(verb, ref, "#"+hid)+"\n")
		g, _ := send(pr.goha["admin"], fmt.Sprintf(verb, ref, "#"+gid)+"\n")
		hs, _ := send(pr.hap["admin"], "show map "+ref+"\n")
		gs, _ := send(pr.goha["admin"], "show map "+ref+"\n")
		if maskMaps(h+hs) != maskMaps(g+gs) {
			t.Errorf("%q by id:\nhaproxy: %q\ngoha:    %q", verb, maskMaps(h+hs), maskMaps(g+gs))
		}
	}
}
