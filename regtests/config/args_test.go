package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// A case is a configuration in which one line is marked with a leading
// "!": the line goha and HAProxy must both report. word is the offending
// word, which goha's message must quote.
type argCase struct {
	name string
	cfg  string
	word string
	// differs says why goha's message is not HAProxy's word for word;
	// the line and the word must still be there.
	differs string
}

// argsTemplate is a valid configuration the cases add lines to: G, F and
// B are replaced by the case's global, frontend and backend lines.
const argsTemplate = `global
G
defaults
    mode http
    timeout client 5s
    timeout server 5s
    timeout connect 5s
frontend fe
    bind 127.0.0.1:@PORT@
F
    default_backend be
backend be
B
    server s1 127.0.0.1:1
`

func inGlobal(l string) string   { return argsCfg(l, "", "") }
func inFrontend(l string) string { return argsCfg("", l, "") }
func inBackend(l string) string  { return argsCfg("", "", l) }

func argsCfg(g, f, b string) string {
	r := strings.NewReplacer("G\n", indent(g), "F\n", indent(f), "B\n", indent(b))
	return r.Replace(argsTemplate)
}

func indent(lines string) string {
	if lines == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(lines, "\n") {
		if strings.HasPrefix(l, "!") {
			b.WriteString("!    " + l[1:] + "\n")
		} else {
			b.WriteString("    " + l + "\n")
		}
	}
	return b.String()
}

// refused are configurations HAProxy 2.6 refuses because of a word it does
// not expect; goha accepted each of them, most with the word dropped.
var refused = []argCase{
	{name: "allow-iff", cfg: inFrontend("!http-request allow iff { src 10.0.0.0/8 }\nhttp-request deny"), word: "iff"},
	{name: "deny-i", cfg: inFrontend("!http-request deny i"), word: "i"},
	{name: "deny-unles", cfg: inFrontend("!http-request deny unles { src 10.0.0.0/8 }"), word: "unles"},
	{name: "deny-status-extra", cfg: inFrontend("!http-request deny deny_status 404 x"), word: "x"},
	{name: "set-header-3", cfg: inFrontend("!http-request set-header X-A b c"), word: "c"},
	{name: "resp-set-header-3", cfg: inBackend("!http-response set-header X-A b c if TRUE"), word: "c"},
	{name: "del-header-2", cfg: inFrontend("!http-request del-header X-A b"), word: "b"},
	{name: "return-extra", cfg: inFrontend("!http-request return status 200 x"), word: "x"},
	{name: "unknown-action", cfg: inFrontend("!http-request bogus-action x\nmaxconn 1 2"), word: "bogus-action",
		differs: "HAProxy lists its actions; goha names the ones it runs"},
	{name: "bad-acl", cfg: inFrontend("!acl a bogus_fetch x\nmaxconn 1 2"), word: "bogus_fetch"},
	{name: "acl-after-rule", cfg: inFrontend("!http-request deny if bad\nacl bad path /x"), word: "bad"},
	{name: "acl-after-use-backend", cfg: inFrontend("!use_backend be if bad\nacl bad path /x"), word: "bad"},
	{name: "use-backend-iff", cfg: inFrontend("!use_backend be iff TRUE"), word: "iff"},
	{name: "timeout-extra", cfg: inFrontend("!timeout client 1s 2s"), word: "2s"},
	{name: "timeout-connect-extra", cfg: inBackend("!timeout connect 1s x"), word: "x"},
	{name: "maxconn-proxy", cfg: inFrontend("!maxconn 10 20"), word: "20"},
	{name: "maxconn-global", cfg: inGlobal("!maxconn 10 20"), word: "20"},
	{name: "nbthread", cfg: inGlobal("!nbthread 2 3"), word: "3"},
	{name: "mode", cfg: inFrontend("!mode http tcp"), word: "tcp"},
	{name: "option-tcplog", cfg: inFrontend("!option tcplog foo"), word: "foo"},
	{name: "option-httplog-clf", cfg: inFrontend("!option httplog clf x"), word: "x"},
	{name: "option-httplog-word", cfg: inFrontend("!option httplog x"), word: "httplog"},
	{name: "no-option", cfg: inFrontend("!no option dontlognull x"), word: "x"},
	{name: "option-keep-alive", cfg: inFrontend("!option http-keep-alive x"), word: "x"},
	{name: "option-forwardfor", cfg: inFrontend("!option forwardfor except 10.0.0.0/8 x"), word: "option forwardfor"},
	{name: "tune-bufsize", cfg: inGlobal("!tune.bufsize 16384 x"), word: "x"},
	{name: "daemon", cfg: inGlobal("!daemon x"), word: "x"},
	{name: "pidfile", cfg: inGlobal("!pidfile a b"), word: "b"},
	{name: "user", cfg: inGlobal("!user root x"), word: "x"},
	{name: "master-worker", cfg: inGlobal("!master-worker no-exit-on-failure x"), word: "x"},
	{name: "ssl-default-server-options", cfg: inGlobal("!ssl-default-server-options no-sslv3 foo"), word: "foo"},
	{name: "cookie", cfg: inBackend("!cookie SRV insert indirect nocache x"), word: "cookie"},
	{name: "http-reuse", cfg: inBackend("!http-reuse safe x"), word: "x"},
	{name: "default-backend", cfg: inFrontend("!default_backend be x"), word: "x"},
	{name: "grace-proxy", cfg: inBackend("!grace 1s"), word: "grace"},
	{name: "stats-socket-keyword", cfg: inGlobal("!stats socket @DIR@/admin.sock level admin bogus"), word: "bogus"},
	{name: "stats-socket-level", cfg: inGlobal("!stats socket @DIR@/admin.sock level bogus"), word: "bogus"},
	// Keywords goha parses without implementing them check their words too.
	{name: "unimplemented-option", cfg: inFrontend("!option abortonclose x"), word: "x"},
	// Sample expressions: the extra argument, the bad integer, the unknown
	// fetch, a converter's extra argument, in HAProxy's words.
	{name: "expr-extra-arg", cfg: inFrontend("!http-request set-header x %[str(a,b)]"), word: ",b)]"},
	{name: "expr-bad-int", cfg: inFrontend("!http-request set-header x %[hdr(a,b,c)]"), word: "b"},
	{name: "expr-unknown-fetch", cfg: inFrontend("!http-request set-header x %[nosuchfetch]"), word: "nosuchfetch"},
	{name: "expr-conv-arg", cfg: inFrontend("!http-request set-header x %[str(a),lower(1)]"), word: "lower"},
	{name: "set-var-bad-name", cfg: inFrontend("!http-request set-var(foo) str(a)"), word: "foo"},
	{name: "monitor-uri", cfg: inFrontend("!monitor-uri /m x"), word: "x"},
	{name: "unimplemented-global", cfg: inGlobal("!h1-case-adjust a b c"), word: "c"},
	{name: "frontend-name", cfg: strings.Replace(argsCfg("", "", ""), "frontend fe", "!frontend f~e", 1), word: "f~e"},
	{name: "backend-name", cfg: "frontend fe\n    bind 127.0.0.1:@PORT@\n    default_backend be\n    timeout client 1s\n!backend \"b e\"\n    server s1 127.0.0.1:1\n", word: "b e"},
	{name: "server-name", cfg: inBackend("!server s/2 127.0.0.1:2"), word: "s/2"},
	{name: "acl-name", cfg: inFrontend("!acl a~b src 10.0.0.0/8"), word: "a~b"},
	{name: "log-forward-maxconn", cfg: "log-forward lf\n    dgram-bind 127.0.0.1:@PORT@\n!    maxconn 10 x\n", word: "x"},
	{name: "log-forward-bind", cfg: "log-forward lf\n!    bind 127.0.0.1:@PORT@ bogus\n", word: "bogus"},
	{name: "peers-peer", cfg: "peers p\n    peer @HOST@ 127.0.0.1:@PORT@\n!    peer b 127.0.0.1:1 x\n", word: "x"},
	{name: "ring-server", cfg: "ring r1\n!    server s1 127.0.0.1:@PORT@ x\n", word: "x"},
	{name: "peers-table", cfg: "peers p\n    peer @HOST@ 127.0.0.1:@PORT@\n!    table t type ip size 1k x\n", word: "x"},
	{name: "peers-shards", cfg: "peers p\n    peer @HOST@ 127.0.0.1:@PORT@\n!    shards 2\n", word: "shards"},
	{name: "peers-bind", cfg: "peers p\n!    bind 127.0.0.1:@PORT@ bogus\n", word: "bogus"},
	{name: "log-extra", cfg: inGlobal("!log 127.0.0.1:514 local0 info info x"), word: "x"},
	{name: "log-forward-log", cfg: "log-forward lf\n    dgram-bind 127.0.0.1:@PORT@\n!    log 127.0.0.1:514 local0 x\n", word: "x"},
	{name: "unix-bind", cfg: inGlobal("!unix-bind prefix /tmp bogus"), word: "unix-bind"},
	{name: "ssl-max-ver", cfg: inGlobal("!ssl-default-bind-options ssl-max-ver TLSv9"), word: "TLSv9"},
	{name: "bind-mode", cfg: inFrontend("!bind @DIR@/a.sock mode 9z"), word: "9z"},
	{name: "bind-user", cfg: inFrontend("!bind @DIR@/a.sock user nosuchuser"), word: "nosuchuser"},
	{name: "bind-group", cfg: inFrontend("!bind @DIR@/a.sock group nosuchgroup"), word: "nosuchgroup"},
	{name: "del-header-m", cfg: inFrontend("!http-request del-header X-A -m bogus"), word: "bogus",
		differs: "HAProxy names the proxy: error detected in frontend 'fe' while parsing"},
	{name: "return-no-content-type", cfg: inFrontend("!http-request return string hi"), word: "http-request return",
		differs: "HAProxy names the proxy: error detected in frontend 'fe' while parsing"},
}

// accepted are lines where HAProxy only warns, or reads what it needs and
// ignores the rest: goha must not refuse them, and must warn as HAProxy
// does (warn is the message of the marked line, with %d for its number,
// or "").
var accepted = []struct {
	name, cfg, warn string
}{
	{"final-deny", inFrontend("http-request deny\n!http-request set-header X-A b"),
		"parsing [args.cfg:%d]: previous 'http-request' action is final and has no condition attached, further entries are NOOP."},
	{"final-response", inBackend("http-response deny\n!http-response allow"),
		"parsing [args.cfg:%d]: previous 'http-response' action is final and has no condition attached, further entries are NOOP."},
	{"bind-process", inFrontend("!bind 127.0.0.1:@PORT@ process 1"),
		"parsing [args.cfg:%d] : 'bind 127.0.0.1:@PORT@' in section 'frontend' : 'process 1' on 'bind' lines is deprecated and will be removed in 2.7."},
	{"stats-socket-process", inGlobal("!stats socket @DIR@/admin.sock process all"),
		"parsing [args.cfg:%d] : 'stats socket' : 'process all' on 'bind' lines is deprecated and will be removed in 2.7."},
	{"conditional-deny", inFrontend("http-request deny if { src 10.0.0.0/8 }\n!http-request set-header X-A b"), ""},
	{"stats-timeout", inGlobal("!stats timeout 1s 2"), ""},
	{"hard-stop-after", inGlobal("!hard-stop-after 1s x"), ""},
	{"balance", inBackend("!balance roundrobin x"), ""},
	{"log-tag-proxy", inFrontend("!log-tag a b"), ""},
	{"option-redispatch", inBackend("!option redispatch 1 2"), ""},
	{"description", inFrontend("!description a b c"), ""},
	{"header-named-if", inFrontend("!http-request set-header if v if TRUE"), ""},
	{"del-header-m", inFrontend("!http-request del-header X-A -m str if TRUE"), ""},
	{"deny-status", inFrontend("!http-request deny deny_status 429 status 404 if TRUE"), ""},
}

// writeCase writes cfg without its marker as dir/args.cfg and returns the
// marked line's number and the replacer it applied. @PORT@ becomes a free port (checks bind nothing,
// but HAProxy refuses port 0), @DIR@ the directory and @HOST@ the host
// name, which names the local peer of a peers section.
func writeCase(t *testing.T, dir, cfg string) (int, *strings.Replacer) {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	subst := strings.NewReplacer("@PORT@", strconv.Itoa(harness.FreePort(t)), "@DIR@", dir, "@HOST@", host)
	cfg = subst.Replace(cfg)
	lines := strings.Split(cfg, "\n")
	at := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "!") {
			lines[i], at = l[1:], i+1
		}
	}
	if at == 0 {
		t.Fatalf("no marked line in\n%s", cfg)
	}
	if err = os.WriteFile(filepath.Join(dir, "args.cfg"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return at, subst
}

var pidPart = regexp.MustCompile(`^\[([A-Z]+)\] +\(\d+\) : config : `)

// messages runs prog -c on dir/args.cfg and returns its exit status and its
// ALERT and WARNING lines, without the tag and pid.
func messages(t *testing.T, prog, dir string) (int, []string) {
	t.Helper()
	code, _, out := checkIn(t, prog, dir, "args.cfg")
	var msgs []string
	for _, l := range strings.Split(out, "\n") {
		m := pidPart.FindStringSubmatch(l)
		if m == nil || m[1] == "NOTICE" {
			continue
		}
		msgs = append(msgs, m[1]+" "+l[len(m[0]):])
	}
	return code, msgs
}

// about returns the messages that name line at of args.cfg.
func about(msgs []string, at int) []string {
	var out []string
	pos := "[args.cfg:" + strconv.Itoa(at) + "]"
	for _, m := range msgs {
		if strings.Contains(m, pos) {
			out = append(out, m)
		}
	}
	return out
}

func TestExtraWordsRefused(t *testing.T) {
	goha := bin.Path(t, "goha")
	haproxy := bin.HAProxy(t)
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			at, _ := writeCase(t, dir, tc.cfg)
			code, msgs := messages(t, goha, dir)
			hcode, hmsgs := messages(t, haproxy, dir)
			if hcode == 0 {
				t.Fatalf("haproxy -c accepted the case, it tests nothing: %q", hmsgs)
			}
			if code == 0 {
				t.Fatalf("goha -c accepted it; haproxy said %q", about(hmsgs, at))
			}
			mine, theirs := about(msgs, at), about(hmsgs, at)
			if len(theirs) == 0 || !strings.HasPrefix(theirs[0], "ALERT ") {
				t.Fatalf("haproxy has no alert at line %d: %q", at, hmsgs)
			}
			if len(mine) == 0 || !strings.HasPrefix(mine[0], "ALERT ") {
				t.Fatalf("goha has no alert at line %d: %q (haproxy: %q)", at, msgs, theirs[0])
			}
			if !strings.Contains(mine[0], "'"+tc.word+"'") {
				t.Errorf("goha's alert does not quote '%s': %q", tc.word, mine[0])
			}
			if tc.differs == "" && mine[0] != theirs[0] {
				t.Errorf("alert differs:\ngoha:    %s\nhaproxy: %s", mine[0], theirs[0])
			}
		})
	}
}

func TestExtraWordsAccepted(t *testing.T) {
	goha := bin.Path(t, "goha")
	haproxy := bin.HAProxy(t)
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			at, subst := writeCase(t, dir, tc.cfg)
			code, msgs := messages(t, goha, dir)
			hcode, hmsgs := messages(t, haproxy, dir)
			if hcode != 0 {
				t.Fatalf("haproxy -c refused the case: %q", hmsgs)
			}
			if code != 0 {
				t.Fatalf("goha -c refused what haproxy accepts: %q", msgs)
			}
			mine, theirs := about(msgs, at), about(hmsgs, at)
			want := []string(nil)
			if tc.warn != "" {
				want = []string{"WARNING " + subst.Replace(fmt.Sprintf(tc.warn, at))}
			}
			if strings.Join(theirs, "\n") != strings.Join(want, "\n") {
				t.Fatalf("haproxy's messages at line %d are %q, the case expects %q", at, theirs, want)
			}
			if strings.Join(mine, "\n") != strings.Join(want, "\n") {
				t.Errorf("goha's messages at line %d: %q, want %q", at, mine, want)
			}
		})
	}
}
