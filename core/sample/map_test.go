package sample

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// writeMap writes text as a file in a temporary directory.
func writeMap(t testing.TB, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadMapFile(t *testing.T) {
	text := "# comment\n\n   \t\nkey1 value one  \n\t key2\tv2\t\r\nkey3\n#x y\nkey4   \nk5 a b\tc\rtrailing\n"
	type kv struct {
		line       int
		key, value string
	}
	var got []kv
	err := readMapFile(strings.NewReader(text), true, func(l int, k, v string) { got = append(got, kv{l, k, v}) })
	if err != nil {
		t.Fatal(err)
	}
	want := []kv{{4, "key1", "value one"}, {5, "key2", "v2"}, {6, "key3", ""}, {8, "key4", ""}, {9, "k5", "a b\tc"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("two columns:\n got %v\nwant %v", got, want)
	}
	got = nil
	readMapFile(strings.NewReader(text), false, func(l int, k, v string) { got = append(got, kv{l, k, v}) })
	want = []kv{{4, "key1 value one  ", ""}, {5, "key2\tv2\t", ""}, {6, "key3", ""}, {8, "key4   ", ""}, {9, "k5 a b\tc", ""}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("one column:\n got %v\nwant %v", got, want)
	}
}

func FuzzReadMapFile(f *testing.F) {
	f.Add([]byte("a b\n# c\n\n  d\te f \r\n"), true)
	f.Add([]byte("x\x00y z\n"), false)
	f.Add(bytes.Repeat([]byte("k"), 20000), true)
	f.Fuzz(func(t *testing.T, b []byte, smp bool) {
		err := readMapFile(bytes.NewReader(b), smp, func(line int, k, v string) {
			if k == "" || strings.ContainsAny(k, "\r\n") || strings.ContainsAny(v, "\r\n") || k[0] == ' ' || k[0] == '\t' {
				t.Fatalf("line %d: bad entry %q %q", line, k, v)
			}
			if smp && (strings.ContainsAny(k, " \t") || strings.HasSuffix(v, " ") || strings.HasSuffix(v, "\t")) {
				t.Fatalf("line %d: key %q value %q not cut", line, k, v)
			}
			if len(k)+len(v) >= maxLine {
				t.Fatalf("line %d longer than a buffer", line)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		// A map with these entries answers lookups of every method.
		dir := t.TempDir()
		p := filepath.Join(dir, "f.map")
		os.WriteFile(p, b, 0o644)
		for _, conv := range []string{"str(a.b/c),map", "str(a.b/c),map_beg", "str(a.b/c),map_end", "str(a.b/c),map_dom",
			"str(a.b/c),map_dir", "str(a.b/c),map_sub", "str(a.b/c),map_reg", "str(10.1.2.3),map_ip", "int(3),map_int"} {
			e, err := CompileExpr(nil, conv+"("+p+",d)")
			if err != nil {
				continue
			}
			var s Sample
			if !e.Eval(&Request{}, &s) {
				t.Fatalf("%s gave no sample with a default", conv)
			}
		}
	})
}

// evalStr evaluates expr (a str() fetch and converters) to its text.
func evalStr(t *testing.T, expr string) (string, bool) {
	t.Helper()
	e, err := CompileExpr(nil, expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	r := &Request{}
	var s Sample
	if !e.Eval(r, &s) {
		return "", false
	}
	return string(AppendText(nil, r, &s)), true
}

func TestMapConverters(t *testing.T) {
	hosts := writeMap(t, "hosts.map", "www.example.com be_www\nexample.com be_ex\nwww.example.com be_dup\n")
	paths := writeMap(t, "paths.map", "/ root\n/api/ api\n/api/v2/ api2\n/a first\n")
	doms := writeMap(t, "doms.map", "org org\nexample.com ex\n.example.com. ex2\nb.example.com bex\n")
	dirs := writeMap(t, "dirs.map", "img img\n/static/img/ simg\n")
	ends := writeMap(t, "ends.map", ".png png\ng any_g\n.jpg jpg\n")
	subs := writeMap(t, "subs.map", "admin adm\nmin min\n")
	regs := writeMap(t, "regs.map", "^/u/[0-9]+$ uid\n^/u/ u\n")
	regm := writeMap(t, "regm.map", "^(.*)\\.(.*)$ \\1_AND_\\2\n^/u/([a-z]+)(/(x))?$ user=\\1\\3\\9\\\\\\x41\n")
	ips := writeMap(t, "ips.map", "10.0.0.0/8 lan\n10.1.0.0/16 lan1\n10.1.2.3 host\n192.168.0.0/255.255.0.255 holes\n2001:db8::/32 doc\n::ffff:172.16.0.0/108 mapped\n")
	ints := writeMap(t, "ints.map", "1:9 7\n5 5\n10- 100\n:0 -1\n")
	intIPs := writeMap(t, "intips.map", "3 10.0.0.3\n")
	for _, tc := range []struct {
		expr, want string
		ok         bool
	}{
		{"str(www.example.com),map(" + hosts + ")", "be_www", true}, // the first of two entries
		{"str(www.example.com),map_str(" + hosts + ")", "be_www", true},
		{"str(WWW.example.com),map(" + hosts + ")", "", false},
		{"str(nothing),map(" + hosts + ",def)", "def", true},
		{"str(nothing),map(" + hosts + ",)", "", true},
		{"str(/api/v2/users),map_beg(" + paths + ")", "api2", true}, // the longest prefix
		{"str(/api/x),map_beg(" + paths + ")", "api", true},
		{"str(/about),map_beg(" + paths + ")", "first", true},
		{"str(x),map_beg(" + paths + ",none)", "none", true},
		{"str(a.b.example.com),map_dom(" + doms + ")", "ex", true}, // first in the file
		{"str(b.example.com:80),map_dom(" + doms + ")", "ex", true},
		{"str(www.example.org),map_dom(" + doms + ")", "org", true},
		{"str(example.community),map_dom(" + doms + ",no)", "no", true},
		{"str(/static/img/a.png),map_dir(" + dirs + ")", "img", true},
		{"str(/static/imgs/a.png),map_dir(" + dirs + ",no)", "no", true},
		{"str(/a/b.png),map_end(" + ends + ")", "png", true},
		{"str(/a/b.jpg),map_end(" + ends + ")", "any_g", true}, // first match in file order
		{"str(superadmin),map_sub(" + subs + ")", "adm", true},
		{"str(/u/12),map_reg(" + regs + ")", "uid", true},
		{"str(/u/ab),map_reg(" + regs + ")", "u", true},
		{"str(www.example.org),map_regm(" + regm + ")", "www.example_AND_org", true},
		{"str(/u/bob/x),map_regm(" + regm + ")", "user=bobx\\A", true},
		{"str(/u/bob),map_regm(" + regm + ")", "user=bob\\A", true},
		{"str(10.1.2.3),map_ip(" + ips + ")", "host", true},
		{"str(10.1.9.9),map_ip(" + ips + ")", "lan1", true},
		{"str(10.9.9.9),map_ip(" + ips + ")", "lan", true},
		{"str(::ffff:10.1.2.4),map_ip(" + ips + ")", "lan1", true},
		{"str(2002:0a01:0203::1),map_ip(" + ips + ")", "host", true}, // 6to4
		{"str(192.168.7.0),map_ip(" + ips + ")", "holes", true},
		{"str(192.168.7.1),map_ip(" + ips + ",no)", "no", true},
		{"str(2001:db8:1::5),map_ip(" + ips + ")", "doc", true},
		{"str(172.16.1.1),map_ip(" + ips + ")", "mapped", true},
		{"str(nonsense),map_ip(" + ips + ",no)", "", false}, // the input does not cast
		{"int(3),map_int(" + ints + ")", "7", true},
		{"int(5),map_int(" + ints + ")", "7", true},
		{"int(50),map_int_int(" + ints + ")", "100", true},
		{"int(-4),map_int_int(" + ints + ")", "-1", true},
		{"str(/api/x),map_beg_int(" + ints + ",3)", "3", true},
		{"int(3),map_int_ip(" + intIPs + ",1.2.3.4)", "10.0.0.3", true},
		{"int(4),map_int_ip(" + intIPs + ",1.2.3.4)", "1.2.3.4", true},
	} {
		got, ok := evalStr(t, tc.expr)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s = %q, %v; want %q, %v", tc.expr, got, ok, tc.want, tc.ok)
		}
	}
}

func TestMapOutputTypes(t *testing.T) {
	p := writeMap(t, "v.map", "a 42\nb -7\nc 10.0.0.1\nd ::1\n")
	for _, tc := range []struct {
		expr string
		typ  Type
		want string
	}{
		{"str(a),map_str_int(" + p + ")", TSint, "42"},
		{"str(b),map_str_int(" + p + ")", TSint, "-7"},
		{"str(z),map_str_int(" + p + ",-3)", TSint, "-3"},
		{"str(c),map_str_ip(" + p + ")", TIPv4, "10.0.0.1"},
		{"str(d),map_str_ip(" + p + ")", TIPv6, "::1"},
		{"str(z),map_str_ip(" + p + ",::2)", TIPv6, "::2"},
	} {
		e, err := CompileExpr(nil, tc.expr)
		if err != nil {
			// a and b do not parse as addresses, c and d not as integers.
			if !strings.Contains(err.Error(), "unable to parse") {
				t.Errorf("%s: %v", tc.expr, err)
			}
			continue
		}
		r := &Request{}
		var s Sample
		if !e.Eval(r, &s) || s.T != tc.typ || string(AppendText(nil, r, &s)) != tc.want {
			t.Errorf("%s = %v %q, want %v %q", tc.expr, s.T, AppendText(nil, r, &s), tc.typ, tc.want)
		}
	}
	ints := writeMap(t, "i.map", "a 42\nb -7\n")
	ips := writeMap(t, "ip.map", "c 10.0.0.1\nd ::1\n")
	for _, tc := range []struct{ expr, want string }{
		{"str(a),map_str_int(" + ints + ")", "42"},
		{"str(b),map_str_int(" + ints + ")", "-7"},
		{"str(d),map_str_ip(" + ips + ")", "::1"},
		{"str(c),map_str_ip(" + ips + ")", "10.0.0.1"},
	} {
		if got, ok := evalStr(t, tc.expr); !ok || got != tc.want {
			t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestMapErrors(t *testing.T) {
	m := writeMap(t, "m.map", "a.com x\n")
	for _, tc := range []struct{ expr, want string }{
		{"str(a),map(/nonexistent)", "failed to open pattern file </nonexistent>"},
		{"int(1),map_int(" + m + ")", "'a.com' is not a number at line 1 of file '" + m + "'"},
		{"str(a),map_str_int(" + m + ")", "unable to parse 'x' at line 1 of file '" + m + "'"},
		{"str(a),map_str_int(" + m + ",foo)", "failed to parse 'foo' as type 'integer' at position 2"},
		{"str(a),map_str_ip(" + writeMap(t, "ok.map", "a 1.2.3.4\n") + ",foo)", "map: cannot parse default ip <foo>."},
		{"str(a),map_reg(" + writeMap(t, "re.map", "( x\n") + ")", "regex '(' is invalid at line 1"},
	} {
		_, err := CompileExpr(nil, tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.expr, err, tc.want)
		}
	}
	// One set shares a file between users; a file read as one column
	// cannot be read as two.
	env := &Env{Maps: &MapSet{}}
	if _, err := CompileACL(env, []string{"path", "-f", m}); err != nil {
		t.Fatal(err)
	}
	_, err := CompileExpr(env, "str(a),map("+m+")")
	if want := `The file "` + m + `" is already used as one column file and cannot be used by as two column file.`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

// TestMapUpdatesReachUsers checks that a converter and an ACL sharing a
// file see entries added, changed and deleted, and generations.
func TestMapUpdatesReachUsers(t *testing.T) {
	p := writeMap(t, "h.map", "a.com one\n")
	env := &Env{Maps: &MapSet{}}
	conv, err := CompileExpr(env, "str(b.com),map("+p+",none)")
	if err != nil {
		t.Fatal(err)
	}
	acl, err := CompileACL(env, []string{"str(b.com)", "-M", "-f", p})
	if err != nil {
		t.Fatal(err)
	}
	val := func() string {
		r := &Request{}
		var s Sample
		conv.Eval(r, &s)
		return string(s.B)
	}
	m := env.Maps.Lookup(p)
	if val() != "none" || acl.Eval(&Request{}) {
		t.Fatal("b.com found before it is added")
	}
	m.Add(m.Current(), "b.com", "two", true)
	if val() != "two" || !acl.Eval(&Request{}) {
		t.Fatal("added entry not seen")
	}
	m.Set("b.com", "three")
	if val() != "three" {
		t.Fatal("changed value not seen")
	}
	gen := m.Prepare()
	m.Add(gen, "b.com", "next", true)
	if val() != "three" {
		t.Fatal("an uncommitted version is seen")
	}
	if !m.Commit(gen) || val() != "next" || len(m.Entries(gen)) != 1 || len(m.Entries(gen-1)) != 0 {
		t.Fatalf("commit: %q, %v", val(), m.Entries(gen-1))
	}
	m.Delete("b.com")
	if val() != "none" || acl.Eval(&Request{}) {
		t.Fatal("deleted entry still seen")
	}
	// An ACL's own patterns are a reference too (#id).
	own, _ := CompileACL(env, []string{"str(x)", "y"})
	ref := env.Maps.List(RefACL)
	last := ref[len(ref)-1]
	if own.Eval(&Request{}) || last.Add(last.Current(), "x", "", false) != nil || !own.Eval(&Request{}) {
		t.Fatal("add acl on an ACL's own patterns not seen")
	}
}

// TestMapConcurrentLookupAndUpdate runs lookups while entries are added,
// changed and removed (for the race detector), and checks that a key
// never touched is always found.
func TestMapConcurrentLookupAndUpdate(t *testing.T) {
	p := writeMap(t, "c.map", "stable.com ok\n10.0.0.0/8 net\n")
	env := &Env{Maps: &MapSet{}}
	exprs := []string{"str(stable.com),map(" + p + ")", "str(x.stable.com),map_dom(" + p + ")", "str(stable.com),map_beg(" + p + ")"}
	var compiled []*SampleExpr
	for _, x := range exprs {
		e, err := CompileExpr(env, x)
		if err != nil {
			t.Fatal(err)
		}
		compiled = append(compiled, e)
	}
	m := env.Maps.Lookup(p)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan string, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := &Request{}
			var s Sample
			for {
				select {
				case <-stop:
					return
				default:
				}
				e := compiled[i%len(compiled)]
				if !e.Eval(r, &s) || string(s.B) != "ok" {
					errs <- fmt.Sprintf("%s = %q", e.Text, s.B)
					return
				}
			}
		}(i)
	}
	for i := 0; i < 2000; i++ {
		k := fmt.Sprintf("k%d.stable.com", i%50)
		m.Add(m.Current(), k, "v", true)
		m.Set(k, "w")
		if i%3 == 0 {
			m.Delete(k)
		}
		if i%500 == 0 {
			g := m.Prepare()
			m.Add(g, "stable.com", "ok", true)
			m.Add(g, "10.0.0.0/8", "net", true)
			m.Commit(g)
		}
	}
	close(stop)
	wg.Wait()
	select {
	case e := <-errs:
		t.Fatal(e)
	default:
	}
}

func TestMapLookupAllocatesNothing(t *testing.T) {
	hosts := writeMap(t, "h.map", "www.example.com be\n")
	paths := writeMap(t, "p.map", "/api/ api\n")
	ips := writeMap(t, "i.map", "192.0.2.0/24 doc\n")
	r := request(t, testReq)
	var es []*SampleExpr
	for _, x := range []string{"hdr(host),map(" + hosts + ",d)", "path,map_beg(" + paths + ")", "hdr(host),map_dom(" + hosts + ",d)", "src,map_ip(" + ips + ")", "path,map_str_int(" + writeMap(t, "n.map", "/x 1\n") + ",0)"} {
		e, err := CompileExpr(nil, x)
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	var s Sample
	allocs := testing.AllocsPerRun(100, func() {
		for _, e := range es {
			if !e.Eval(r, &s) {
				t.Fatal("no sample")
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per lookup", allocs)
	}
}

func BenchmarkMapLookup(b *testing.B) {
	var text strings.Builder
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&text, "host%d.example.com be%d\n", i, i%10)
	}
	hosts := writeMap(b, "h.map", text.String())
	var pfx strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&pfx, "/api/v%d/ v%d\n/static/%d/ s\n", i, i, i)
	}
	paths := writeMap(b, "p.map", pfx.String())
	var nets strings.Builder
	for i := 0; i < 65536; i++ {
		fmt.Fprintf(&nets, "10.%d.%d.0/24 n\n", i>>8, i&255)
	}
	ips := writeMap(b, "i.map", nets.String())
	for _, bc := range []struct{ name, expr string }{
		{"str_100k", "str(host77777.example.com),map(" + hosts + ")"},
		{"str_miss", "str(nohost.example.com),map(" + hosts + ",d)"},
		{"dom_100k", "str(a.b.host77777.example.com),map_dom(" + hosts + ")"},
		{"beg_2k", "str(/api/v999/users/12),map_beg(" + paths + ")"},
		{"ip_64k", "str(10.200.7.9),map_ip(" + ips + ")"},
	} {
		e, err := CompileExpr(nil, bc.expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			r := &Request{}
			var s Sample
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				r := &Request{}
				var s Sample
				for pb.Next() {
					if !e.Eval(r, &s) {
						b.Fatal("no sample")
					}
				}
			})
			_ = r
			_ = s
		})
	}
}
