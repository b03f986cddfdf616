package main

import (
	"fmt"
	"goha/core/stream"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
)

// demoSetup is what `goha` without -f runs: two origins in this process, a
// frontend balancing over them and a stats socket, so that one command with
// no files serves at once.
type demoSetup struct {
	dir     string
	cfgPath string
	sock    string
	addr    string
	origins []*http.Server
}

const demoConfig = `# goha's embedded demo configuration
global
    stats socket %s level admin mode 600
    stats timeout 30s
    log stdout format raw local0

defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    log global
    option httplog

frontend demo
    bind %s
    default_backend origins

backend origins
    balance roundrobin
    server origin1 %s
    server origin2 %s
`

func startDemo() (*demoSetup, error) {
	addr := os.Getenv("GOHA_DEMO_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	dir, err := os.MkdirTemp("", "goha-demo-")
	if err != nil {
		return nil, err
	}
	d := &demoSetup{dir: dir, sock: filepath.Join(dir, "stats.sock"), addr: addr}
	var origins []string
	for i := 1; i <= 2; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			d.Close()
			return nil, err
		}
		name := fmt.Sprintf("origin%d", i)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "Hello from %s, served through goha (%s %s)\n", name, r.Method, r.URL.Path)
		})}
		go srv.Serve(ln)
		d.origins = append(d.origins, srv)
		origins = append(origins, ln.Addr().String())
	}
	d.cfgPath = filepath.Join(dir, "demo.cfg")
	cfg := fmt.Sprintf(demoConfig, d.sock, addr, origins[0], origins[1])
	if err := os.WriteFile(d.cfgPath, []byte(cfg), 0o644); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func (d *demoSetup) announce(w io.Writer, proc *stream.Process) {
	fmt.Fprintf(w, "goha demo: serving http://%s/ over two origins\n", d.addr)
	fmt.Fprintf(w, "goha demo: stats socket %s (try: echo 'show stat' | socat stdio unix-connect:%s)\n", d.sock, d.sock)
	fmt.Fprintf(w, "goha demo: configuration %s\n", d.cfgPath)
}

func (d *demoSetup) Close() {
	for _, s := range d.origins {
		s.Close()
	}
	os.RemoveAll(d.dir)
}
