//go:build regtest

package config

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"goha/regtests/internal/bin"
)

// TestUserlistDiagnostics compares everything goha -c and haproxy -c print
// (process ids masked) for userlist sections and the authentication
// fetches and action.
func TestUserlistDiagnostics(t *testing.T) {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed")
	}
	goha := bin.Path(t, "goha")
	const head = "defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n"
	const fe = "frontend fe\n  bind 127.0.0.1:80\n"
	const ul = "userlist L1\n  group G1\n  user a insecure-password x groups G1\n"
	pid := regexp.MustCompile(`\(\d+\)`)
	for _, c := range []struct{ name, cfg string }{
		{"valid", "userlist a\n  group g users u,,u\n  user u insecure-password x groups g,,g\n  user v password\n" + head + fe +
			"  acl ok http_auth(a)\n  acl grp http_auth_group(a) g\n  http-request auth if !ok || !grp\n  http-request return status 200 hdr x %[http_auth_group(a)]\n"},
		{"unknown-userlist-acl", ul + head + fe + "  acl a1 http_auth(L9)\n  http-request deny if a1\n"},
		{"unknown-userlist-anon", ul + head + fe + "  http-request deny if { http_auth(L9) }\n"},
		{"unknown-userlist-lf", ul + head + fe + "  http-request return status 200 hdr x %[http_auth(L7)]\n"},
		{"missing-userlist", ul + head + fe + "  http-request deny if { http_auth }\n"},
		{"invalid-groups", ul + head + fe + "  acl g3 http_auth_group(L1) -m sub a G1 b\n  http-request deny if g3 { http_auth_group(L1) G7 G8 }\n"},
		{"tree-method", ul + head + fe + "  acl g2 http_auth_group(L1) -m str a\n  http-request deny if g2\n"},
		{"final-auth", ul + head + fe + "  http-request auth\n  http-request deny\n"},
		{"header", "userlist\nuserlist a b\nuserlist a/b\n"},
		{"duplicates", "userlist a\nuserlist a\n  group g\n  group g\n  user u\n  user u\n" + head + fe},
		{"keywords", "userlist a\n  group\n  user\n  group g/h\n  group g foo bar\n  user u foo bar\n  frob x\n"},
		{"no-group", "userlist a\n  user u groups g1,g2\n  user v groups g3\n" + head + fe},
		{"no-user", "userlist a\n  group g users u,v\n" + head + fe},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "t.cfg"), []byte(c.cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			run := func(prog string) string {
				cmd := exec.Command(prog, "-c", "-f", "t.cfg")
				cmd.Dir = dir
				out, _ := cmd.CombinedOutput()
				var keep []byte
				for _, l := range regexp.MustCompile(`(?m)^.*\n?`).FindAll(out, -1) {
					if !regexp.MustCompile(`^\[NOTICE\]`).Match(l) {
						keep = append(keep, l...)
					}
				}
				return pid.ReplaceAllString(string(keep), "(pid)")
			}
			if g, h := run(goha), run(haproxy); g != h {
				t.Errorf("goha:\n%s\nhaproxy:\n%s", g, h)
			}
		})
	}
}
