package stream

import (
	"crypto/tls"
	"encoding/binary"
	"net"

	"goha/core"
	"goha/core/sample"
	"goha/core/tlsconf"
)

// PROXY protocol version 2 TLVs a server's header may carry beyond those
// proxyproto.go reads (HAProxy's PP2_TYPE_* and PP2_SUBTYPE_SSL_*).
const (
	pp2TypeALPN       = 0x01
	pp2TypeSSL        = 0x20
	pp2SubSSLVersion  = 0x21
	pp2SubSSLCN       = 0x22
	pp2SubSSLCipher   = 0x23
	pp2SubSSLSigAlg   = 0x24
	pp2SubSSLKeyAlg   = 0x25
	pp2ClientSSL      = 0x01
	pp2ClientCertConn = 0x02
	pp2ClientCertSess = 0x04
)

// ppv2Fetches are the samples the SSL TLV's sub-TLVs carry, compiled once
// per process; a nil one is left out.
type ppv2Fetches struct {
	version, cipher, cn *sample.SampleExpr
}

func compilePPv2Fetches(env *sample.Env) ppv2Fetches {
	get := func(s string) *sample.SampleExpr {
		x, err := sample.CompileExpr(env, s)
		if err != nil {
			return nil
		}
		return x
	}
	return ppv2Fetches{version: get("ssl_fc_protocol"), cipher: get("ssl_fc_cipher"), cn: get("ssl_c_s_dn(CN)")}
}

// ppv2TLVs appends to b the TLVs of the version 2 PROXY header a stream's
// connection to s begins with, in HAProxy's order: CRC32C (zero here:
// appendProxyHeader fills it), ALPN when the client negotiated one,
// then as proxy-v2-options ask, AUTHORITY, UNIQUE_ID and SSL.
func (proc *Process) ppv2TLVs(b []byte, s *server, si *streamInfo, client net.Conn) []byte {
	opts := s.PPv2Opts
	if !s.SendProxyV2 {
		return b
	}
	cs := connTLSState(client)
	if opts&core.PPv2CRC32C != 0 {
		b = appendTLV(b, pp2TypeCRC32C, []byte{0, 0, 0, 0})
	}
	if cs != nil && cs.NegotiatedProtocol != "" {
		b = appendTLV(b, pp2TypeALPN, []byte(cs.NegotiatedProtocol))
	}
	if opts&core.PPv2Authority != 0 {
		if _, auth, _ := connProxyHeader(client); auth != nil {
			b = appendTLV(b, pp2TypeAuthority, auth)
		} else if cs != nil && cs.ServerName != "" {
			b = appendTLV(b, pp2TypeAuthority, []byte(cs.ServerName))
		}
	}
	if opts&core.PPv2UniqueID != 0 {
		if id, ok := si.uniqueID(proc, si.view); ok {
			b = appendTLV(b, pp2TypeUniqueID, id)
		}
	}
	if opts&core.PPv2SSL != 0 {
		b = proc.appendSSLTLV(b, opts, si, cs)
	}
	return b
}

// appendSSLTLV appends the SSL TLV: whether the client spoke TLS and
// sent a certificate, the verification result, and the sub-TLVs asked
// for.
func (proc *Process) appendSSLTLV(b []byte, opts uint16, si *streamInfo, cs *tls.ConnectionState) []byte {
	start := len(b)
	b = append(b, pp2TypeSSL, 0, 0, 0, 0, 0, 0, 0)
	if cs != nil {
		client := byte(pp2ClientSSL)
		if len(cs.PeerCertificates) > 0 {
			// Go's handshake fails on a certificate that does not
			// verify, unless verification is off: a certificate here
			// was accepted, X509_V_OK.
			client |= pp2ClientCertConn | pp2ClientCertSess
		}
		b[start+3] = client
		f := &proc.ppv2
		b = proc.appendFetchTLV(b, pp2SubSSLVersion, f.version, si)
		if opts&core.PPv2CertCN != 0 {
			b = proc.appendFetchTLV(b, pp2SubSSLCN, f.cn, si)
		}
		if len(cs.PeerCertificates) > 0 {
			crt := cs.PeerCertificates[0]
			if opts&core.PPv2CertKey != 0 {
				if v := tlsconf.KeyBits(crt); v != "" {
					b = appendTLV(b, pp2SubSSLKeyAlg, []byte(v))
				}
			}
			if opts&core.PPv2CertSig != 0 {
				if v := tlsconf.SigAlgName(crt); v != "" {
					b = appendTLV(b, pp2SubSSLSigAlg, []byte(v))
				}
			}
		}
		if opts&core.PPv2SSLCipher != 0 {
			b = proc.appendFetchTLV(b, pp2SubSSLCipher, f.cipher, si)
		}
	}
	binary.BigEndian.PutUint16(b[start+1:], uint16(len(b)-start-3))
	return b
}

func (proc *Process) appendFetchTLV(b []byte, typ byte, x *sample.SampleExpr, si *streamInfo) []byte {
	if x == nil || si.view == nil {
		return b
	}
	var smp sample.Sample
	if !x.Eval(si.view, &smp) || len(smp.B) == 0 {
		return b
	}
	return appendTLV(b, typ, smp.B)
}

func appendTLV(b []byte, typ byte, v []byte) []byte {
	b = append(b, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(len(v)))
	return append(b, v...)
}

// connTLSState is the completed handshake of a connection that is TLS.
func connTLSState(c net.Conn) *tls.ConnectionState {
	tc := tlsConnOf(c)
	if tc == nil {
		return nil
	}
	cs := tc.ConnectionState()
	if !cs.HandshakeComplete {
		return nil
	}
	return &cs
}

// connProxyHeader is what a client connection's PROXY header said.
func connProxyHeader(c net.Conn) (rcvd bool, authority, uniqueID []byte) {
	for ok := true; ok; c, ok = innerConn(c) {
		if pc, isPC := c.(*proxyConn); isPC {
			return true, pc.authority, pc.uniqueID
		}
	}
	return false, nil, nil
}
