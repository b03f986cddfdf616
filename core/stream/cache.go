package stream

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	"goha/core/cache"
	"goha/core/http1"
	"goha/core/sample"
)

// The HTTP cache: cache-use looks the request up and, on a hit, the
// stream answers from the stored response once its request rules are
// done; cache-store takes a snapshot of the response head and the body
// follows as it goes to the client.

const (
	actCacheUse ruleAction = iota + 220
	actCacheStore
)

// cacheSet is the process's caches by name, made on first use.
type cacheSet struct {
	once sync.Once
	m    map[string]*cache.Cache
}

// cacheNamed is the cache section named name; the configuration checked
// that it exists.
func (proc *Process) cacheNamed(name string) *cache.Cache {
	proc.caches.once.Do(func() {
		proc.caches.m = make(map[string]*cache.Cache, len(proc.Conf.Caches))
		for _, c := range proc.Conf.Caches {
			proc.caches.m[c.Name] = cache.New(*c)
		}
	})
	return proc.caches.m[name]
}

// Caches lists the caches in declaration order, for show cache.
func (proc *Process) Caches() []*cache.Cache {
	var out []*cache.Cache
	for _, c := range proc.Conf.Caches {
		out = append(out, proc.cacheNamed(c.Name))
	}
	return out
}

// cacheTxn is what the cache knows of one exchange.
type cacheTxn struct {
	key    [20]byte
	keyOK  bool
	req    cache.RequestFlags
	sec    [cache.SecKeyLen]byte // the request's full secondary key
	secOK  bool
	hit    *cache.Entry // the stored response that answers the request
	hitC   *cache.Cache
	notMod bool        // the hit is answered with a 304
	st     *cacheStore // the response being stored
}

// cacheStore is a response on its way into a cache.
type cacheStore struct {
	c       *cache.Cache
	e       *cache.Entry
	req     [cache.SecKeyLen]byte // the request's secondary key, for the signature
	head    int                   // the head's stored size (cache.HeadSize)
	chunked bool
	body    []byte
	over    bool // too big: dropped
}

// compileCacheAction compiles cache-use (a request action) and
// cache-store (a response one).
func compileCacheAction(r *httpRule, args []string, resp bool) (bool, error) {
	switch {
	case args[0] == "cache-use" && !resp:
		r.act = actCacheUse
	case args[0] == "cache-store" && resp:
		r.act = actCacheStore
	default:
		return false, nil
	}
	if len(args) < 2 {
		return true, fmt.Errorf("expects a cache name")
	}
	r.name = args[1]
	return true, nil
}

// headerOf gives h's fields to the cache's rules.
func headerOf(h *http1.Head) cache.Header {
	return func(name string, fn func([]byte)) {
		for i := h.Index(name, 0); i >= 0; i = h.Index(name, i+1) {
			fn(h.Value(i))
		}
	}
}

// cacheUse runs http-request cache-use for the rules of px.
func (hc *hconn) cacheUse(px *proxy, r *httpRule) {
	c := hc.proc.cacheNamed(r.name)
	ct := &hc.cache
	if c == nil || ct.hit != nil {
		return
	}
	req := &hc.req
	h := headerOf(req)
	ct.req = cache.CheckRequest(h)
	if req.Flags&http1.FlagVer11 == 0 || req.Method != http1.MethodGET && req.Method != http1.MethodHEAD {
		ct.req.Ignore = true
	}
	uri := req.URI()
	host, hasHost := req.Get("host")
	// The key is computed for every method: a successful unsafe request
	// drops what is stored for it.
	ct.key, ct.keyOK = cache.Key(uri, host, hasHost, len(uri) > 0 && uri[0] != '/' && string(uri) != "*")
	if !ct.keyOK || ct.req.Ignore {
		return
	}
	if px == hc.si.fe {
		px.FE.CacheLookups.Add(1)
	} else {
		px.BE.CacheLookups.Add(1)
	}
	e := c.Lookup(ct.key, func(sig uint32) ([cache.SecKeyLen]byte, bool) { return cache.SecondaryKey(h, sig) })
	if e == nil {
		if c.ProcessVary {
			ct.sec, ct.secOK = cache.SecondaryKey(h, ^uint32(0))
		}
		return
	}
	ct.hit, ct.hitC = e, c
	ct.notMod = cache.NotModified(h, e)
	if px == hc.si.fe {
		px.FE.CacheHits.Add(1)
	} else {
		px.BE.CacheHits.Add(1)
	}
}

// cacheStoreRule runs http-response cache-store on the response head h:
// when the response may be stored, its head as it is now is kept and its
// body is collected as it goes to the client.
func (hc *hconn) cacheStoreRule(r *httpRule, h *http1.Head) {
	ct := &hc.cache
	c := hc.proc.cacheNamed(r.name)
	req := &hc.req
	if c == nil || ct.hit != nil || ct.st != nil || req.Flags&http1.FlagVer11 == 0 {
		return
	}
	if req.Method != http1.MethodGET {
		switch req.Method {
		case http1.MethodHEAD, http1.MethodOPTIONS, http1.MethodTRACE:
		default:
			if ct.keyOK && h.Status >= 200 && h.Status < 400 {
				c.Delete(ct.key)
			}
		}
		return
	}
	if !ct.keyOK || h.Status != 200 || h.Body == http1.BodyTunnel {
		return
	}
	hdr := headerOf(h)
	if h.Body == http1.BodyLength {
		if n, ok := h.Get("content-length"); ok {
			if l, err := strconv.Atoi(string(n)); err == nil && l > c.MaxObjSize {
				return
			}
		}
	}
	var sig uint32
	if c.ProcessVary {
		s, ok := cache.VarySignature(hdr)
		if !ok {
			return
		}
		if s != 0 && !ct.secOK {
			return
		}
		sig = s
	} else if _, ok := h.Get("vary"); ok {
		return
	}
	if !cache.Cacheable(hdr, ct.req) {
		return
	}
	now := c.Now()
	eff, trueAge, ok := c.MaxAge(hdr, now)
	if !ok {
		return
	}
	e := &cache.Entry{Hash: ct.key, Signature: sig, Validated: now, Expire: now + eff}
	age, present, ok := cache.ServerAge(hdr)
	if !ok || present && age > max(trueAge, 0) {
		return
	}
	if present {
		e.Age = age
		h.Del("age")
	}
	e.LastModified = cache.LastModified(hdr, now)
	var reqKey [cache.SecKeyLen]byte
	if v, ok := h.Get("etag"); ok {
		e.ETag = append([]byte(nil), v...)
	}
	if sig != 0 {
		e.SecKey = ct.sec
		if sig&cache.VaryAcceptEncoding == 0 {
			clear(e.SecKey[0:4])
		}
		if sig&cache.VaryReferer == 0 {
			clear(e.SecKey[4:8])
		}
		reqKey = e.SecKey
		// The response's encodings go in the key whatever the signature,
		// as HAProxy 2.6 does: an entry that varies on the referer alone
		// then matches no request (whose key has no encodings), and is
		// never served.
		if !cache.ResponseEncoding(hdr, &e.SecKey) {
			return
		}
	}
	e.UntilClose = h.Body == http1.BodyUntilClose
	e.Head = append([]byte(nil), hc.rwResp.Head(h)...)
	fields := 0
	for i := range h.NumFields() {
		if name, _ := h.Field(i); !h.Deleted(i) && !strings.EqualFold(string(name), "connection") {
			fields++
		}
	}
	if present {
		// HAProxy's removal of Age leaves its block, without data.
		fields++
	}
	head := cache.HeadSize(h.HTXSize(), fields)
	if !c.Fits(head) {
		return
	}
	ct.st = &cacheStore{c: c, e: e, req: reqKey, head: head, chunked: h.Body == http1.BodyChunked}
}

// cacheBody adds what of the body goes to the client to the response
// being stored.
func (hc *hconn) cacheBody(p []byte) {
	st := hc.cache.st
	if st == nil || st.over {
		return
	}
	// The payload so far decides, as HAProxy stores the data without
	// its chunked framing.
	if !st.c.Fits(cache.ObjectSize(st.head, hc.rsBody.Data, false)) {
		st.over, st.body = true, nil
		return
	}
	st.body = append(st.body, p...)
}

// cacheTee has a streamed body's writes to the client collected too.
func (hc *hconn) cacheTee(a *activeConn) {
	if hc.cache.st != nil {
		a.c = &cacheTeeConn{Conn: a.c, hc: hc}
	}
}

type cacheTeeConn struct {
	net.Conn
	hc *hconn
}

func (t *cacheTeeConn) Write(p []byte) (int, error) {
	n, err := t.Conn.Write(p)
	t.hc.cacheBody(p[:n])
	return n, err
}

// cacheDone stores the response once all of it went to the client.
func (hc *hconn) cacheDone() {
	st := hc.cache.st
	if st == nil {
		return
	}
	hc.cache.st = nil
	if st.over || !hc.rsBody.Done() {
		return
	}
	st.e.Body = st.body
	st.e.DataLen = hc.rsBody.HTXData()
	st.e.ObjSize = cache.ObjectSize(st.head, hc.rsBody.Data, st.chunked)
	st.c.StoreFor(st.e, st.req)
}

// serveCached answers the request from its cache hit, through the
// response rules as a server's response: as HAProxy's cache applet, the
// stored head gets its Age field before the rules see it, and a rule's
// deny, return or redirect replaces the stored response. It is logged as
// HAProxy logs its cache: server <CACHE>, LR, Tw, Tc and Tr of 0, the
// bytes the cache produced. It says whether the client's connection goes
// on.
func (proc *Process) serveCached(fe, be *proxy, c net.Conn, cbuf *http1.Buffer, hc *hconn, hlen int, si *streamInfo) bool {
	ct := &hc.cache
	e := ct.hit
	req := &hc.req
	whole, reqLen := hc.wholeRequest(cbuf, hlen)
	mode := hc.replyConn(whole)
	keep := mode != http1.ConnClose
	if keep {
		cbuf.Discard(reqLen)
	}
	if e.UntilClose {
		// Nothing but the close delimits the body, as from the server.
		mode, keep = http1.ConnClose, false
	}
	if be == fe {
		// Intercepted by the frontend's rules, as HAProxy counts it.
		fe.FE.Intercepted.Add(1)
	}
	si.applet, si.connected, si.gotResp = "<CACHE>", true, true
	si.term = [2]byte{'L', 'R'}
	resp := &hc.resp
	resp.Reset()
	head := append([]byte(nil), e.Head...)
	if _, err := resp.ParseResponse(head, req.Method); err != nil {
		si.status, si.term = 500, [2]byte{'P', 'R'}
		proc.replyError(be, c, 500, http1.ConnClose, si)
		return false
	}
	hc.rwResp.Reset()
	age := max(0, ct.hitC.Now()-e.Validated) + e.Age
	resp.AddField("Age", strconv.AppendInt(nil, min(age, cache.MaxEntryAge), 10))
	status := resp.Status
	body := e.Body
	// What the cache produces: the stored head with its Age, and the
	// payload unless the request is a HEAD or gets a 304.
	size := int64(resp.HTXSize())
	if ct.notMod {
		status = 304
		size += int64(len("Not Modified") - len(resp.Reason()))
		hc.rwResp.SetStatus([]byte("304"), []byte("Not Modified"))
		// A 304 has no body: no chunked framing announces one, as
		// HAProxy 2.6.0's reg-tests want (2.6.12 keeps the field).
		resp.Del("transfer-encoding")
	}
	if ct.notMod || req.Method == http1.MethodHEAD {
		body = nil
	} else {
		size += e.DataLen
	}
	si.bytesOut = size
	if body != nil {
		// The cache produces the whole response at once: its rules see
		// the body, as HAProxy's do without waiting for it.
		hc.ss.resBody, hc.ss.resBodyOK = decodeBody(hc.ss.resBody[:0], body, resp), true
	}
	view := &hc.view
	view.Head, view.Req, view.Status = resp, req, status
	// Compression applies to a hit as to a server's response.
	hc.compRequest(fe, be, req)
	if !ct.notMod {
		hc.compResponse(proc, fe, be, req, resp)
	}
	si.status = status
	for i, px := range [2]*proxy{be, fe} {
		if i == 1 && px == be {
			continue
		}
		denied, st := hc.runRespRules(px.respRules, view, resp)
		if st != 0 {
			status = st
		}
		if r := hc.respRedir; r != nil {
			hc.respRedir = nil
			si.status, si.gotResp = r.redir.code, false
			proc.sendRedirect(be, c, hc, r, view, mode, si)
			return keep
		}
		if denied && hc.respReply != nil {
			return proc.respReplyRule(c, hc, si, mode) && keep
		}
	}
	if st := hc.afterResponse(fe, be, resp, view); st != 0 {
		status = st
	}
	hc.rwResp.SetConnection(resp, mode)
	si.status = status
	hc.endTracking(si)
	if hc.comp.active && body != nil {
		proc.compReply(fe, be, c, hc, resp, body)
	} else {
		hc.rwResp.WriteTo(c, resp, body)
	}
	proc.endLocal(si, status)
	return keep
}

// CacheHit is what res.cache_hit and res.cache_name read.
func (ss *sampleStream) CacheHit() (string, bool) {
	hc := ss.si.hc
	if hc == nil || hc.cache.hit == nil {
		return "", false
	}
	return hc.cache.hitC.Name, true
}

var _ sample.CacheInfo = (*sampleStream)(nil)
