package config

import (
	"fmt"
	"strings"
	"testing"

	"goha/core/diag"
)

// benchConfig is a plausible large configuration: a global section and
// 500 backends of a dozen lines each, with quotes, variables and a
// condition.
func benchConfig() []byte {
	var b strings.Builder
	b.WriteString("global\n  maxconn 10000\n  log \"${WHO-127.0.0.1}:514\" local0\n  stats socket /run/haproxy.sock mode 600 level admin\n")
	b.WriteString("defaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n")
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&b, "backend be%d\n  balance roundrobin # spread\n  option httpchk GET /health\n", i)
		b.WriteString("  http-request set-header X-Forwarded-Proto https if { ssl_fc }\n")
		b.WriteString("  http-request set-path '%[path,regsub(\"^/api/\",/,g)]'\n")
		b.WriteString(".if defined(WHO) && version_atleast(2.4)\n  http-response set-header X-Who \"$WHO\"\n.endif\n")
		for s := 0; s < 4; s++ {
			fmt.Fprintf(&b, "  server s%d 10.0.%d.%d:8080 check inter 2s weight 10\n", s, i%256, s)
		}
	}
	return []byte(b.String())
}

func BenchmarkParse(b *testing.B) {
	data := benchConfig()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var d diag.Collector
		Parse("bench.cfg", data, Options{Getenv: testEnv}, &d)
	}
}

func BenchmarkTokenizeLine(b *testing.B) {
	line := []byte(`server s1 10.0.0.1:8080 check inter 2s weight 10 "${WHO}" 'quoted \x41' # comment`)
	buf := make([]byte, len(line))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		copy(buf, line)
		tokenize(buf, testEnv, testPseudo)
	}
}
