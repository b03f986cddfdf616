package core

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"goha/core/certstore"
	"goha/core/tlsconf"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// A bind's certificates come from the certificate store at each
// handshake: the bind keeps where they come from (crt files and crt-list
// paths), and a view of them rebuilt whenever the store changes.

// certSource is one crt file or one crt-list of a bind line.
type certSource struct {
	crt  string
	list string
}

// bindCerts picks a bind's certificate, CA file and CRLs per connection.
type bindCerts struct {
	store  *certstore.Store
	srcs   []certSource
	strict bool
	caFile string // named to clients and verifying them
	// caVerifyFile verifies clients without being named to them.
	caVerifyFile string
	crlFiles     []string
	// ignore holds the bind's ca-ignore-err and crt-ignore-err.
	ignore tlsconf.ClientVerify
	// base is the bind's configuration; its ClientAuth is the verify
	// the bind asks for, which the views carry out themselves.
	base *tls.Config

	mu   sync.Mutex // guards view
	view *bindView
}

// bindView is what a bind serves for one generation of the store.
type bindView struct {
	gen    uint64
	cfg    *tls.Config // for certificates without crt-list options
	byName map[string][]*bindInst
	def    *bindInst
	opts   bool // some instance has its own configuration
	// verify checks client certificates for the bind's own settings;
	// nil when it does not verify them.
	verify *tlsconf.ClientVerify
}

// bindInst is one certificate of a bind, with the configuration of its
// crt-list line's SSL options, if it has some.
type bindInst struct {
	cert   *tls.Certificate
	cfg    *tls.Config
	verify *tlsconf.ClientVerify // with cfg: its line's verification
}

// addCrt adds a crt argument: a file, or every certificate of a
// directory.
func (b *bindCerts) addCrt(st *certstore.Store, path string) error {
	files := []string{path}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		ents, _ := os.ReadDir(path)
		files = nil
		for _, e := range ents {
			n := e.Name()
			if !e.IsDir() && !strings.HasSuffix(n, ".key") && !strings.HasSuffix(n, ".ocsp") && !strings.HasSuffix(n, ".issuer") {
				files = append(files, filepath.Join(path, n))
			}
		}
		sort.Strings(files)
	}
	for _, f := range files {
		c, err := st.LoadCert(f)
		if err != nil {
			return fmt.Errorf("unable to load SSL certificate file '%s' file does not exist.", f)
		}
		if c.OCSP != nil && ocspIssuer(c) == nil {
			// HAProxy finds which certificate an OCSP response is for
			// from the certificate and its issuer.
			return errNoOCSPIssuer(f)
		}
		b.srcs = append(b.srcs, certSource{crt: f})
	}
	return nil
}

func errNoOCSPIssuer(crt string) error {
	return fmt.Errorf("'%s.ocsp' is present and activates OCSP but it is impossible to compute the OCSP certificate ID (maybe the issuer could not be found)'.", crt)
}

// ocspIssuer is the issuer HAProxy matches a certificate's OCSP response
// with: from its chain, else its .issuer file.
func ocspIssuer(c *certstore.Cert) *x509.Certificate {
	for _, x := range c.Certs[1:] {
		if bytes.Equal(x.RawSubject, c.Certs[0].RawIssuer) {
			return x
		}
	}
	return c.Issuer
}

// markUsed records the bind's files as used in the store; pos names the
// bind line.
func (b *bindCerts) markUsed(pos string) {
	for i, s := range b.srcs {
		if s.list != "" {
			b.store.Use(s.list)
			if i == 0 && !b.strict {
				b.store.UseAsDefault(s.list, pos)
			}
			if l := b.store.CrtList(s.list); l != nil {
				for _, e := range l.Entries {
					b.store.Use(e.Cert)
					for _, k := range []string{"ca-file", "ca-verify-file", "crl-file"} {
						if v, ok := e.Opts[k]; ok {
							b.store.Use(v)
						}
					}
				}
			}
		} else {
			b.store.Use(s.crt)
		}
	}
	for _, f := range []string{b.caFile, b.caVerifyFile} {
		if f != "" {
			b.store.Use(f)
		}
	}
	for _, f := range b.crlFiles {
		b.store.Use(f)
	}
}

// current is the view of the store as it is now.
func (b *bindCerts) current() *bindView {
	gen := b.store.Gen()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.view == nil || b.view.gen != gen {
		b.view = b.build(gen)
	}
	return b.view
}

func (b *bindCerts) configFor(h *tls.ClientHelloInfo) (*tls.Config, error) {
	v := b.current()
	if v.opts {
		if in, err := v.pickInst(h, b.strict); err == nil && in.cfg != nil {
			return in.cfg, nil
		}
	}
	return v.cfg, nil
}

// build derives the view of the store's generation gen: each instance's
// names are its line's positive SNI filters, else the certificate's own
// names, less its negative filters.
func (b *bindCerts) build(gen uint64) *bindView {
	v := &bindView{gen: gen, byName: map[string][]*bindInst{}}
	cfg := b.base.Clone()
	cfg.GetConfigForClient = nil
	cfg.Certificates = nil
	cfg.GetCertificate = func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
		in, err := v.pickInst(h, b.strict)
		if err != nil {
			return nil, err
		}
		return in.cert, nil
	}
	if b.caFile != "" {
		if f := b.store.File(certstore.KindCA, b.caFile); f != nil {
			cfg.ClientCAs = f.Pool()
		}
	}
	v.verify = b.verifyWith(cfg, b.base.ClientAuth, b.caFile, b.caVerifyFile, b.crlFiles)
	v.cfg = cfg
	add := func(path string, filters []string, opts map[string]string) {
		e := b.store.Cert(path)
		if e == nil || e.TLS() == nil {
			return
		}
		in := &bindInst{cert: e.TLS()}
		if len(opts) > 0 {
			in.cfg, in.verify = b.lineConfig(cfg, in.cert, opts)
			v.opts = true
		}
		if v.def == nil {
			v.def = in
		}
		var pos []string
		neg := map[string]bool{}
		for _, f := range filters {
			if n, ok := strings.CutPrefix(f, "!"); ok {
				neg[strings.ToLower(n)] = true
			} else {
				pos = append(pos, strings.ToLower(f))
			}
		}
		if len(pos) == 0 {
			for _, n := range e.Names() {
				pos = append(pos, strings.ToLower(n))
			}
		}
		for _, n := range pos {
			if !neg[n] {
				v.byName[n] = append(v.byName[n], in)
			}
		}
	}
	for _, s := range b.srcs {
		if s.list == "" {
			add(s.crt, nil, nil)
			continue
		}
		if l := b.store.CrtList(s.list); l != nil {
			for _, e := range l.Entries {
				add(e.Cert, e.Filters, e.Opts)
			}
		}
	}
	return v
}

// caCerts are the certificates of a CA file as committed.
func (b *bindCerts) caCerts(path string) []*x509.Certificate {
	if f := b.store.File(certstore.KindCA, path); path != "" && f != nil {
		return f.Certs
	}
	return nil
}

// crls gathers the revocation lists of CRL files as committed.
func (b *bindCerts) crls(paths []string) []*x509.RevocationList {
	var out []*x509.RevocationList
	for _, p := range paths {
		if f := b.store.File(certstore.KindCRL, p); f != nil {
			out = append(out, f.CRLs...)
		}
	}
	return out
}

// lineConfig is the bind's configuration with a crt-list line's SSL
// options over it, serving that line's certificate, and how it verifies
// clients. The options were checked when the line was read; one Go
// cannot apply leaves the bind's setting.
func (b *bindCerts) lineConfig(base *tls.Config, cert *tls.Certificate, opts map[string]string) (*tls.Config, *tlsconf.ClientVerify) {
	c := base.Clone()
	c.GetCertificate = nil
	c.Certificates = []tls.Certificate{*cert}
	caFile, caVerifyFile, crlFiles := b.caFile, b.caVerifyFile, b.crlFiles
	for k, v := range opts {
		switch k {
		case "ca-file":
			caFile = v
			if f := b.store.File(certstore.KindCA, v); f != nil {
				c.ClientCAs = f.Pool()
			}
		case "ca-verify-file":
			caVerifyFile = v
		case "crl-file":
			crlFiles = []string{v}
		default:
			// Checked when the line was read.
			setTLSOption(c, k, v)
		}
	}
	if _, ok := opts["alpn"]; ok {
		tlsconf.WithoutH2(c)
	}
	mode := b.base.ClientAuth
	if _, ok := opts["verify"]; ok {
		mode = c.ClientAuth
	}
	return c, b.verifyWith(c, mode, caFile, caVerifyFile, crlFiles)
}

// setTLSOption applies one of the options a bind line and a crt-list
// line share (versions, alpn, verify, ciphers, curves) to c; another is
// left to the caller.
func setTLSOption(c *tls.Config, k, v string) error {
	switch k {
	case "ssl-min-ver", "ssl-max-ver":
		n, err := tlsconf.ParseVersion(k, v)
		if err != nil {
			return err
		}
		if k == "ssl-min-ver" {
			c.MinVersion = n
		} else {
			c.MaxVersion = n
		}
	case "alpn":
		c.NextProtos = strings.Split(v, ",")
	case "verify":
		m, ok := map[string]tls.ClientAuthType{"none": tls.NoClientCert,
			"optional": tls.VerifyClientCertIfGiven, "required": tls.RequireAndVerifyClientCert}[v]
		if !ok {
			return fmt.Errorf("verify : unknown verify method, only 'none', 'optional', and 'required' are supported")
		}
		c.ClientAuth = m
	case "ciphers":
		ids, err := tlsconf.CipherIDs(v)
		if err != nil {
			return err
		}
		c.CipherSuites = ids
	case "curves", "ecdhe":
		ids, err := tlsconf.CurveIDs(v)
		if err != nil {
			return err
		}
		c.CurvePreferences = ids
	}
	return nil
}

// verifyWith sets c up to verify client certificates as mode asks,
// against the CA files and CRLs given, and returns the verifier (nil when
// mode verifies nothing). crypto/tls would stop at the first error: the
// verification is goha's, so that crt-ignore-err and ca-ignore-err can
// let a client through and ssl_c_verify tell why.
func (b *bindCerts) verifyWith(c *tls.Config, mode tls.ClientAuthType, caFile, caVerifyFile string, crlFiles []string) *tlsconf.ClientVerify {
	c.VerifyPeerCertificate = nil
	c.ClientAuth = mode
	if mode == tls.NoClientCert {
		return nil
	}
	cv := b.ignore
	cv.Roots = append(append([]*x509.Certificate(nil), b.caCerts(caFile)...), b.caCerts(caVerifyFile)...)
	cv.CRLs = b.crls(crlFiles)
	if mode == tls.RequireAndVerifyClientCert {
		c.ClientAuth = tls.RequireAnyClientCert
	} else {
		c.ClientAuth = tls.RequestClientCert
	}
	c.VerifyPeerCertificate = cv.Check
	return &cv
}

// pickInst chooses the instance for a client's SNI: exact name, then
// wildcard, the first whose certificate the client supports; else the
// default, unless strict.
func (v *bindView) pickInst(h *tls.ClientHelloInfo, strict bool) (*bindInst, error) {
	if name := strings.ToLower(h.ServerName); name != "" {
		cands := v.byName[name]
		if len(cands) == 0 {
			if i := strings.IndexByte(name, '.'); i > 0 {
				cands = v.byName["*"+name[i:]]
			}
		}
		for _, c := range cands {
			if h.SupportsCertificate(c.cert) == nil {
				return c, nil
			}
		}
		if len(cands) > 0 {
			return cands[0], nil
		}
	}
	if strict || v.def == nil {
		return nil, fmt.Errorf("no certificate for server name '%s' (strict-sni)", h.ServerName)
	}
	return v.def, nil
}

// storeSessionCache is a server's TLS session cache, emptied when the
// certificate store changes: a resumed session would carry the client
// certificate and the verification of before a commit, as HAProxy drops
// a server's sessions with the SSL context a commit replaces.
type storeSessionCache struct {
	store *certstore.Store
	mu    sync.Mutex // guards gen and cache
	gen   uint64
	cache tls.ClientSessionCache
}

func (c *storeSessionCache) current() tls.ClientSessionCache {
	gen := c.store.Gen()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache == nil || c.gen != gen {
		c.cache, c.gen = tls.NewLRUClientSessionCache(64), gen
	}
	return c.cache
}

func (c *storeSessionCache) Get(key string) (*tls.ClientSessionState, bool) {
	return c.current().Get(key)
}

func (c *storeSessionCache) Put(key string, cs *tls.ClientSessionState) {
	c.current().Put(key, cs)
}

// completeChains extends each verified chain with the CA file's issuers
// up to a self-signed certificate. Go stops a chain at the first
// certificate of the CA file it meets, where OpenSSL goes on to the root,
// and the CRL checks HAProxy asks for (every certificate of the chain)
// then need the CA's own issuer.
func completeChains(chains [][]*x509.Certificate, cas []*x509.Certificate) [][]*x509.Certificate {
	out := make([][]*x509.Certificate, 0, len(chains))
	for _, ch := range chains {
		ch = append([]*x509.Certificate(nil), ch...)
		for len(ch) > 0 && len(ch) <= 16 {
			last := ch[len(ch)-1]
			if bytes.Equal(last.RawSubject, last.RawIssuer) {
				break
			}
			var next *x509.Certificate
			for _, c := range cas {
				if bytes.Equal(c.RawSubject, last.RawIssuer) && last.CheckSignatureFrom(c) == nil {
					next = c
					break
				}
			}
			if next == nil {
				break
			}
			ch = append(ch, next)
		}
		out = append(out, ch)
	}
	return out
}

// Certificate is the certificate the bind serves a client asking for
// serverName, as its certificates are now.
func (b *Bind) Certificate(serverName string) *tls.Certificate {
	if b.certs == nil {
		return nil
	}
	in, err := b.certs.current().pickInst(&tls.ClientHelloInfo{ServerName: serverName}, b.certs.strict)
	if err != nil {
		return nil
	}
	return in.cert
}

// ClientVerifyFor is how the bind verified the client of a connection
// that asked for serverName: the crt-list line that served it may carry
// its own verify, ca-file or crl-file. crypto/tls does not tell which
// configuration served a connection, so the choice the handshake made
// from the client's SNI is made again; nil when the connection's
// certificate was not verified.
func (b *Bind) ClientVerifyFor(serverName string) *tlsconf.ClientVerify {
	if b.certs == nil {
		return nil
	}
	v := b.certs.current()
	if v.opts {
		if in, err := v.pickInst(&tls.ClientHelloInfo{ServerName: serverName}, b.certs.strict); err == nil && in.cfg != nil {
			return in.verify
		}
	}
	return v.verify
}
