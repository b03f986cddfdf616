package lb

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// req is one request of a comparison: its path and headers.
type req struct {
	path string
	hdr  map[string]string
}

// step is either a CLI command applied to both HAProxy and the picker, or a
// series of requests whose server choices must agree.
type step struct {
	cli  string
	reqs []req
}

func plain(n int) step {
	s := step{}
	for range n {
		s.reqs = append(s.reqs, req{path: "/"})
	}
	return s
}

func paths(ps ...string) step {
	s := step{}
	for _, p := range ps {
		s.reqs = append(s.reqs, req{path: p})
	}
	return s
}

// load counts connections per server, standing for the core's counters.
type load struct {
	mu sync.Mutex
	n  map[int]int
}

func newLoad() *load { return &load{n: map[int]int{}} }

func (l *load) served(i int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[i]
}

func (l *load) add(i, d int) {
	l.mu.Lock()
	l.n[i] += d
	l.mu.Unlock()
}

// fromConfig builds the picker the way the core would from the same backend
// lines and server parameters given to HAProxy.
func fromConfig(t *testing.T, be, srv []string, served func(int) int) (Picker, Config) {
	t.Helper()
	c := Config{Served: served}
	for _, l := range be {
		f := strings.Fields(l)
		var err error
		switch f[0] {
		case "balance":
			c.Balance, err = ParseBalance(f[1:])
		case "hash-type":
			c.Hash, err = ParseHashType(f[1:], nil)
		case "option":
			c.AllBackups = f[1] == "allbackups"
		}
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	for _, p := range srv {
		if strings.HasPrefix(p, "#") {
			continue
		}
		s := parseServer(p)
		c.Servers = append(c.Servers, s)
	}
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

// parseServer reads the server parameters the tests use.
func parseServer(p string) Server {
	s := Server{Weight: 1, Usable: true}
	{
		f := strings.Fields(p)
		for k := 0; k < len(f); k++ {
			switch f[k] {
			case "weight":
				s.Weight, _ = strconv.Atoi(f[k+1])
				k++
			case "backup":
				s.Backup = true
			case "maxconn":
				s.MaxConn, _ = strconv.Atoi(f[k+1])
				k++
			case "id":
				s.ID, _ = strconv.Atoi(f[k+1])
				k++
			}
		}
	}
	return s
}

// keyOf computes the pick key of r as the core does.
func keyOf(c *Config, r req) Key {
	if c.Balance.Algo == Source {
		// Every test request comes from 127.0.0.1.
		return c.Key(&Request{Src: []byte{127, 0, 0, 1}})
	}
	return c.Key(&Request{
		URI:    []byte(r.path),
		Header: func(name string) []byte { return []byte(r.hdr[http.CanonicalHeaderKey(name)]) },
	})
}

// applyCLI mirrors a stats-socket command on the picker.
func applyCLI(t *testing.T, p Picker, c *Config, cmd string) {
	t.Helper()
	f := strings.Fields(cmd)
	idx := func(name string) int {
		n, err := strconv.Atoi(strings.TrimPrefix(name, "be/s"))
		if err != nil {
			t.Fatalf("bad server %q", name)
		}
		return n - 1
	}
	var i int
	switch {
	case f[0] == "set" && f[1] == "weight":
		i = idx(f[2])
		c.Servers[i].Weight, _ = strconv.Atoi(f[3])
	case f[0] == "disable" && f[1] == "server":
		i = idx(f[2])
		c.Servers[i].Usable = false
	case f[0] == "enable" && f[1] == "server":
		i = idx(f[2])
		c.Servers[i].Usable = true
	case f[0] == "add" && f[1] == "server":
		// A dynamic server starts in maintenance.
		i = idx(f[2])
		s := parseServer(strings.Join(f[4:], " "))
		s.Usable = false
		for len(c.Servers) <= i {
			c.Servers = append(c.Servers, Server{})
		}
		c.Servers[i] = s
		if err := p.Add(i, s); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return
	case f[0] == "del" && f[1] == "server":
		if err := p.Remove(idx(f[2])); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return
	default:
		t.Fatalf("unknown command %q", cmd)
	}
	if err := p.Update(i, c.Servers[i]); err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
}

// compare runs steps against real HAProxy and against the picker and
// requires the same server for every request.
func compare(t *testing.T, be, srv []string, steps []step) {
	t.Helper()
	h := startHAProxy(t, be, srv)
	ld := newLoad()
	p, c := fromConfig(t, be, srv, ld.served)
	var got, want strings.Builder
	for _, s := range steps {
		if s.cli != "" {
			cmd := s.cli
			for k, port := range h.ports {
				cmd = strings.ReplaceAll(cmd, fmt.Sprintf("{s%d}", k+1), strconv.Itoa(port))
			}
			if out := strings.TrimSpace(h.cli(cmd)); out != "" && out != "New server registered." && out != "Server deleted." {
				t.Fatalf("%s: %s", cmd, out)
			}
			applyCLI(t, p, &c, s.cli)
			got.WriteString("|")
			want.WriteString("|")
			continue
		}
		for _, r := range s.reqs {
			fmt.Fprintf(&want, "%d", h.get(r.path, r.hdr)+1)
			i := p.Pick(keyOf(&c, r), -1)
			if i >= 0 && strings.Contains(srv[i], "dead") {
				// The connection is refused; the retry is
				// redispatched, avoiding that server.
				ld.add(i, 1)
				p.Take(i)
				ld.add(i, -1)
				p.Drop(i)
				i = p.Pick(keyOf(&c, r), i)
			}
			// The connection opens and closes before the next request.
			if i >= 0 {
				ld.add(i, 1)
				p.Take(i)
				ld.add(i, -1)
				p.Drop(i)
			}
			fmt.Fprintf(&got, "%d", i+1)
		}
	}
	if got.String() != want.String() {
		t.Errorf("%v %v:\n got  %s\n want %s (HAProxy)", be, srv, got.String(), want.String())
	}
}

func TestRoundRobinMatchesHAProxy(t *testing.T) {
	w123 := []string{"weight 1", "weight 2", "weight 3"}
	cases := []struct {
		name  string
		be    []string
		srv   []string
		steps []step
	}{
		{"w123", []string{"balance roundrobin"}, w123, []step{plain(24)}},
		{"w511", []string{"balance roundrobin"}, []string{"weight 5", "weight 1", "weight 1"}, []step{plain(21)}},
		{"w-mixed", []string{"balance roundrobin"}, []string{"weight 10", "weight 7", "weight 3", "weight 1"}, []step{plain(42)}},
		{"weight-change", []string{"balance roundrobin"}, w123, []step{
			plain(4), {cli: "set weight be/s1 5"}, plain(20),
			{cli: "set weight be/s3 0"}, plain(12), {cli: "set weight be/s3 2"}, plain(20),
		}},
		{"down-up", []string{"balance roundrobin"}, w123, []step{
			plain(5), {cli: "disable server be/s3"}, plain(7), {cli: "enable server be/s3"}, plain(18),
		}},
		{"backup", []string{"balance roundrobin"}, []string{"weight 1", "backup", "backup weight 3"}, []step{
			plain(3), {cli: "disable server be/s1"}, plain(6), {cli: "disable server be/s2"}, plain(3),
			{cli: "enable server be/s2"}, plain(3), {cli: "enable server be/s1"}, plain(2),
		}},
		{"allbackups", []string{"balance roundrobin", "option allbackups"}, []string{"weight 1", "backup", "backup weight 3"}, []step{
			{cli: "disable server be/s1"}, plain(12), {cli: "set weight be/s3 1"}, plain(6),
		}},
		{"static-rr", []string{"balance static-rr"}, []string{"weight 2", "weight 4", "weight 6", "weight 2"}, []step{
			plain(14), {cli: "set weight be/s2 0"}, plain(12), {cli: "set weight be/s2 4"}, plain(14),
			{cli: "disable server be/s1"}, plain(8),
		}},
		{"static-rr-backups", []string{"balance static-rr"}, []string{"weight 1", "backup weight 3", "backup weight 3"}, []step{
			{cli: "disable server be/s1"}, plain(9),
		}},
		{"leastconn", []string{"balance leastconn"}, w123, []step{
			plain(9), {cli: "disable server be/s2"}, plain(4), {cli: "enable server be/s2"}, plain(6),
		}},
		{"first", []string{"balance first"}, []string{"", "", ""}, []step{
			plain(3), {cli: "disable server be/s1"}, plain(3),
		}},
		{"redispatch", []string{"balance roundrobin", "retries 1", "option redispatch"}, []string{"weight 1", "weight 2 dead", "weight 3"}, []step{plain(18)}},
		{"redispatch-static", []string{"balance static-rr", "retries 1", "option redispatch"}, []string{"weight 1", "weight 2 dead", "weight 3"}, []step{plain(18)}},
		{"redispatch-leastconn", []string{"balance leastconn", "retries 1", "option redispatch"}, []string{"weight 1", "weight 2 dead", "weight 3"}, []step{plain(12)}},
		{"rr-add-del", []string{"balance roundrobin"}, []string{"weight 1", "weight 2", "#"}, []step{
			plain(5), {cli: "add server be/s3 127.0.0.1:{s3} weight 4"}, plain(4), {cli: "enable server be/s3"}, plain(21),
			{cli: "disable server be/s2"}, {cli: "del server be/s2"}, plain(10),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { compare(t, tc.be, tc.srv, tc.steps) })
	}
}

func TestHashingMatchesHAProxy(t *testing.T) {
	var keys []string
	for i := range 40 {
		keys = append(keys, fmt.Sprintf("/dir%d/obj%d?v=%d", i%3, i*7919, i))
	}
	uri := paths(keys...)
	srv := []string{"weight 1", "weight 2", "weight 3", "weight 1"}
	for _, ht := range []string{
		"", "map-based djb2", "map-based wt6", "map-based crc32", "map-based sdbm avalanche",
		"consistent", "consistent sdbm", "consistent djb2", "consistent wt6 avalanche", "consistent crc32",
	} {
		be := []string{"balance uri"}
		if ht != "" {
			be = append(be, "hash-type "+ht)
		}
		t.Run("uri "+ht, func(t *testing.T) {
			compare(t, be, srv, []step{uri, {cli: "set weight be/s2 0"}, uri})
		})
	}
	t.Run("source", func(t *testing.T) {
		for _, ht := range []string{"map-based", "map-based sdbm avalanche", "consistent", "consistent djb2"} {
			for _, w := range []string{"weight 1", "weight 7", "weight 30"} {
				s := []string{"weight 1", w, "weight 2", "weight 5"}
				compare(t, []string{"balance source", "hash-type " + ht}, s, []step{plain(3), {cli: "disable server be/s2"}, plain(2)})
			}
		}
	})
	t.Run("dynamic servers", func(t *testing.T) {
		for _, be := range [][]string{{"balance uri", "hash-type consistent"}, {"balance leastconn"}, {"balance first"}} {
			compare(t, be, []string{"weight 1", "weight 2", "weight 3", "#"}, []step{
				uri, {cli: "add server be/s4 127.0.0.1:{s4} weight 5"}, {cli: "enable server be/s4"}, uri,
				{cli: "disable server be/s1"}, {cli: "del server be/s1"}, uri,
				{cli: "set weight be/s4 9"}, {cli: "set weight be/s2 6"}, uri,
			})
		}
		compare(t, []string{"balance uri", "hash-type consistent"}, []string{"weight 1 id 12", "weight 2 id 5", "weight 3", "#"}, []step{
			uri, {cli: "add server be/s4 127.0.0.1:{s4} weight 2 id 40"}, {cli: "enable server be/s4"}, uri,
		})
	})
	t.Run("uri options", func(t *testing.T) {
		compare(t, []string{"balance uri whole len 12 depth 2"}, srv, []step{uri})
	})
	t.Run("url_param", func(t *testing.T) {
		var ps []string
		for i := range 30 {
			ps = append(ps, fmt.Sprintf("/x?a=1&user=u%d&b=2", i*31))
		}
		ps = append(ps, "/nouser", "/nouser?a=1", "/x?user=")
		compare(t, []string{"balance url_param user", "hash-type consistent"}, srv, []step{paths(ps...)})
		compare(t, []string{"balance url_param user"}, srv, []step{paths(ps...)})
	})
	t.Run("hdr", func(t *testing.T) {
		var st step
		for i := range 30 {
			st.reqs = append(st.reqs, req{path: "/", hdr: map[string]string{"X-Key": fmt.Sprintf("k%d", i*17)}})
		}
		st.reqs = append(st.reqs, req{path: "/"}, req{path: "/"},
			req{path: "/", hdr: map[string]string{"X-Key": "k17, k34"}},
			req{path: "/", hdr: map[string]string{"X-Key": " \"a,b\" , c"}},
			req{path: "/", hdr: map[string]string{"X-Key": ", k34"}},
			req{path: "/", hdr: map[string]string{"X-Key": "k34 ,"}})
		compare(t, []string{"balance hdr(X-Key)", "hash-type consistent wt6"}, srv, []step{st})
		var hosts step
		for i := range 20 {
			hosts.reqs = append(hosts.reqs, req{path: "/", hdr: map[string]string{"Host": fmt.Sprintf("www.site%d.example", i)}})
			hosts.reqs = append(hosts.reqs, req{path: "/", hdr: map[string]string{"Host": fmt.Sprintf("site%d.example:8080", i)}})
		}
		compare(t, []string{"balance hdr(Host) use_domain_only"}, srv, []step{hosts})
	})
}

// holdingServers are HTTP servers that answer only when released, so that
// the connections HAProxy opens to them stay counted while later requests
// are balanced.
type holdingServers struct {
	ports    []int
	arrivals chan int
	release  chan struct{}
}

func startHolding(t *testing.T, n int) *holdingServers {
	t.Helper()
	hs := &holdingServers{arrivals: make(chan int, 100), release: make(chan struct{})}
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs.ports = append(hs.ports, l.Addr().(*net.TCPAddr).Port)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hs.arrivals <- i
			<-hs.release
			fmt.Fprintf(w, "s%d", i+1)
		})}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
	}
	return hs
}

// compareHeld sends n requests to HAProxy, each while all earlier ones are
// still being served, and requires the picker, told of every connection
// with Take, to choose the same servers.
func compareHeld(t *testing.T, be, srv []string, n int) {
	t.Helper()
	hs := startHolding(t, len(srv))
	h := startHAProxyTo(t, be, srv, hs.ports)
	ld := newLoad()
	p, _ := fromConfig(t, be, srv, ld.served)
	var got, want strings.Builder
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := h.cl.Get(h.url + "/")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		select {
		case i := <-hs.arrivals:
			fmt.Fprintf(&want, "%d", i+1)
		case <-time.After(5 * time.Second):
			t.Fatal("no server got the request")
		}
		i := p.Pick(Key{}, -1)
		if i >= 0 {
			ld.add(i, 1)
			p.Take(i)
		}
		fmt.Fprintf(&got, "%d", i+1)
	}
	close(hs.release)
	wg.Wait()
	if got.String() != want.String() {
		t.Errorf("%v %v:\n got  %s\n want %s (HAProxy)", be, srv, got.String(), want.String())
	}
}

func TestUnderLoadMatchesHAProxy(t *testing.T) {
	w123 := []string{"weight 1", "weight 2", "weight 3"}
	t.Run("leastconn", func(t *testing.T) { compareHeld(t, []string{"balance leastconn"}, w123, 14) })
	t.Run("leastconn-maxconn", func(t *testing.T) {
		compareHeld(t, []string{"balance leastconn"}, []string{"weight 1", "weight 4 maxconn 2", "weight 3"}, 10)
	})
	t.Run("roundrobin-maxconn", func(t *testing.T) {
		compareHeld(t, []string{"balance roundrobin"}, []string{"weight 1", "weight 2", "weight 3 maxconn 2"}, 12)
	})
	t.Run("static-rr-maxconn", func(t *testing.T) {
		compareHeld(t, []string{"balance static-rr"}, []string{"weight 1", "weight 2 maxconn 1", "weight 3"}, 10)
	})
	t.Run("first", func(t *testing.T) {
		compareHeld(t, []string{"balance first"}, []string{"maxconn 2", "maxconn 3", "maxconn 2"}, 7)
	})
}
