package core

import (
	"encoding/base64"
	"goha/core/http1"
	"strings"
	"testing"

	"goha/core/config"
	"goha/core/diag"
	"goha/core/sample"
)

// Hashes made with `openssl passwd -6|-5|-1 -salt saltsalt secretN`.
const (
	hash6 = "$6$saltsalt$LMtDgChSrV.wGnnrAr7LXtxT9OYdesYYRBi0J7VAO0UoNpOTX5uxqMPmQ0Gkk2HMqd/t1jYDOamm5q1ro0ZhX/"
	hash5 = "$5$saltsalt$708Qd1GA5FblAgceNooXo6mCmXw7DIUSz5IHtzs/2E6"
	hash1 = "$1$saltsalt$2HM3oGhH6VPi/5dxZ798f/"
)

func buildText(t testing.TB, src string) (*Config, []string) {
	t.Helper()
	d := &diag.Collector{}
	secs := config.Parse("t.cfg", []byte(src), config.Options{}, d)
	cfg := Build(secs, d)
	var out []string
	for _, x := range d.All() {
		out = append(out, strings.TrimSpace(x.Sev.Tag())+" "+x.Text())
	}
	return cfg, out
}

const authUsers = `userlist L1
  group admin users six
  group ops
  user six password ` + hash6 + `
  user five password ` + hash5 + ` groups ops
  user one password ` + hash1 + `
  user plain insecure-password pw groups ops,admin
  user locked password *
  user nopass
`

func TestUserlistCheck(t *testing.T) {
	cfg, ds := buildText(t, authUsers)
	if len(ds) != 0 {
		t.Fatalf("diagnostics: %q", ds)
	}
	ul := cfg.FindUserlist("L1")
	if ul == nil {
		t.Fatal("no userlist L1")
	}
	for _, c := range []struct {
		user, pass string
		ok         bool
	}{
		{"six", "secret6", true}, {"six", "secret6", true}, // the second one from the cache
		{"six", "secret5", false}, {"five", "secret5", true}, {"one", "secret1", true},
		{"plain", "pw", true}, {"plain", "pw ", false}, {"plain", "", false},
		{"locked", "*", false}, {"locked", "", false}, {"nopass", "", false},
		{"nobody", "pw", false}, {"Six", "secret6", false},
	} {
		if got := ul.Check([]byte(c.user), []byte(c.pass)); got != c.ok {
			t.Errorf("Check(%q, %q) = %v, want %v", c.user, c.pass, got, c.ok)
		}
	}
	groups := map[string][]string{"six": {"admin"}, "five": {"ops"}, "plain": {"admin", "ops"}, "one": nil}
	for user, want := range groups {
		for _, g := range []string{"admin", "ops"} {
			in := strings.Contains(strings.Join(want, ","), g)
			if got := ul.InGroup([]byte(user), g); got != in {
				t.Errorf("InGroup(%q, %q) = %v, want %v", user, g, got, in)
			}
		}
	}
	if !ul.HasGroup("ops") || ul.HasGroup("nope") {
		t.Error("HasGroup")
	}
}

// TestUserlistErrors compares with what haproxy -c (2.6.12) says of the
// same lines.
func TestUserlistErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"userlist\n", "[ALERT] config : parsing [t.cfg:1]: 'userlist' expects <name> as arguments."},
		{"userlist a b\n", "[ALERT] config : parsing [t.cfg:1] : 'userlist' cannot handle unexpected argument 'b'."},
		{"userlist a/b\n", "[ALERT] config : parsing [t.cfg:1]: character '/' is not permitted in 'userlist' name 'a/b'."},
		{"userlist a\nuserlist a\n", "[WARNING] config : parsing [t.cfg:2]: ignoring duplicated userlist 'a'."},
		{"userlist a\n group\n", "[ALERT] config : parsing [t.cfg:2]: 'group' expects <name> as arguments."},
		{"userlist a\n user\n", "[ALERT] config : parsing [t.cfg:2]: 'user' expects <name> as arguments."},
		{"userlist a\n group g/h\n", "[ALERT] config : parsing [t.cfg:2]: character '/' is not permitted in 'group' name 'g/h'."},
		{"userlist a\n group g foo bar\n", "[ALERT] config : parsing [t.cfg:2]: 'group' only supports 'users' option."},
		{"userlist a\n user u foo bar\n", "[ALERT] config : parsing [t.cfg:2]: 'user' only supports 'password', 'insecure-password' and 'groups' options."},
		{"userlist a\n frob x\n", "[ALERT] config : parsing [t.cfg:2]: unknown keyword 'frob' in 'users' section"},
		{"userlist a\n group g\n group g\n", "[WARNING] config : parsing [t.cfg:3]: ignoring duplicated group 'g' in userlist 'a'."},
		{"userlist a\n user u\n user u\n", "[WARNING] config : parsing [t.cfg:3]: ignoring duplicated user 'u' in userlist 'a'."},
		{"userlist a\n user u groups g1,g2\n user v groups g3\n", "[ALERT] config : userlist 'a': no such group 'g3' specified in user 'v'"},
		{"userlist a\n group g users u,v\n", "[ALERT] config : userlist 'a': no such user 'u' specified in group 'g'"},
		// goha's own: schemes it does not compute are refused.
		{"userlist a\n user bob password $2y$05$abcdefghijklmnopqrstuu0oImNDIy4flhldV9YqunRgBAePKmw7m\n",
			"[ALERT] config : parsing [t.cfg:2]: the encrypted password used for user 'bob' uses bcrypt, which is not supported by goha."},
		{"userlist a\n user y password $y$j9T$abc$def\n",
			"[ALERT] config : parsing [t.cfg:2]: the encrypted password used for user 'y' uses yescrypt, which is not supported by goha."},
	} {
		_, ds := buildText(t, c.src)
		if len(ds) == 0 || ds[0] != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.src, ds, c.want)
		}
	}
	// Accepted as HAProxy accepts them: empty names in lists, a password
	// crypt(3) refuses (the user can never log in).
	for _, src := range []string{
		"userlist a\n group g users u,,u\n user u insecure-password x groups g,,g\n",
		"userlist a\n user v password\n user w password !\n",
	} {
		if _, ds := buildText(t, src); len(ds) != 0 {
			t.Errorf("%q: %q", src, ds)
		}
	}
}

// TestUserlistLinesAfterDuplicate: HAProxy adds the lines after an ignored
// header to the last list it created.
func TestUserlistLinesAfterDuplicate(t *testing.T) {
	cfg, _ := buildText(t, "userlist a\nuserlist b\nuserlist a\n user x insecure-password y\n")
	if !cfg.FindUserlist("b").Check([]byte("x"), []byte("y")) || cfg.FindUserlist("a").Check([]byte("x"), []byte("y")) {
		t.Error("user x is not in userlist b")
	}
}

// TestAuthFetches runs http_auth and http_auth_group on requests, the
// userlist reaching them through sample.Env as the process hands it.
func TestAuthFetches(t *testing.T) {
	cfg, _ := buildText(t, authUsers)
	env := &sample.Env{Userlists: cfg.SampleUserlists()}
	basic := func(up string) *sample.Request {
		raw := "GET / HTTP/1.1\r\nHost: h\r\n"
		if up != "" {
			raw += "Authorization: Basic " + b64(up) + "\r\n"
		}
		return headRequest(t, raw+"\r\n")
	}
	for _, c := range []struct {
		cred, acl string
		want      bool
	}{
		{"six:secret6", "http_auth(L1)", true},
		{"six:wrong", "http_auth(L1)", false},
		{"", "http_auth(L1)", false},
		{"five:secret5", "http_auth_group(L1) ops", true},
		{"five:secret5", "http_auth_group(L1) admin", false},
		{"five:wrong", "http_auth_group(L1) ops", false},
		{"plain:pw", "http_auth_group(L1) admin ops", true},
		{"one:secret1", "http_auth_group(L1) admin ops", false},
		{"plain:pw", "http_auth_group(L1) -m str plain", false}, // HAProxy: "no groups specified"
		{"plain:pw", "http_auth_group(L1) -m sub admin", false},
	} {
		term, err := sample.CompileACL(env, strings.Fields(c.acl))
		if err != nil {
			if c.want {
				t.Errorf("%s: %v", c.acl, err)
			}
			continue
		}
		if got := term.Eval(basic(c.cred)); got != c.want {
			t.Errorf("%s with %q = %v, want %v", c.acl, c.cred, got, c.want)
		}
	}
	e, err := sample.CompileLF(env, "%[http_auth_group(L1)]|%[http_auth(L1)]")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(e.AppendTo(nil, basic("plain:pw"))); got != "plain|1" {
		t.Errorf("got %q", got)
	}
	if got := string(e.AppendTo(nil, basic("plain:no"))); got != "|0" {
		t.Errorf("got %q", got)
	}
	for _, c := range []struct{ expr, want string }{
		{"http_auth(L9)", "unable to find userlist 'L9' referenced in arg 1 of sample fetch keyword 'http_auth'"},
		{"http_auth", "missing userlist name in arg 1 of sample fetch keyword 'http_auth'"},
		{"http_auth_group()", "missing userlist name in arg 1 of sample fetch keyword 'http_auth_group'"},
	} {
		_, err := sample.CompileExpr(env, c.expr)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.expr, err, c.want)
		}
	}
	if _, err := sample.CompileACL(env, []string{"http_auth_group(L1)", "ops", "nope"}); err == nil || err.Error() != "http_auth_group(): invalid group 'nope'." {
		t.Errorf("invalid group: %v", err)
	}
	// Without the process's lists (the configuration still being read),
	// names are left to resolve.
	if _, err := sample.CompileACL(nil, []string{"http_auth_group(L9)", "x"}); err != nil {
		t.Errorf("nil env: %v", err)
	}
}

// FuzzUserlist reads arbitrary userlist sections and checks arbitrary
// credentials against them: nothing panics.
func FuzzUserlist(f *testing.F) {
	f.Add(authUsers, "six", "secret6")
	f.Add("userlist a\n group g users u,,u\n user u insecure-password x groups g,,g\n", "u", "x")
	f.Add("userlist a\nuserlist a\n user u password $5$rounds=1000$x$ groups\n", "u", "")
	f.Add("userlist a\n user u password $1$\n group\n frob\n", "u", "")
	f.Fuzz(func(t *testing.T, src, user, pass string) {
		if strings.Contains(src, "rounds=") {
			return // the cost grows with the count written, up to seconds
		}
		cfg, _ := buildText(t, src)
		for _, ul := range cfg.Userlists {
			ul.Check([]byte(user), []byte(pass))
			ul.InGroup([]byte(user), pass)
		}
	})
}

// BenchmarkUserlistCheck measures a request's password check: the first
// verification of a SHA-512-crypt hash costs 5000 rounds, the following
// ones hit the cache.
func BenchmarkUserlistCheck(b *testing.B) {
	cfg, _ := buildText(b, authUsers)
	ul := cfg.FindUserlist("L1")
	b.Run("sha512-cached", func(b *testing.B) {
		for b.Loop() {
			if !ul.Check([]byte("six"), []byte("secret6")) {
				b.Fatal("no match")
			}
		}
	})
	b.Run("sha512-wrong", func(b *testing.B) {
		for b.Loop() {
			if ul.Check([]byte("six"), []byte("wrong")) {
				b.Fatal("match")
			}
		}
	})
	b.Run("insecure", func(b *testing.B) {
		for b.Loop() {
			ul.Check([]byte("plain"), []byte("pw"))
		}
	})
}

func headRequest(t testing.TB, raw string) *sample.Request {
	t.Helper()
	h := &http1.Head{}
	if _, err := h.ParseRequest([]byte(raw)); err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	return &sample.Request{Head: h}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
