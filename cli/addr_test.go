package cli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSplitAddr(t *testing.T) {
	tests := []struct{ in, network, address string }{
		{"/run/haproxy/admin.sock", "unix", "/run/haproxy/admin.sock"},
		{"admin.sock", "unix", "admin.sock"},
		{"./s", "unix", "./s"},
		{"127.0.0.1:9999", "tcp", "127.0.0.1:9999"},
		{":9999", "tcp", "127.0.0.1:9999"},
		{"[::1]:9999", "tcp", "[::1]:9999"},
		{"localhost:http", "unix", "localhost:http"},
		{"unix@/tmp/s", "unix", "/tmp/s"},
		{"abns@hap", "unix", "@hap"},
		{"ipv4@127.0.0.1:9999", "tcp4", "127.0.0.1:9999"},
		{"ipv6@[::1]:9999", "tcp6", "[::1]:9999"},
	}
	for _, tt := range tests {
		n, a, err := SplitAddr(tt.in)
		if err != nil || n != tt.network || a != tt.address {
			t.Errorf("SplitAddr(%q) = %q, %q, %v; want %q, %q", tt.in, n, a, err, tt.network, tt.address)
		}
	}
	for _, bad := range []string{"", "fd@3", "sockpair@4"} {
		if _, _, err := SplitAddr(bad); err == nil {
			t.Errorf("SplitAddr(%q) succeeded", bad)
		}
	}
}

func TestSocketFromConfig(t *testing.T) {
	t.Setenv("GOHACTL_TEST_DIR", "/var/run/x")
	tests := []struct {
		name, cfg, want string
	}{
		{"first of global", "global\n    stats socket /run/a.sock level admin\n    stats socket /run/b.sock\n", "/run/a.sock"},
		{"not in other sections", "defaults\n  stats socket /nope\nglobal\n  daemon\nfrontend f\n  stats socket /nope2\nglobal\n  stats socket ipv4@127.0.0.1:9999 level admin\n", "ipv4@127.0.0.1:9999"},
		{"fd@ is skipped", "global\n\tstats socket \"fd@${cli}\" level admin\n\tstats socket \"/tmp/with space/s\" mode 600\n", "/tmp/with space/s"},
		{"env and comments", "# stats socket /commented\nglobal # comment\n  #stats socket /no\n  stats socket ${GOHACTL_TEST_DIR}/s # trailing\n", "/var/run/x/s"},
		{"env default", "global\n  stats socket ${GOHACTL_UNSET-/tmp/def}.sock\n", "/tmp/def.sock"},
		{"escaped blank", "global\n  stats socket /tmp/a\\ b\n", "/tmp/a b"},
		{"indented section", "  global\n  stats timeout 2s\n  stats socket 'single $quoted'\n", "single $quoted"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		p := filepath.Join(dir, "h.cfg")
		if err := os.WriteFile(p, []byte(tt.cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := SocketFromConfig(p)
		if err != nil || got != tt.want {
			t.Errorf("%s: got %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	p := filepath.Join(dir, "none.cfg")
	os.WriteFile(p, []byte("global\n  daemon\nbackend b\n  stats socket /x\n"), 0o600)
	if _, err := SocketFromConfig(p); !errors.Is(err, ErrNoSocket) {
		t.Errorf("no socket: %v", err)
	}
	if _, err := SocketFromConfig(filepath.Join(dir, "missing.cfg")); err == nil {
		t.Error("missing file accepted")
	}
}

func FuzzConfigWords(f *testing.F) {
	for _, s := range []string{`stats socket "a b" level admin # c`, `a\ b 'c"d' ${X-y} ${`, `"unterminated`, `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, w := range configWords(line) {
			_ = w
		}
	})
}
