package sample

import (
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strings"
	"time"

	"goha/core/tlsconf"
)

// Fetches of the client connection's TLS layer (HAProxy's section 7.3.4),
// read from what crypto/tls tells of the handshake.

// TLSInfo is implemented by a Stream whose client connection may be TLS.
type TLSInfo interface {
	// TLSState is the completed handshake's state; nil when the client
	// connection is not TLS.
	TLSState() *tls.ConnectionState
}

func init() {
	RegisterFetches(
		Fetch{Name: "ssl_fc", Out: TBool, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool {
			s.setBool(tlsState(r) != nil)
			return true
		}},
		tlsFetch("ssl_fc_sni", TStr, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			if cs.ServerName == "" {
				return false
			}
			s.setStr(constBytes(r, cs.ServerName))
			return true
		}),
		tlsFetch("ssl_fc_has_sni", TBool, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			s.setBool(cs.ServerName != "")
			return true
		}),
		tlsFetch("ssl_fc_protocol", TStr, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			name := versionName(cs.Version)
			if name == "" {
				return false
			}
			s.setStr(constBytes(r, name))
			return true
		}),
		tlsFetch("ssl_fc_cipher", TStr, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			s.setStr(constBytes(r, cipherName(cs.CipherSuite)))
			return true
		}),
		tlsFetch("ssl_fc_alg_keysize", TSint, cipherBits),
		tlsFetch("ssl_fc_use_keysize", TSint, cipherBits),
		tlsFetch("ssl_fc_alpn", TStr, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			if cs.NegotiatedProtocol == "" {
				return false
			}
			s.setStr(constBytes(r, cs.NegotiatedProtocol))
			return true
		}),
		tlsFetch("ssl_fc_is_resumed", TBool, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			s.setBool(cs.DidResume)
			return true
		}),
		tlsFetch("ssl_fc_has_crt", TBool, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			s.setBool(len(cs.PeerCertificates) > 0)
			return true
		}),
		tlsFetch("ssl_c_used", TBool, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			s.setBool(len(cs.PeerCertificates) > 0)
			return true
		}),
		tlsFetch("ssl_c_verify", TSint, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			if cv, ok := r.Stream.(ClientVerifyInfo); ok {
				v, _, _, _ := cv.ClientVerify()
				s.setInt(int64(v))
				return true
			}
			// A certificate that was presented but not verified has an
			// OpenSSL error code crypto/tls does not give.
			if len(cs.PeerCertificates) > 0 && len(cs.VerifiedChains) == 0 {
				return false
			}
			s.setInt(0)
			return true
		}),
		// goha accepts no early data and negotiates no NPN.
		tlsFetch("ssl_fc_has_early", TBool, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			s.setBool(false)
			return true
		}),
		tlsFetch("ssl_fc_npn", TStr, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool { return false }),
		backFetch("ssl_bc_npn", TStr, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool { return false }),
		// The first Finished message of the handshake (RFC 5929's
		// tls-unique), as HAProxy picks it on the server side; Go keeps
		// none for TLS 1.3.
		tlsFetch("ssl_fc_unique_id", TBin, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			if len(cs.TLSUnique) == 0 {
				return false
			}
			s.T, s.B = TBin, cs.TLSUnique
			return true
		}),
		// HAProxy's client side gives the server's Finished, which Go
		// does not keep.
		unsupportedFetch("ssl_bc_unique_id", TBin),
		// A stream's connection finished its handshake: OpenSSL's last
		// error is none.
		tlsFetch("ssl_fc_err", TSint, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			s.setInt(0)
			return true
		}),
		backFetch("ssl_bc_err", TSint, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			s.setInt(0)
			return true
		}),
		verifyFetch("ssl_c_err", func(_, e, _, _ int) int { return e }),
		verifyFetch("ssl_c_ca_err", func(_, _, e, _ int) int { return e }),
		verifyFetch("ssl_c_ca_err_depth", func(_, _, _, d int) int { return d }),
		// Go's ConnectionState has neither the session id nor the hello
		// randoms.
		unsupportedFetch("ssl_fc_session_id", TBin),
		unsupportedFetch("ssl_fc_client_random", TBin),
		unsupportedFetch("ssl_fc_server_random", TBin),
		unsupportedFetch("ssl_fc_session_key", TBin),
		unsupportedFetch("ssl_bc_session_id", TBin),
		unsupportedFetch("ssl_bc_client_random", TBin),
		unsupportedFetch("ssl_bc_server_random", TBin),
		unsupportedFetch("ssl_bc_session_key", TBin),
		Fetch{Name: "ssl_bc", Out: TBool, Need: NeedServerConn, Fn: func(r *Request, a []Arg, s *Sample) bool {
			s.setBool(backTLSState(r) != nil)
			return true
		}},
		backFetch("ssl_bc_protocol", TStr, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			name := versionName(cs.Version)
			if name == "" {
				return false
			}
			s.setStr(constBytes(r, name))
			return true
		}),
		backFetch("ssl_bc_cipher", TStr, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			s.setStr(constBytes(r, cipherName(cs.CipherSuite)))
			return true
		}),
		backFetch("ssl_bc_alg_keysize", TSint, cipherBits),
		backFetch("ssl_bc_use_keysize", TSint, cipherBits),
		backFetch("ssl_bc_alpn", TStr, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			if cs.NegotiatedProtocol == "" {
				return false
			}
			s.setStr(constBytes(r, cs.NegotiatedProtocol))
			return true
		}),
		backFetch("ssl_bc_is_resumed", TBool, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
			s.setBool(cs.DidResume)
			return true
		}),
	)
	certFetches("ssl_c_", NeedL4, clientCerts)
	certFetches("ssl_f_", NeedL4, frontCerts)
	certFetches("ssl_s_", NeedServerConn, serverCerts)
}

// ClientVerifyInfo is implemented by a Stream whose TLS client connection
// verifies client certificates (a bind's verify with its ca-file).
type ClientVerifyInfo interface {
	// ClientVerify is OpenSSL's view of the client's chain: the last
	// X509_V_ERR met, the first at depth 0, the first above it and its
	// depth; all 0 when the chain verified or none was sent.
	ClientVerify() (verify, crtErr, caErr, caDepth int)
}

// FrontCertInfo is implemented by a Stream whose client connection is
// TLS: the certificate the frontend presented.
type FrontCertInfo interface {
	FrontCertificate() *x509.Certificate
}

// BackTLSInfo is implemented by a Stream whose server connection may be
// TLS.
type BackTLSInfo interface {
	// BackendTLSState is the server connection's completed handshake;
	// nil when there is none or it is not TLS.
	BackendTLSState() *tls.ConnectionState
}

func backTLSState(r *Request) *tls.ConnectionState {
	if bi, ok := r.Stream.(BackTLSInfo); ok {
		return bi.BackendTLSState()
	}
	return nil
}

func backFetch(name string, out Type, fn func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool) Fetch {
	return Fetch{Name: name, Out: out, Need: NeedServerConn, Fn: func(r *Request, a []Arg, s *Sample) bool {
		cs := backTLSState(r)
		if cs == nil {
			return false
		}
		return fn(r, cs, a, s)
	}}
}

func verifyFetch(name string, pick func(v, e, ce, cd int) int) Fetch {
	return tlsFetch(name, TSint, func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
		n := 0
		if cv, ok := r.Stream.(ClientVerifyInfo); ok {
			n = pick(cv.ClientVerify())
		}
		s.setInt(int64(n))
		return true
	})
}

// unsupportedFetch is a fetch HAProxy has that goha cannot serve: a
// configuration using it is refused rather than given empty values.
func unsupportedFetch(name string, out Type) Fetch {
	return Fetch{Name: name, Out: out, Need: NeedL4, Max: -1,
		Check: func(env *Env, a []Arg) error {
			return fmt.Errorf("not supported by goha (Go's TLS stack does not expose it)")
		},
		Fn: func(r *Request, a []Arg, s *Sample) bool { return false }}
}

func clientCerts(r *Request) []*x509.Certificate {
	if cs := tlsState(r); cs != nil {
		return cs.PeerCertificates
	}
	return nil
}

func frontCerts(r *Request) []*x509.Certificate {
	if tlsState(r) == nil {
		return nil
	}
	if fi, ok := r.Stream.(FrontCertInfo); ok {
		if c := fi.FrontCertificate(); c != nil {
			return []*x509.Certificate{c}
		}
	}
	return nil
}

func serverCerts(r *Request) []*x509.Certificate {
	if cs := backTLSState(r); cs != nil {
		return cs.PeerCertificates
	}
	return nil
}

// certFetches registers the fetches of one certificate (prefix ssl_c_ the
// client's, ssl_f_ the frontend's, ssl_s_ the server's), read from its
// chain, leaf first.
func certFetches(prefix string, need Need, chain func(r *Request) []*x509.Certificate) {
	cf := func(name string, out Type, fn func(r *Request, c *x509.Certificate, a []Arg, s *Sample) bool) Fetch {
		return Fetch{Name: prefix + name, Out: out, Need: need, Fn: func(r *Request, a []Arg, s *Sample) bool {
			ch := chain(r)
			if len(ch) == 0 {
				return false
			}
			return fn(r, ch[0], a, s)
		}}
	}
	fs := []Fetch{
		cf("der", TBin, func(r *Request, c *x509.Certificate, a []Arg, s *Sample) bool {
			s.T, s.B = TBin, c.Raw
			return true
		}),
		cf("sha1", TBin, func(r *Request, c *x509.Certificate, a []Arg, s *Sample) bool {
			sum := sha1.Sum(c.Raw)
			s.T, s.B = TBin, append(r.alloc(len(sum)), sum[:]...)
			return true
		}),
		cf("serial", TBin, func(r *Request, c *x509.Certificate, a []Arg, s *Sample) bool {
			s.T, s.B = TBin, append(r.alloc(32), c.SerialNumber.Bytes()...)
			return true
		}),
		cf("version", TSint, func(r *Request, c *x509.Certificate, a []Arg, s *Sample) bool {
			s.setInt(int64(c.Version))
			return true
		}),
		cf("notbefore", TStr, func(r *Request, c *x509.Certificate, a []Arg, s *Sample) bool {
			s.setStr(appendASN1Time(r.alloc(16), c.NotBefore))
			return true
		}),
		cf("notafter", TStr, func(r *Request, c *x509.Certificate, a []Arg, s *Sample) bool {
			s.setStr(appendASN1Time(r.alloc(16), c.NotAfter))
			return true
		}),
		cf("sig_alg", TStr, func(r *Request, c *x509.Certificate, a []Arg, s *Sample) bool {
			n := tlsconf.SigAlgName(c)
			if n == "" {
				return false
			}
			s.setStr(constBytes(r, n))
			return true
		}),
		cf("key_alg", TStr, func(r *Request, c *x509.Certificate, a []Arg, s *Sample) bool {
			n := keyAlgName(c)
			if n == "" {
				return false
			}
			s.setStr(constBytes(r, n))
			return true
		}),
		dnFetch(cf, "s_dn", func(c *x509.Certificate) []byte { return c.RawSubject }),
		dnFetch(cf, "i_dn", func(c *x509.Certificate) []byte { return c.RawIssuer }),
	}
	if prefix != "ssl_f_" {
		fs = append(fs, Fetch{Name: prefix + "chain_der", Out: TBin, Need: need, Fn: func(r *Request, a []Arg, s *Sample) bool {
			ch := chain(r)
			if prefix == "ssl_c_" && len(ch) > 0 {
				// OpenSSL's peer chain on the server side lacks the
				// client's own certificate.
				ch = ch[1:]
			}
			if len(ch) == 0 {
				return false
			}
			b := r.alloc(0)
			for _, c := range ch {
				b = append(b, c.Raw...)
			}
			s.T, s.B = TBin, b
			return true
		}})
	}
	RegisterFetches(fs...)
}

// keyAlgName is OpenSSL's short name of a certificate's public key
// algorithm.
func keyAlgName(c *x509.Certificate) string {
	switch c.PublicKeyAlgorithm {
	case x509.RSA:
		return "rsaEncryption"
	case x509.ECDSA:
		return "id-ecPublicKey"
	case x509.DSA:
		return "DSA"
	case x509.Ed25519:
		return "ED25519"
	}
	return ""
}

func tlsState(r *Request) *tls.ConnectionState {
	ti, ok := r.Stream.(TLSInfo)
	if !ok {
		return nil
	}
	return ti.TLSState()
}

func tlsFetch(name string, out Type, fn func(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool) Fetch {
	return Fetch{Name: name, Out: out, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool {
		cs := tlsState(r)
		if cs == nil {
			return false
		}
		return fn(r, cs, a, s)
	}}
}

// versionName is OpenSSL's name of a protocol version.
func versionName(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "TLSv1.3"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS10:
		return "TLSv1"
	}
	return ""
}

// cipherName is OpenSSL's name of a suite: TLS 1.3 suites keep their
// IANA names there.
func cipherName(id uint16) string {
	iana := tls.CipherSuiteName(id)
	switch id {
	case tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256:
		return iana
	}
	return tlsconf.OpenSSLName(iana)
}

func cipherBits(r *Request, cs *tls.ConnectionState, a []Arg, s *Sample) bool {
	n := tls.CipherSuiteName(cs.CipherSuite)
	switch {
	case strings.Contains(n, "AES_128"):
		s.setInt(128)
	case strings.Contains(n, "AES_256"), strings.Contains(n, "CHACHA20"):
		s.setInt(256)
	case strings.Contains(n, "3DES"):
		s.setInt(168)
	case strings.Contains(n, "RC4"):
		s.setInt(128)
	default:
		return false
	}
	return true
}

// appendASN1Time writes t as HAProxy shows a certificate's date:
// YYMMDDhhmmssZ, a GeneralizedTime's century (dates from 2050) left out.
func appendASN1Time(b []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(b, "060102150405Z")
}

// dnArgs reads [<entry>[,<occ>[,<format>]]].
func dnArgs(env *Env, a []Arg) error {
	if len(a) > 1 {
		n, ok := parseSint([]byte(a[1].S))
		if !ok {
			return fmt.Errorf("failed to parse '%s' as type 'integer' at position 2", a[1].S)
		}
		a[1].I = n
	}
	if len(a) > 2 && a[2].S != "rfc2253" && a[2].S != "" {
		return fmt.Errorf("only rfc2253 or a blank value are currently supported as the format argument.")
	}
	return nil
}

// dnFetch is a distinguished name: whole, as OpenSSL's one-line form
// ("/C=FR/O=Org/CN=name") or as RFC 2253 ("CN=name,O=Org,C=FR"), or the
// value of one of its entries.
func dnFetch(cf func(string, Type, func(*Request, *x509.Certificate, []Arg, *Sample) bool) Fetch, name string, raw func(c *x509.Certificate) []byte) Fetch {
	f := cf(name, TStr, func(r *Request, c *x509.Certificate, a []Arg, s *Sample) bool {
		atvs, ok := tlsconf.ParseDN(raw(c))
		if !ok {
			return false
		}
		entry := ""
		if len(a) > 0 {
			entry = a[0].S
		}
		if entry != "" {
			occ := int64(1)
			if len(a) > 1 && a[1].I != 0 {
				occ = a[1].I
			}
			var match []int
			for i := range atvs {
				if atvs[i].Short == entry {
					match = append(match, i)
				}
			}
			if occ < 0 {
				occ = int64(len(match)) + occ + 1
			}
			if occ < 1 || occ > int64(len(match)) {
				return false
			}
			s.setStr(constBytes(r, atvs[match[occ-1]].Value))
			return true
		}
		b := r.alloc(len(raw(c)))
		if len(a) > 2 && a[2].S == "rfc2253" {
			for i := len(atvs) - 1; i >= 0; i-- {
				if i != len(atvs)-1 {
					if atvs[i+1].SameSet {
						b = append(b, '+')
					} else {
						b = append(b, ',')
					}
				}
				b = append(b, atvs[i].Short...)
				b = append(b, '=')
				b = appendRFC2253Value(b, atvs[i].Value)
			}
		} else {
			// OpenSSL's one-line form separates every entry with '/',
			// multi-valued RDNs included.
			for i := range atvs {
				b = append(b, '/')
				b = append(b, atvs[i].Short...)
				b = append(b, '=')
				b = append(b, atvs[i].Value...)
			}
		}
		s.setStr(b)
		return true
	})
	f.Max = 3
	f.Check = dnArgs
	return f
}

func appendRFC2253Value(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == ',' || c == '+' || c == '"' || c == '\\' || c == '<' || c == '>' || c == ';',
			(c == '#' || c == ' ') && i == 0,
			c == ' ' && i == len(v)-1:
			b = append(b, '\\', c)
		default:
			b = append(b, c)
		}
	}
	return b
}
