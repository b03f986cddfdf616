package stream

import (
	"hash/maphash"
	"net"

	"goha/core/sample"
)

// A server connection is made for the request that opens it: the name it
// sent as SNI, the destination a port-less server took from the request,
// the PROXY header it began with. Another request may take it from the
// pool only when it would have opened the same connection; HAProxy hashes
// these parameters into the connection's key for the same reason (2.6's
// conn_hash_params). A server without any of them gives key 0, which
// costs the pool nothing.

// connKeySeed makes keys unpredictable from outside the process: a
// client choosing names or ports cannot aim at another's key.
var connKeySeed = maphash.MakeSeed()

// compileSNI compiles s's sni expression when it depends on the request.
func (proc *Process) compileSNI(s *server) error {
	if !s.DynamicSNI() {
		return nil
	}
	e, err := sample.CompileExpr(proc.env, s.SSLArgs["sni"])
	if err != nil {
		return err
	}
	s.sni = e
	return nil
}

// connKey returns the pool key of a connection to s for the stream of si
// on client connection client (with the destination its rules gave it),
// and the SNI such a connection sends.
func (proc *Process) connKey(s *server, si *streamInfo, client net.Conn) (key uint64, sni string) {
	a := s.Addr()
	mapsPort := a.Unix == "" && a.Port == 0
	if s.sni == nil && !mapsPort && !s.SendProxy && !s.SendProxyV2 {
		return 0, ""
	}
	var h maphash.Hash
	h.SetSeed(connKeySeed)
	if s.sni != nil {
		var smp sample.Sample
		if si.view != nil && s.sni.Eval(si.view, &smp) && sample.Cast(si.view, &smp, sample.TStr) {
			sni = string(smp.B)
		}
		h.WriteByte('s')
		h.WriteString(sni)
		h.WriteByte(0)
	}
	if mapsPort {
		p := clientPort(client)
		h.WriteByte('d')
		h.WriteByte(byte(p >> 8))
		h.WriteByte(byte(p))
	}
	if s.SendProxy || s.SendProxyV2 {
		var buf [128]byte
		h.WriteByte('p')
		h.Write(appendProxyHeader(buf[:0], s.SendProxyV2, si.client, si.view.Local, proc.ppv2TLVs(nil, s, si, client)))
	}
	if key = h.Sum64(); key == 0 {
		key = 1
	}
	return key, sni
}
