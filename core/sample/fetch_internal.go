package sample

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"
)

// Fetches of the process's internal state (HAProxy's section 7.3.2): the
// clock, the environment, random values, and what the running process
// knows of its proxies, servers and listeners.
//
// What only the running process knows, it tells through optional
// interfaces that the Request's Stream may implement: a Stream that does
// not (a test, a health check) makes those fetches give no sample.

// ProxyInfo is the running process's side of the fetches about proxies,
// servers and listeners.
type ProxyInfo interface {
	// Listener is the listener (bind line) the client came in through.
	Listener() (name string, id int, ok bool)
	// ProxyStat reads one figure of the proxy named name, a frontend for
	// the Fe* stats and a backend for the Be* ones; name "" is the
	// stream's own (its backend, or its frontend while no backend is
	// chosen, as in HAProxy). ok is false when no such proxy exists.
	ProxyStat(name string, st ProxyStat) (v int64, ok bool)
	// ServerStat reads one figure of a server of the backend named be
	// ("" for the stream's backend).
	ServerStat(be, srv string, st ServerStat) (v int64, ok bool)
	// Stopping says whether the process is stopping.
	Stopping() bool
	// Thread is the number of the thread serving the stream, from 0.
	Thread() int
}

// ProxyStat names a proxy figure for ProxyInfo.ProxyStat.
type ProxyStat uint8

const (
	FeConn      ProxyStat = iota // current connections of a frontend
	FeSessRate                   // sessions per second
	FeReqRate                    // HTTP requests per second
	FeClientTmo                  // timeout client, in milliseconds
	BeConn                       // current connections of a backend
	BeConnFree                   // free connection slots on usable servers; -1 unlimited
	BeSessRate                   // sessions per second
	BeQueue                      // streams waiting in the queues
	BeAvgQueue                   // the queue divided by usable servers, rounded up
	BeNbSrv                      // usable servers
	BeConnSlots                  // free connections and queue places; -1 unlimited
	BeServerTmo                  // timeout server, in milliseconds
	BeTunnelTmo                  // timeout tunnel, in milliseconds
)

// ServerStat names a server figure for ProxyInfo.ServerStat.
type ServerStat uint8

const (
	SrvIsUp     ServerStat = iota // 1 when up (running, not in maintenance)
	SrvConn                       // current connections
	SrvConnFree                   // free connection slots; -1 unlimited
	SrvQueue                      // streams waiting in its queue
	SrvSessRate                   // sessions per second
	SrvWeight                     // effective weight
	SrvIWeight                    // initial weight
	SrvUWeight                    // user weight
)

func init() {
	RegisterFetches(
		Fetch{Name: "env", Min: 1, Max: 1, Out: TStr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			v, ok := os.LookupEnv(a[0].S)
			if !ok {
				return false
			}
			s.setStr(append(r.alloc(len(v)), v...))
			return true
		}},
		Fetch{Name: "date", Max: 2, Out: TSint, Check: dateArgs, Fn: fetchDate},
		Fetch{Name: "date_us", Out: TSint, Fn: func(r *Request, a []Arg, s *Sample) bool {
			s.setInt(int64(time.Now().Nanosecond() / 1000))
			return true
		}},
		Fetch{Name: "hostname", Out: TStr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			s.setStr(hostname())
			return true
		}},
		Fetch{Name: "nbproc", Out: TSint, Fn: constInt(1)},
		Fetch{Name: "proc", Out: TSint, Fn: constInt(1)},
		Fetch{Name: "thread", Out: TSint, Fn: func(r *Request, a []Arg, s *Sample) bool {
			n := 0
			if pi, ok := r.Stream.(ProxyInfo); ok {
				n = pi.Thread()
			}
			s.setInt(int64(n))
			return true
		}},
		Fetch{Name: "rand", Max: 1, Out: TSint, Check: argInt, Fn: func(r *Request, a []Arg, s *Sample) bool {
			v := int64(rand.Uint32())
			if len(a) > 0 {
				// Scaled into [0, range), as HAProxy does.
				v = int64((uint64(v) * uint64(uint32(a[0].I))) >> 32)
			}
			s.setInt(v)
			return true
		}},
		Fetch{Name: "uuid", Max: 1, Out: TStr, Check: uuidArgs, Fn: fetchUUID},
		Fetch{Name: "stopping", Out: TBool, Fn: func(r *Request, a []Arg, s *Sample) bool {
			pi, ok := r.Stream.(ProxyInfo)
			s.setBool(ok && pi.Stopping())
			return true
		}},
		Fetch{Name: "bin", Min: 1, Max: 1, Out: TBin, Check: binArgs, Fn: func(r *Request, a []Arg, s *Sample) bool {
			s.T, s.B = TBin, a[0].V.([]byte)
			return true
		}},

		Fetch{Name: "fe_name", Out: TStr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			if r.Stream == nil {
				return false
			}
			name, _ := r.Stream.Frontend()
			s.setStr(constBytes(r, name))
			return true
		}},
		Fetch{Name: "fe_id", Out: TSint, Fn: func(r *Request, a []Arg, s *Sample) bool {
			if r.Stream == nil {
				return false
			}
			_, id := r.Stream.Frontend()
			s.setInt(int64(id))
			return true
		}},
		Fetch{Name: "be_name", Out: TStr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			name, _, ok := streamBackend(r)
			if !ok {
				return false
			}
			s.setStr(constBytes(r, name))
			return true
		}},
		Fetch{Name: "be_id", Out: TSint, Fn: func(r *Request, a []Arg, s *Sample) bool {
			_, id, ok := streamBackend(r)
			if !ok {
				return false
			}
			s.setInt(int64(id))
			return true
		}},
		Fetch{Name: "srv_name", Out: TStr, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool {
			if r.Stream == nil {
				return false
			}
			name, _, ok := r.Stream.Server()
			if !ok {
				return false
			}
			s.setStr(constBytes(r, name))
			return true
		}},
		Fetch{Name: "srv_id", Out: TSint, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool {
			if r.Stream == nil {
				return false
			}
			_, id, ok := r.Stream.Server()
			if !ok {
				return false
			}
			s.setInt(int64(id))
			return true
		}},
		Fetch{Name: "so_name", Out: TStr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			pi, ok := r.Stream.(ProxyInfo)
			if !ok {
				return false
			}
			name, _, ok := pi.Listener()
			if !ok || name == "" {
				return false
			}
			s.setStr(constBytes(r, name))
			return true
		}},
		Fetch{Name: "so_id", Out: TSint, Fn: func(r *Request, a []Arg, s *Sample) bool {
			pi, ok := r.Stream.(ProxyInfo)
			if !ok {
				return false
			}
			_, id, ok := pi.Listener()
			if !ok {
				return false
			}
			s.setInt(int64(id))
			return true
		}},

		proxyFetch("fe_conn", FeConn),
		proxyFetch("fe_sess_rate", FeSessRate),
		proxyFetch("fe_req_rate", FeReqRate),
		proxyFetch("be_conn", BeConn),
		proxyFetch("be_conn_free", BeConnFree),
		proxyFetch("be_sess_rate", BeSessRate),
		proxyFetch("queue", BeQueue),
		proxyFetch("avg_queue", BeAvgQueue),
		proxyFetch("nbsrv", BeNbSrv),
		proxyFetch("connslots", BeConnSlots),
		ownProxyFetch("fe_client_timeout", FeClientTmo),
		ownProxyFetch("be_server_timeout", BeServerTmo),
		ownProxyFetch("be_tunnel_timeout", BeTunnelTmo),

		serverFetch("srv_is_up", SrvIsUp, TBool),
		serverFetch("srv_conn", SrvConn, TSint),
		serverFetch("srv_conn_free", SrvConnFree, TSint),
		serverFetch("srv_queue", SrvQueue, TSint),
		serverFetch("srv_sess_rate", SrvSessRate, TSint),
		serverFetch("srv_weight", SrvWeight, TSint),
		serverFetch("srv_iweight", SrvIWeight, TSint),
		serverFetch("srv_uweight", SrvUWeight, TSint),
	)
}

func constInt(n int64) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool { s.setInt(n); return true }
}

// constBytes gives a name's bytes without allocating once warm: the
// scratch space holds the copy.
func constBytes(r *Request, name string) []byte {
	return append(r.alloc(len(name)), name...)
}

// streamBackend is the stream's backend, or its frontend before one is
// chosen: HAProxy's stream starts with its frontend as backend.
// Streamless is implemented by a Stream that may stand for a session
// without a stream: an HTTP request refused before its head was parsed,
// which HAProxy logs from the connection, with no backend at all.
type Streamless interface {
	Streamless() bool
}

func streamBackend(r *Request) (string, int, bool) {
	if r.Stream == nil {
		return "", 0, false
	}
	if sl, ok := r.Stream.(Streamless); ok && sl.Streamless() {
		return "", 0, false
	}
	if name, id, ok := r.Stream.Backend(); ok {
		return name, id, true
	}
	name, id := r.Stream.Frontend()
	return name, id, true
}

// proxyFetch is a fetch of a figure of the proxy named in its optional
// argument (the stream's own without one).
func proxyFetch(name string, st ProxyStat) Fetch {
	return Fetch{Name: name, Max: 1, Out: TSint, Fn: func(r *Request, a []Arg, s *Sample) bool {
		pi, ok := r.Stream.(ProxyInfo)
		if !ok {
			return false
		}
		px := ""
		if len(a) > 0 {
			px = a[0].S
		}
		v, ok := pi.ProxyStat(px, st)
		if !ok {
			return false
		}
		s.setInt(v)
		return true
	}}
}

// ownProxyFetch is a figure of the stream's own proxy, without argument.
func ownProxyFetch(name string, st ProxyStat) Fetch {
	f := proxyFetch(name, st)
	f.Max = 0
	return f
}

// serverFetch is a fetch of a server's figure; its argument is
// <backend>/<server>, or <server> of the stream's backend.
func serverFetch(name string, st ServerStat, out Type) Fetch {
	return Fetch{Name: name, Min: 1, Max: 1, Out: out, Check: serverArg, Fn: func(r *Request, a []Arg, s *Sample) bool {
		pi, ok := r.Stream.(ProxyInfo)
		if !ok {
			return false
		}
		ref := a[0].V.(serverRef)
		v, ok := pi.ServerStat(ref.be, ref.srv, st)
		if !ok {
			return false
		}
		if out == TBool {
			s.setBool(v != 0)
		} else {
			s.setInt(v)
		}
		return true
	}}
}

type serverRef struct{ be, srv string }

func serverArg(env *Env, a []Arg) error {
	be, srv, ok := strings.Cut(a[0].S, "/")
	if !ok {
		be, srv = "", a[0].S
	}
	if srv == "" {
		return fmt.Errorf("missing server name in '%s'", a[0].S)
	}
	a[0].V = serverRef{be, srv}
	if env != nil && env.Servers != nil {
		b := be
		if b == "" {
			b = env.Proxy
		}
		env.Servers.ReferenceServer(b, srv)
	}
	return nil
}

// dateArgs reads date's [<offset>[,<unit>]]; the unit is kept in Arg.I
// of the second argument as a multiplier of seconds.
func dateArgs(env *Env, a []Arg) error {
	if len(a) > 0 {
		if err := argInt(env, a[:1]); err != nil {
			return err
		}
	}
	if len(a) > 1 {
		switch a[1].S {
		case "s":
			a[1].I = 1
		case "ms":
			a[1].I = 1000
		case "us":
			a[1].I = 1000000
		default:
			return fmt.Errorf("expects 's', 'ms' or 'us', got '%s'", a[1].S)
		}
	}
	return nil
}

func fetchDate(r *Request, a []Arg, s *Sample) bool {
	now := time.Now()
	unit := int64(1)
	if len(a) > 1 {
		unit = a[1].I
	}
	var v int64
	switch unit {
	case 1000:
		v = now.UnixMilli()
	case 1000000:
		v = now.UnixMicro()
	default:
		v = now.Unix()
	}
	if len(a) > 0 {
		v += a[0].I
	}
	s.setInt(v)
	return true
}

func uuidArgs(env *Env, a []Arg) error {
	if len(a) == 0 {
		return nil
	}
	if err := argInt(env, a); err != nil {
		return err
	}
	if a[0].I != 4 {
		return fmt.Errorf("Unsupported UUID version: '%d'", a[0].I)
	}
	return nil
}

// fetchUUID is a random (version 4) UUID in its text form.
func fetchUUID(r *Request, a []Arg, s *Sample) bool {
	var u [16]byte
	binary.LittleEndian.PutUint64(u[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(u[8:], rand.Uint64())
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	b := r.alloc(36)[:36]
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	s.setStr(b)
	return true
}

func binArgs(env *Env, a []Arg) error {
	if len(a[0].S)%2 != 0 {
		return fmt.Errorf("an even number of hex digit is expected")
	}
	b, err := hex.DecodeString(a[0].S)
	if err != nil {
		return fmt.Errorf("invalid hex digit in '%s'", a[0].S)
	}
	a[0].V = b
	return nil
}

// hostname is read once: HAProxy too reads it at start-up.
var hostname = sync.OnceValue(func() []byte {
	h, _ := os.Hostname()
	return []byte(h)
})

// The converters that read a proxy figure by the name in their input:
// nbsrv (a backend's usable servers) and srv_queue (a server's queue,
// "<backend>/<server>" or a server of the stream's backend).
func init() {
	RegisterConvs(
		Conv{Name: "nbsrv", In: TStr, Out: TSint, Fn: func(r *Request, a []Arg, s *Sample) bool {
			pi, ok := r.Stream.(ProxyInfo)
			if !ok || len(s.B) == 0 {
				return false
			}
			v, ok := pi.ProxyStat(string(s.B), BeNbSrv)
			if !ok {
				return false
			}
			s.setInt(v)
			return true
		}},
		Conv{Name: "srv_queue", In: TStr, Out: TSint, Fn: func(r *Request, a []Arg, s *Sample) bool {
			pi, ok := r.Stream.(ProxyInfo)
			if !ok || len(s.B) == 0 {
				return false
			}
			be, srv, found := strings.Cut(string(s.B), "/")
			if !found {
				be, srv = "", be
			}
			v, ok := pi.ServerStat(be, srv, SrvQueue)
			if !ok {
				return false
			}
			s.setInt(v)
			return true
		}},
	)
}

// FrontendInfo is the running process's side of fe_defbe and dst_conn.
type FrontendInfo interface {
	// DefaultBackend is the frontend's default_backend.
	DefaultBackend() (name string, ok bool)
	// ListenerConns is the connections the client's listener has now,
	// the client's included.
	ListenerConns() (n int64, ok bool)
}

func init() {
	RegisterFetches(
		Fetch{Name: "fe_defbe", Out: TStr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			fi, ok := r.Stream.(FrontendInfo)
			if !ok {
				return false
			}
			name, ok := fi.DefaultBackend()
			if !ok {
				return false
			}
			s.setStr(append(r.alloc(len(name)), name...))
			return true
		}},
		Fetch{Name: "dst_conn", Out: TSint, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool {
			fi, ok := r.Stream.(FrontendInfo)
			if !ok {
				return false
			}
			n, ok := fi.ListenerConns()
			if !ok {
				return false
			}
			s.setInt(n)
			return true
		}},
	)
}
