package certstore

import (
	"bytes"
	"errors"
	"sort"
	"time"

	"goha/core/tlsconf"
)

// HAProxy keeps the OCSP responses it staples in a tree keyed by the
// response's CertID: a certificate's `.ocsp` response enters it when the
// certificate is loaded or committed, and `set ssl ocsp-response`
// replaces the response of a key there, without changing the
// certificate entry's own `.ocsp` (which `show ssl cert <path>.ocsp`
// then no longer shows: it shows the tree's).

// Errors of SetOCSP.
var (
	ErrOCSPUnparsable = errors.New("unable to parse OCSP response")
	ErrOCSPNoMatch    = errors.New("OCSP single response: Certificate ID does not match any certificate or issuer")
)

// OCSPKey is the CertID of the first single response of a certificate's
// `.ocsp` response, or nil.
func OCSPKey(c *Cert) []byte {
	if c == nil || c.OCSP == nil {
		return nil
	}
	r, err := tlsconf.ParseOCSP(c.OCSP)
	if err != nil || len(r.Single) == 0 {
		return nil
	}
	return r.Single[0].CertID
}

// validOCSP says whether HAProxy would staple a response: one it can
// read, successful, with one single response of known status whose next
// update is not past.
func validOCSP(der []byte, now time.Time) bool {
	r, err := tlsconf.ParseOCSP(der)
	return err == nil && r.Check(now) == nil
}

// indexOCSP enters c's response in the tree when HAProxy would staple it.
// s.mu is held.
func (s *Store) indexOCSP(c *Cert) {
	if c.OCSP == nil || !validOCSP(c.OCSP, time.Now()) {
		return
	}
	r, _ := tlsconf.ParseOCSP(c.OCSP)
	if s.ocsp == nil {
		s.ocsp = map[string][]byte{}
	}
	s.ocsp[string(r.Single[0].CertID)] = c.OCSP
}

// OCSPEntry is one response of the tree.
type OCSPEntry struct {
	Key, DER []byte
}

// OCSPResponses lists the tree in the order of its keys.
func (s *Store) OCSPResponses() []OCSPEntry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]OCSPEntry, 0, len(s.ocsp))
	for k, d := range s.ocsp {
		out = append(out, OCSPEntry{Key: []byte(k), DER: d})
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Key, out[j].Key) < 0 })
	return out
}

// OCSPResponse is the tree's response for a key, or nil.
func (s *Store) OCSPResponse(key []byte) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ocsp[string(key)]
}

// SetOCSP replaces the tree's response for the CertID of der, and what
// the certificates of that CertID staple.
func (s *Store) SetOCSP(der []byte, now time.Time) error {
	r, err := tlsconf.ParseOCSP(der)
	if err != nil {
		return ErrOCSPUnparsable
	}
	if err := r.Check(now); err != nil {
		return err
	}
	key := r.Single[0].CertID
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ocsp[string(key)]; !ok {
		return ErrOCSPNoMatch
	}
	der = bytes.Clone(der)
	s.ocsp[string(key)] = der
	for p, c := range s.certs {
		if c.TLS() == nil || !bytes.Equal(OCSPKey(c), key) {
			continue
		}
		n := c.clone()
		if n.finish() != nil {
			continue
		}
		n.tls.OCSPStaple = der
		s.certs[p] = n
	}
	s.gen.Add(1)
	return nil
}
