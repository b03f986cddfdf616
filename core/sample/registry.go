package sample

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"sort"

	"goha/core/http1"
)

// Request is what an expression reads: the message head being handled,
// the connection's addresses, the stream's names, its variables. The
// running process fills one per message and hands it to Eval; the
// Request also holds the scratch space the evaluation's values are built
// in, which it keeps from one message to the next.
type Request struct {
	// Head is the message the rules handle: the request, or in
	// http-response rules the response.
	Head *http1.Head
	// Req is the request while a response is handled (its method, path
	// and version stay readable, as in HAProxy); nil otherwise.
	Req    *http1.Head
	Client net.Addr
	Local  net.Addr // the address the client connected to; nil if unknown
	// ConnClient and ConnLocal are the client connection's own addresses
	// (fc_src, fc_dst) when the session's or the stream's differ from
	// them (a PROXY header, set-src and set-dst rules); nil: Client and
	// Local.
	ConnClient, ConnLocal net.Addr
	Status                int    // the response's status, in response rules
	Stream                Stream // the stream's proxies and server; nil if unknown
	Vars                  *Vars  // the stream's variables; nil: none can be set

	buf []byte
	// Samples kept here rather than on the stack: a sample handed to a
	// fetch through a function value would escape, and be allocated.
	iterSmp, lfSmp Sample
	// final says that a converter decided on the bytes it read (a
	// message whole, or wrong): more bytes would not change the outcome
	// (HAProxy's FIX and MQTT converters clearing SMP_F_MAY_CHANGE).
	final bool
}

func (r *Request) connClient() net.Addr {
	if r.ConnClient != nil {
		return r.ConnClient
	}
	return r.Client
}

func (r *Request) connLocal() net.Addr {
	if r.ConnLocal != nil {
		return r.ConnLocal
	}
	return r.Local
}

// Stream tells fetches about the stream's frontend, backend and server.
type Stream interface {
	Frontend() (name string, id int)
	// Backend and Server report ok false before they are chosen.
	Backend() (name string, id int, ok bool)
	Server() (name string, id int, ok bool)
}

// Clear empties r for the next message, keeping its scratch space.
func (r *Request) Clear() {
	buf := r.buf[:0]
	*r = Request{buf: buf}
}

// reset starts an evaluation: what the scratch space held is no longer
// needed.
func (r *Request) reset() { r.buf, r.final = r.buf[:0], false }

// alloc returns room for n bytes (an empty slice of capacity n) in the
// scratch space. The space grows by doubling; slices handed out before stay
// valid, so a warm Request allocates nothing.
func (r *Request) alloc(n int) []byte {
	l := len(r.buf)
	if cap(r.buf)-l < n {
		r.buf = make([]byte, 0, max(2*cap(r.buf), n, 512))
		l = 0
	}
	r.buf = r.buf[:l+n]
	return r.buf[l : l : l+n]
}

// request is the request head, whether a request or a response is handled.
func (r *Request) request() *http1.Head {
	if r.Req != nil {
		return r.Req
	}
	if r.Head != nil && !r.Head.IsResponse() {
		return r.Head
	}
	return nil
}

// response is the response head, in response rules.
func (r *Request) response() *http1.Head {
	if r.Head != nil && r.Head.IsResponse() {
		return r.Head
	}
	return nil
}

// Arg is a fetch's or a converter's argument: the word as written, and
// what its Check made of it.
type Arg struct {
	S  string
	I  int64
	Re *regexp.Regexp
	IP netip.Prefix
	V  any // anything else the function compiled (a map, a variable name)

	at int // where the argument starts in the text after the fetch's name
}

// Need says what of the stream a fetch reads, which decides where it may
// be used (HAProxy refuses a request header in a log format, which runs
// once headers are gone).
type Need uint8

const (
	NeedNothing    Need = iota // internal state, constants
	NeedL4                     // the connection
	NeedReqHdr                 // the request head
	NeedResHdr                 // the response head
	NeedHdr                    // the request or the response head, by direction
	NeedReq                    // what HAProxy keeps of the request line (method, version)
	NeedRes                    // what HAProxy keeps of the response (its status)
	NeedReqBuf                 // the request's bytes as received
	NeedResBuf                 // the response's bytes as received
	NeedServerConn             // the server-side connection
)

// String is HAProxy's name of what the fetch needs, as its diagnostics
// word it.
func (n Need) String() string {
	switch n {
	case NeedL4:
		return "client address"
	case NeedReqHdr:
		return "HTTP request headers"
	case NeedResHdr:
		return "HTTP response headers"
	case NeedHdr:
		return "HTTP request headers,HTTP response headers"
	case NeedReq:
		return "HTTP request"
	case NeedRes:
		return "HTTP response"
	case NeedReqBuf:
		return "request buffer"
	case NeedResBuf:
		return "response buffer"
	case NeedServerConn:
		return "server address"
	}
	return "internal state"
}

// Fetch is a sample fetch: where an expression starts.
type Fetch struct {
	Name     string
	Min, Max int // number of arguments; Max -1: any
	Out      Type
	Need     Need
	// PadArgs gives Check the optional arguments left out, empty, so
	// that it can compile their defaults (a src_* fetch's table is its
	// proxy's).
	PadArgs bool
	// Check validates and compiles the arguments, in HAProxy's words.
	Check func(env *Env, a []Arg) error
	Fn    func(r *Request, a []Arg, s *Sample) bool
}

// Conv is a converter: a function applied to a sample, its input cast to
// In first.
type Conv struct {
	Name     string
	Min, Max int
	In, Out  Type
	Check    func(env *Env, a []Arg) error
	Fn       func(r *Request, a []Arg, s *Sample) bool
}

var (
	fetches = map[string]*Fetch{}
	convs   = map[string]*Conv{}
)

// RegisterFetches adds fetches to the table; a name registered twice is a
// programming error.
func RegisterFetches(fs ...Fetch) {
	for i := range fs {
		f := &fs[i]
		if _, dup := fetches[f.Name]; dup {
			panic("sample: fetch registered twice: " + f.Name)
		}
		fetches[f.Name] = f
	}
}

// RegisterConvs adds converters to the table.
func RegisterConvs(cs ...Conv) {
	for i := range cs {
		c := &cs[i]
		if _, dup := convs[c.Name]; dup {
			panic("sample: converter registered twice: " + c.Name)
		}
		convs[c.Name] = c
	}
}

// FetchNames and ConvNames list the registered names, sorted (for
// suggestions and documentation).
func FetchNames() []string { return sortedKeys(fetches) }
func ConvNames() []string  { return sortedKeys(convs) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// argInt is a Check for arguments that are all integers.
func argInt(env *Env, a []Arg) error {
	for i := range a {
		n, ok := parseSint([]byte(a[i].S))
		if !ok {
			return fmt.Errorf("failed to parse '%s' as type 'integer' at position %d", a[i].S, i+1)
		}
		a[i].I = n
	}
	return nil
}
