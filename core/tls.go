package core

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"goha/core/certstore"
	"goha/core/diag"
	"goha/core/tlsconf"
	"os"
	"path/filepath"
	"strings"
)

// TLS towards servers (`ssl` on server lines) and on binds (`bind ... ssl
// crt <file|dir>`). Settings resolve as HAProxy resolves them: a server's
// own keywords, then default-server's (already merged into ServerConf),
// then global ssl-default-server-options; binds likewise with
// ssl-default-bind-options.

func init() {
	kws := map[string]serverKeyword{}
	for _, kw := range []string{"ssl-min-ver", "ssl-max-ver"} {
		k := kw
		kws[k] = serverKeyword{Args: 1, Parse: func(s *ServerConf, a []string) error {
			if _, err := tlsconf.ParseVersion(k, a[0]); err != nil {
				return err
			}
			setSSLArg(s, k, a[0])
			return nil
		}}
	}
	kws["verify"] = serverKeyword{Args: 1, Parse: func(s *ServerConf, a []string) error {
		if a[0] != "none" && a[0] != "required" {
			return fmt.Errorf("'verify' : unknown verify method '%s', only 'none' and 'required' are supported", a[0])
		}
		setSSLArg(s, "verify", a[0])
		return nil
	}}
	for _, kw := range []string{"ca-file", "crt", "crl-file"} {
		k := kw
		kws[k] = serverKeyword{Args: 1, Parse: func(s *ServerConf, a []string) error {
			// A relative path is read under crt-base or ca-base: the
			// TLS settings are built (and the file read) after parsing.
			if _, err := os.Stat(a[0]); err != nil && filepath.IsAbs(a[0]) {
				return fmt.Errorf("'%s' : unable to load '%s'", k, a[0])
			}
			setSSLArg(s, k, a[0])
			return nil
		}}
	}
	registerServerKeywords(kws)
	registerPostCheck(checkTLS)
	registerKeywords(
		Keyword{Name: "ssl-load-extra-del-ext", Scope: scopeGlobal, Args: 0, Parse: func(c *kwCtx, _ []string) error {
			c.g.certStore().DelExt = true
			return nil
		}},
		Keyword{Name: "ssl-load-extra-files", Scope: scopeGlobal, Args: ArgsAny, Parse: parseExtraFiles},
	)
}

// certStore returns the process's certificate store, creating it the
// first time a keyword or a TLS setting needs it.
// parseExtraFiles reads ssl-load-extra-files: "none", "all", or some of
// bundle, sctl, ocsp, issuer and key, with HAProxy's messages.
func parseExtraFiles(c *kwCtx, args []string) error {
	errArg := errf("'ssl-load-extra-files' expects one or multiple arguments (none, all, bundle, sctl, ocsp, issuer).")
	if len(args) == 0 {
		return errArg
	}
	var load certstore.Extra
	for i, a := range args {
		switch a {
		case "bundle":
			load |= certstore.ExtraBundle
		case "sctl":
			load |= certstore.ExtraSCTL
		case "ocsp":
			load |= certstore.ExtraOCSP
		case "issuer":
			load |= certstore.ExtraIssuer
		case "key":
			load |= certstore.ExtraKey
		case "none", "all":
			if load != 0 || i != len(args)-1 {
				return errf("'ssl-load-extra-files' 'none' and 'all' can be only used alone")
			}
			if a == "all" {
				load = certstore.ExtraAll
			}
		default:
			return errArg
		}
	}
	c.g.certStore().Skip = certstore.ExtraAll &^ load
	return nil
}

func (g *Global) certStore() *certstore.Store {
	if g.Certs == nil {
		g.Certs = certstore.New()
	}
	return g.Certs
}

// sslSettings merges a server's ssl keywords over the global defaults.
func sslSettings(g *Global, args map[string]string) map[string]string {
	m := map[string]string{}
	opts := g.SSLDefaultServerOptions
	for i := 0; i < len(opts); i++ {
		switch opts[i] {
		case "ssl-min-ver", "ssl-max-ver":
			if i+1 < len(opts) {
				m[opts[i]] = opts[i+1]
				i++
			}
		default:
			m[opts[i]] = ""
		}
	}
	if g.SSLDefaultServerCiphers != "" {
		m["ciphers"] = g.SSLDefaultServerCiphers
	}
	for k, v := range args {
		m[k] = v
	}
	return m
}

// ServerTLSConfig builds the client TLS configuration of a server, or nil
// when the server does not use TLS.
func (s *Server) buildTLS(g *Global) (*tls.Config, error) {
	m := sslSettings(g, s.SSLArgs)
	c := &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13}
	if v, ok := m["ssl-min-ver"]; ok {
		n, err := tlsconf.ParseVersion("ssl-min-ver", v)
		if err != nil {
			return nil, err
		}
		c.MinVersion = n
	}
	if v, ok := m["ssl-max-ver"]; ok {
		n, err := tlsconf.ParseVersion("ssl-max-ver", v)
		if err != nil {
			return nil, err
		}
		c.MaxVersion = n
	}
	// The no-tlsvXX forms of older configurations narrow the range.
	for _, k := range []string{"no-tlsv10", "no-tlsv11", "no-tlsv12"} {
		if _, ok := m[k]; ok {
			v := map[string]uint16{"no-tlsv10": tls.VersionTLS11, "no-tlsv11": tls.VersionTLS12, "no-tlsv12": tls.VersionTLS13}[k]
			if c.MinVersion < v {
				c.MinVersion = v
			}
		}
	}
	if _, ok := m["no-tlsv13"]; ok && c.MaxVersion > tls.VersionTLS12 {
		c.MaxVersion = tls.VersionTLS12
	}
	if c.MinVersion > c.MaxVersion {
		return nil, fmt.Errorf("ssl-min-ver is higher than ssl-max-ver")
	}
	// HAProxy verifies server certificates unless told otherwise
	// (ssl-server-verify, required by default); a missing ca-file then
	// fails at start-up, as it does.
	verify := m["verify"]
	if verify == "" {
		verify = g.SSLServerVerify
	}
	if verify == "" {
		verify = "required"
	}
	if verify == "none" {
		c.InsecureSkipVerify = true
	} else {
		ca, ok := m["ca-file"]
		if !ok {
			return nil, fmt.Errorf("verify is enabled by default but no CA file specified. If you're running on a LAN where you're certain to trust the server's certificate, please set an explicit 'verify none' statement on the 'server' line, or use 'ssl-server-verify none' in the global section to disable server-side verifications by default.")
		}
		st := g.certStore()
		caPath := g.caPath(ca)
		if _, err := st.LoadFile(certstore.KindCA, caPath); err != nil {
			return nil, fmt.Errorf("unable to load CA file '%s'", ca)
		}
		// The chain is checked against the CA file as committed at the
		// time of the handshake, so that `commit ssl ca-file` applies to
		// the next connection.
		host := m["verifyhost"]
		if _, ok := m["no-verifyhost"]; ok {
			host = ""
		}
		crlPath := ""
		if crl, ok := m["crl-file"]; ok {
			crlPath = g.caPath(crl)
			if _, err := st.LoadFile(certstore.KindCRL, crlPath); err != nil {
				return nil, fmt.Errorf("unable to load CRL file '%s'", crl)
			}
		}
		c.InsecureSkipVerify = true
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("no server certificate")
			}
			f := st.File(certstore.KindCA, caPath)
			if f == nil {
				return errors.New("CA file removed")
			}
			opts := x509.VerifyOptions{Roots: f.Pool(), Intermediates: x509.NewCertPool(), DNSName: host}
			for _, ic := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(ic)
			}
			chains, err := cs.PeerCertificates[0].Verify(opts)
			if err != nil || crlPath == "" {
				return err
			}
			var crls []*x509.RevocationList
			if l := st.File(certstore.KindCRL, crlPath); l != nil {
				crls = l.CRLs
			}
			return tlsconf.CheckCRLs(crls)(nil, completeChains(chains, f.Certs))
		}
	}
	if crt, ok := m["crt"]; ok {
		st := g.certStore()
		p := g.crtPath(crt)
		if _, err := st.LoadCert(p); err != nil {
			return nil, fmt.Errorf("unable to load certificate '%s': %v", crt, err)
		}
		// The client certificate is read at each handshake, so that
		// `commit ssl cert` applies to the next server connection.
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if e := st.Cert(p); e != nil && e.TLS() != nil {
				return e.TLS(), nil
			}
			return &tls.Certificate{}, nil
		}
	}
	if sni, ok := m["sni"]; ok {
		if v, ok := strings.CutPrefix(sni, "str("); ok && strings.HasSuffix(v, ")") {
			c.ServerName = strings.TrimSuffix(v, ")")
		}
	}
	if a, ok := m["alpn"]; ok {
		c.NextProtos = strings.Split(a, ",")
	}
	if ciphers, ok := m["ciphers"]; ok {
		ids, err := tlsconf.CipherIDs(ciphers)
		if err != nil {
			return nil, err
		}
		c.CipherSuites = ids
	}
	if _, off := m["no-ssl-reuse"]; !off {
		c.ClientSessionCache = &storeSessionCache{store: g.certStore()}
	}
	return c, nil
}

// dynamicSNI says whether the SNI comes from the request (sni
// req.hdr(host)): such connections are not shared between requests for
// other names.
func (s *Server) DynamicSNI() bool {
	v := s.SSLArgs["sni"]
	return v != "" && !strings.HasPrefix(v, "str(")
}

func (s *Server) TLSConfig() *tls.Config {
	if s.tls == nil {
		return nil
	}
	return s.tls.cfg.Load()
}

// refreshTLS applies the server's ssl setting (configuration or `set
// server ssl`).
func (s *Server) RefreshTLS(g *Global) error {
	if s.tls == nil {
		s.tls = &serverTLS{}
	}
	if s.UseSSL() != 1 {
		s.tls.cfg.Store(nil)
		s.tls.setUsed(g.Certs, nil)
		return nil
	}
	c, err := s.buildTLS(g)
	if err != nil {
		return err
	}
	s.tls.cfg.Store(c)
	m := sslSettings(g, s.SSLArgs)
	var used []string
	if v, ok := m["crt"]; ok {
		used = append(used, g.crtPath(v))
	}
	for _, k := range []string{"ca-file", "crl-file"} {
		if v, ok := m[k]; ok {
			used = append(used, g.caPath(v))
		}
	}
	s.tls.setUsed(g.Certs, used)
	return nil
}

// setUsed records the store paths a server's TLS configuration uses, so
// that `show ssl cert` says which files are in use and `del ssl cert`
// refuses them.
func (t *serverTLS) setUsed(st *certstore.Store, used []string) {
	if st == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range used {
		st.Use(p)
	}
	for _, p := range t.used {
		st.Release(p)
	}
	t.used, t.store = used, st
}

// releaseTLS gives back what the server used of the certificate store,
// when it is deleted.
func (s *Server) releaseTLS() {
	if s.tls == nil {
		return
	}
	s.tls.mu.Lock()
	st := s.tls.store
	s.tls.mu.Unlock()
	s.tls.setUsed(st, nil)
}

// checkTLS validates every server's and bind's TLS settings at load time.
func checkTLS(b *builder) {
	b.cfg.Global.certStore()
	for _, p := range b.cfg.Proxies {
		for _, s := range p.Servers {
			if s.SSL == 1 {
				if _, err := s.buildTLS(&b.cfg.Global); err != nil {
					b.d.Alertf(s.Pos, "'server %s/%s' : %v", p.Name, s.Name, err)
					continue
				}
			}
		}
		for _, bd := range p.Binds {
			if bindHasSSL(bd) {
				cfg, err := buildBindTLS(&b.cfg.Global, bd)
				if errors.Is(err, errNoCAFile) {
					b.d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Proxy '%s': verify is enabled but no CA file specified for bind '%s' at [%s:%d].", p.Name, bd.Addr, bd.Pos.File, bd.Pos.Line)})
					continue
				}
				if err != nil {
					b.d.Alertf(bd.Pos, "'bind %s' : %v", bd.Addr, err)
					continue
				}
				if tlsconf.WithoutH2(cfg) {
					b.d.Warnf(bd.Pos, "'bind %s' : 'alpn' : HTTP/2 is not supported by goha; 'h2' is not offered and clients speak HTTP/1.1.", bd.Addr)
				}
				bd.tls = cfg
			}
		}
	}
}

func bindHasSSL(b *Bind) bool {
	for _, a := range b.Args {
		if a == "ssl" {
			return true
		}
	}
	return false
}

// buildBindTLS builds the server-side TLS configuration of a bind line.
func buildBindTLS(g *Global, b *Bind) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13}
	args := append(append([]string(nil), g.SSLDefaultBindOptions...), b.Args...)
	st := g.certStore()
	sel := &bindCerts{store: st}
	disabled := map[uint16]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch a {
		case "crt":
			if err := sel.addCrt(st, g.crtPath(val())); err != nil {
				return nil, err
			}
		case "crt-list":
			path := val()
			l, err := st.LoadCrtList(g.crtPath(path), g.CrtBase, g.CABase)
			if err != nil {
				return nil, fmt.Errorf("unable to load crt-list '%s': %v", path, err)
			}
			for _, e := range l.Entries {
				if c := st.Cert(e.Cert); c != nil && !c.Empty() && c.OCSP != nil && ocspIssuer(c) == nil {
					return nil, fmt.Errorf("'crt-list' : error processing line %d in file '%s' :  %v", e.Line, g.crtPath(path), errNoOCSPIssuer(e.Cert))
				}
			}
			sel.srcs = append(sel.srcs, certSource{list: g.crtPath(path)})
		case "ssl-min-ver", "ssl-max-ver", "alpn", "verify", "ciphers", "curves", "ecdhe":
			if err := setTLSOption(c, a, val()); err != nil {
				return nil, err
			}
		case "ca-file", "ca-verify-file":
			path := val()
			if _, err := st.LoadFile(certstore.KindCA, g.caPath(path)); err != nil {
				return nil, fmt.Errorf("unable to load CA file '%s'", path)
			}
			// ca-verify-file's CAs verify clients without being named
			// to them in the certificate request.
			if a == "ca-file" {
				sel.caFile = g.caPath(path)
			} else {
				sel.caVerifyFile = g.caPath(path)
			}
		case "ca-ignore-err":
			all, set, err := tlsconf.ParseIgnoreErr(a, val())
			if err != nil {
				return nil, err
			}
			sel.ignore.IgnoreCAAll, sel.ignore.IgnoreCA = all, set
		case "crt-ignore-err":
			all, set, err := tlsconf.ParseIgnoreErr(a, val())
			if err != nil {
				return nil, err
			}
			sel.ignore.IgnoreCrtAll, sel.ignore.IgnoreCrt = all, set
		case "no-tls-tickets":
			c.SessionTicketsDisabled = true
		case "strict-sni":
			sel.strict = true
		case "crl-file":
			path := val()
			if _, err := st.LoadFile(certstore.KindCRL, g.caPath(path)); err != nil {
				return nil, fmt.Errorf("unable to load CRL file '%s'", g.caPath(path))
			}
			sel.crlFiles = append(sel.crlFiles, g.caPath(path))
		case "no-tlsv10", "no-tlsv11", "no-tlsv12", "no-tlsv13":
			disabled[tlsconf.BindVersions[a[3:]]] = true
		case "force-tlsv10", "force-tlsv11", "force-tlsv12", "force-tlsv13":
			v := tlsconf.BindVersions[a[6:]]
			c.MinVersion, c.MaxVersion = v, v
		default:
			if _, ok := bindParamArgs[a]; ok {
				i++
			}
		}
	}
	// Go takes a range of versions: disabling one at either end narrows it.
	for c.MinVersion <= c.MaxVersion && disabled[c.MinVersion] {
		c.MinVersion++
	}
	for c.MaxVersion >= c.MinVersion && disabled[c.MaxVersion] {
		c.MaxVersion--
	}
	if c.MinVersion > c.MaxVersion {
		return nil, fmt.Errorf("all SSL/TLS versions are disabled")
	}
	if g.SSLDefaultBindCiphers != "" && c.CipherSuites == nil {
		if ids, err := tlsconf.CipherIDs(g.SSLDefaultBindCiphers); err == nil {
			c.CipherSuites = ids
		}
	}
	if len(sel.srcs) == 0 {
		return nil, fmt.Errorf("'ssl' : missing certificate")
	}
	if c.ClientAuth != tls.NoClientCert && sel.caFile == "" && sel.caVerifyFile == "" {
		return nil, errNoCAFile
	}
	sel.base = c
	if sel.caFile != "" {
		c.ClientCAs = st.File(certstore.KindCA, sel.caFile).Pool()
	}
	c.GetConfigForClient = sel.configFor
	sel.markUsed(fmt.Sprintf("%s:%d", b.Pos.File, b.Pos.Line))
	b.certs = sel
	return c, nil
}

// errNoCAFile is a bind that verifies clients without a CA to verify
// them against.
var errNoCAFile = errors.New("verify is enabled but no CA file specified")

// crtPath and caPath put a relative certificate or CA path under crt-base
// or ca-base, as HAProxy reads them.
func (g *Global) crtPath(p string) string { return underBase(g.CrtBase, p) }
func (g *Global) caPath(p string) string  { return underBase(g.CABase, p) }

func underBase(base, p string) string {
	if base == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, p)
}
