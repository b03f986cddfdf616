// Package certstore holds the certificates, CA files, CRL files and
// crt-lists a process loaded, by path, as HAProxy's ckch store does, with
// the one pending transaction per kind that the runtime commands build and
// commit. Users read the committed entries at every handshake, so a commit
// is seen by the next new connection.
package certstore

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Cert is one ckch entry: a certificate with its chain and key, and the
// sibling files HAProxy loads by default. An entry is never changed once
// in the store; a commit replaces it.
type Cert struct {
	Path   string
	Certs  []*x509.Certificate // leaf first, then the chain
	Key    crypto.PrivateKey
	Issuer *x509.Certificate // from <path>.issuer
	OCSP   []byte            // from <path>.ocsp
	tls    *tls.Certificate  // nil until Certs and Key are both set
}

// Empty says whether the entry holds no certificate (`new ssl cert`).
func (c *Cert) Empty() bool { return len(c.Certs) == 0 }

// TLS is the entry as crypto/tls serves it; nil for an empty entry.
func (c *Cert) TLS() *tls.Certificate { return c.tls }

// Names are the names the leaf is indexed under for SNI: its DNS SANs
// and its CN, as HAProxy indexes both.
func (c *Cert) Names() []string {
	if c.Empty() {
		return nil
	}
	l := c.Certs[0]
	names := append([]string(nil), l.DNSNames...)
	if l.Subject.CommonName != "" {
		names = append(names, l.Subject.CommonName)
	}
	return names
}

func (c *Cert) clone() *Cert {
	n := *c
	n.Certs = append([]*x509.Certificate(nil), c.Certs...)
	n.tls = nil
	return &n
}

// finish checks that the key belongs to the leaf and builds the
// tls.Certificate.
func (c *Cert) finish() error {
	if c.Empty() || c.Key == nil {
		return ErrIncomplete
	}
	if !keyMatches(c.Certs[0], c.Key) {
		return ErrKeyMismatch
	}
	t := &tls.Certificate{PrivateKey: c.Key, Leaf: c.Certs[0]}
	for _, x := range c.Certs {
		t.Certificate = append(t.Certificate, x.Raw)
	}
	if c.OCSP != nil && validOCSP(c.OCSP, time.Now()) {
		t.OCSPStaple = c.OCSP
	}
	c.tls = t
	return nil
}

// Errors a load or a commit reports; the runtime turns them into
// HAProxy's words.
var (
	ErrNoCert      = errors.New("no certificate")
	ErrNoKey       = errors.New("no private key")
	ErrIncomplete  = errors.New("certificate or key missing")
	ErrKeyMismatch = errors.New("private key does not match the certificate")
	ErrBadPEM      = errors.New("invalid PEM payload")
	ErrBadOCSP     = errors.New("OCSP response not in base64")
)

func keyMatches(leaf *x509.Certificate, key crypto.PrivateKey) bool {
	type pub interface{ Public() crypto.PublicKey }
	k, ok := key.(pub)
	if !ok {
		return false
	}
	type eq interface{ Equal(crypto.PublicKey) bool }
	lp, ok := leaf.PublicKey.(eq)
	return ok && lp.Equal(k.Public())
}

// ParsePEM reads the certificates and the private key of a PEM text.
func ParsePEM(data []byte) (certs []*x509.Certificate, key crypto.PrivateKey, err error) {
	rest := data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch {
		case b.Type == "CERTIFICATE" || b.Type == "TRUSTED CERTIFICATE":
			c, e := x509.ParseCertificate(b.Bytes)
			if e != nil {
				return nil, nil, ErrBadPEM
			}
			certs = append(certs, c)
		case strings.HasSuffix(b.Type, "PRIVATE KEY"):
			if key != nil {
				continue
			}
			k, e := parseKey(b.Bytes)
			if e != nil {
				return nil, nil, ErrBadPEM
			}
			key = k
		}
	}
	return certs, key, nil
}

func parseKey(der []byte) (crypto.PrivateKey, error) {
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		switch k.(type) {
		case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
			return k, nil
		}
		return nil, errors.New("unsupported key type")
	}
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	return x509.ParseECPrivateKey(der)
}

// Ext is the kind of file a `set ssl cert` name designates by its
// extension.
type Ext int

const (
	ExtPEM Ext = iota
	ExtCrt
	ExtKey
	ExtOCSP
	ExtIssuer
	ExtSCTL
)

// SplitExt takes a known extension off a path, as HAProxy does to find
// which part of an entry a payload replaces.
func SplitExt(path string) (string, Ext) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return path, ExtPEM
	}
	switch path[i+1:] {
	case "crt":
		return path[:i], ExtCrt
	case "key":
		return path[:i], ExtKey
	case "ocsp":
		return path[:i], ExtOCSP
	case "issuer":
		return path[:i], ExtIssuer
	case "sctl":
		return path[:i], ExtSCTL
	}
	return path, ExtPEM
}

// LoadCertFile reads a certificate file and its siblings, as HAProxy's
// default ssl-load-extra-files (all) does: the key from <path>.key when
// the file has none, with delExt also from the file's name without its
// extension plus .key; <path>.issuer and <path>.ocsp when present.
func LoadCertFile(path string, delExt bool, skip Extra) (*Cert, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	certs, key, err := ParsePEM(data)
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		return nil, ErrNoCert
	}
	c := &Cert{Path: path, Certs: certs, Key: key}
	base := path
	if delExt {
		if i := strings.LastIndexByte(path, '.'); i > strings.LastIndexByte(path, '/') {
			base = path[:i]
		}
	}
	if c.Key == nil && skip&ExtraKey == 0 {
		for _, kp := range []string{path + ".key", base + ".key"} {
			if kd, err := os.ReadFile(kp); err == nil {
				if _, k, err := ParsePEM(kd); err == nil && k != nil {
					c.Key = k
					break
				}
			}
		}
	}
	if c.Key == nil {
		return nil, ErrNoKey
	}
	if d, err := os.ReadFile(base + ".issuer"); err == nil && skip&ExtraIssuer == 0 {
		if is, _, err := ParsePEM(d); err == nil && len(is) > 0 {
			c.Issuer = is[0]
		}
	}
	if d, err := os.ReadFile(base + ".ocsp"); err == nil && skip&ExtraOCSP == 0 {
		c.OCSP = d
	}
	if err := c.finish(); err != nil {
		return nil, err
	}
	return c, nil
}

// CAFile is a CA file or a CRL file: its certificates or revocation
// lists, as read from the file or set at run time. Like a Cert, it is not
// changed once in the store.
type CAFile struct {
	Path  string
	Certs []*x509.Certificate
	CRLs  []*x509.RevocationList
	pool  *x509.CertPool // Certs as a pool, built with them
}

func newCAFile(path string) *CAFile {
	return &CAFile{Path: path, pool: x509.NewCertPool()}
}

// Pool is the file's certificates as a pool.
func (f *CAFile) Pool() *x509.CertPool { return f.pool }

// ParseCAs reads the certificates of a PEM text; none is an error.
func ParseCAs(data []byte) ([]*x509.Certificate, error) {
	certs, _, err := ParsePEM(data)
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		return nil, ErrNoCert
	}
	return certs, nil
}

// ParseCRLs reads the revocation lists of a PEM (or DER) text.
func ParseCRLs(data []byte) ([]*x509.RevocationList, error) {
	var out []*x509.RevocationList
	rest := data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "X509 CRL" {
			continue
		}
		l, err := parseCRL(b.Bytes)
		if err != nil {
			return nil, ErrBadPEM
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		if l, err := parseCRL(bytes.TrimSpace(data)); err == nil {
			return []*x509.RevocationList{l}, nil
		}
		return nil, ErrBadPEM
	}
	return out, nil
}

// Kind tells the CA store from the CRL store.
type Kind int

const (
	KindCA Kind = iota
	KindCRL
)

// Store is every entry a process uses, by path.
type Store struct {
	mu     sync.RWMutex // guards the maps, the transactions and the use counts
	certs  map[string]*Cert
	files  [2]map[string]*CAFile // by Kind
	lists  map[string]*CrtList
	uses   map[string]int // per cert, CA or CRL path: binds and servers using it
	certTx *Cert
	fileTx [2]*CAFile
	gen    atomic.Uint64 // bumped by every change users must see
	// ocsp is HAProxy's OCSP response tree: DER responses by the DER
	// CertID they answer for (see ocsp.go).
	ocsp map[string][]byte
	// Skip are the files beside a certificate that ssl-load-extra-files
	// leaves out; none by default (HAProxy's "all").
	Skip Extra
	// DelExt is ssl-load-extra-del-ext: a file's key may be named after
	// the file without its extension.
	DelExt bool
}

// New returns an empty store.
func New() *Store {
	return &Store{certs: map[string]*Cert{}, files: [2]map[string]*CAFile{{}, {}},
		lists: map[string]*CrtList{}, uses: map[string]int{}}
}

// Gen changes whenever a committed entry or a crt-list changes; users
// cache what they derive from the store under it.
func (s *Store) Gen() uint64 { return s.gen.Load() }

// Cert returns the committed entry of a path.
func (s *Store) Cert(path string) *Cert {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.certs[path]
}

// LoadCert returns the entry of a path, reading the file the first time.
func (s *Store) LoadCert(path string) (*Cert, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.certs[path]; c != nil {
		return c, nil
	}
	c, err := LoadCertFile(path, s.DelExt, s.Skip)
	if err != nil {
		return nil, err
	}
	s.certs[path] = c
	s.indexOCSP(c)
	return c, nil
}

// Use records that a bind line or a server uses a path.
func (s *Store) Use(path string) {
	s.mu.Lock()
	s.uses[path]++
	s.mu.Unlock()
}

// Release undoes a Use.
func (s *Store) Release(path string) {
	s.mu.Lock()
	if s.uses[path] > 0 {
		s.uses[path]--
	}
	s.mu.Unlock()
}

// Used says whether anything uses a path.
func (s *Store) Used(path string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.uses[path] > 0
}

// Uses is how many instances use a path.
func (s *Store) Uses(path string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.uses[path]
}

// CertPaths lists the entries' paths, sorted.
func (s *Store) CertPaths() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return sortedKeys(s.certs)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// NewCert adds an empty entry; false when the path exists.
func (s *Store) NewCert(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.certs[path] != nil {
		return false
	}
	s.certs[path] = &Cert{Path: path}
	return true
}

// Errors of the store's operations.
var (
	ErrNotFound    = errors.New("not found")
	ErrInUse       = errors.New("in use")
	ErrNoTx        = errors.New("no ongoing transaction")
	ErrOtherTx     = errors.New("another transaction is ongoing")
	ErrUnknownPath = errors.New("not referenced by the configuration")
	ErrOtherKind   = errors.New("a CA file, not a CRL file")
)

// DelCert removes an unused entry.
func (s *Store) DelCert(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.certs[path] == nil {
		return ErrNotFound
	}
	if s.uses[path] > 0 || (s.certTx != nil && s.certTx.Path == path) {
		return ErrInUse
	}
	delete(s.certs, path)
	return nil
}

// CertTx is the pending certificate transaction, or nil.
func (s *Store) CertTx() *Cert {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.certTx
}

// SetCert applies a payload to the transaction of the entry a name
// designates (its extension says which part), starting the transaction
// from the committed entry when there is none. It returns the
// transaction's path and whether this call created it.
func (s *Store) SetCert(name string, payload []byte) (path string, created bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	base, ext := SplitExt(name)
	var old *Cert
	if s.certTx != nil {
		switch {
		case s.certTx.Path == base:
		case ext != ExtPEM && s.DelExt && s.certTx.Path == base+".crt":
		default:
			return s.certTx.Path, false, ErrOtherTx
		}
		old = s.certTx
	} else {
		old = s.certs[base]
		if old == nil && ext != ExtPEM && s.DelExt {
			old = s.certs[base+".crt"]
		}
		if old == nil {
			return "", false, ErrUnknownPath
		}
	}
	n := old.clone()
	switch ext {
	case ExtPEM, ExtCrt:
		certs, key, err := ParsePEM(payload)
		if err != nil || len(certs) == 0 {
			return n.Path, false, ErrNoCert
		}
		n.Certs, n.Key = certs, key
	case ExtKey:
		_, key, err := ParsePEM(payload)
		if err != nil || key == nil {
			return n.Path, false, ErrNoKey
		}
		n.Key = key
	case ExtIssuer:
		certs, _, err := ParsePEM(payload)
		if err != nil || len(certs) == 0 {
			return n.Path, false, ErrNoCert
		}
		n.Issuer = certs[0]
	case ExtOCSP:
		// A payload gives the response in base64, line breaks allowed.
		b64 := strings.NewReplacer("\r", "", "\n", "").Replace(string(payload))
		der, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return n.Path, false, ErrBadOCSP
		}
		n.OCSP = der
	case ExtSCTL:
		// Go's TLS has no per-certificate SCT list to set; kept as is.
	}
	created = s.certTx == nil
	s.certTx = n
	return n.Path, created, nil
}

// CommitCert makes the transaction of path the committed entry. It
// returns the number of instances that now use it.
func (s *Store) CommitCert(path string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.certTx == nil {
		return 0, ErrNoTx
	}
	if s.certTx.Path != path {
		return 0, ErrOtherTx
	}
	n := s.certTx
	if n.Empty() || n.Key == nil {
		return 0, ErrIncomplete
	}
	if err := n.finish(); err != nil {
		return 0, err
	}
	s.certs[path] = n
	s.certTx = nil
	s.indexOCSP(n)
	s.gen.Add(1)
	return s.uses[path], nil
}

// AbortCert drops the transaction of path.
func (s *Store) AbortCert(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.certTx == nil {
		return ErrNoTx
	}
	if s.certTx.Path != path {
		return ErrOtherTx
	}
	s.certTx = nil
	return nil
}

// File returns the committed CA or CRL file of a path.
func (s *Store) File(k Kind, path string) *CAFile {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.files[k][path]
}

// LoadFile returns the CA or CRL file of a path, reading it the first
// time.
func (s *Store) LoadFile(k Kind, path string) (*CAFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.files[k][path]; f != nil {
		return f, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := newCAFile(path)
	if err := f.fill(k, data); err != nil {
		return nil, err
	}
	s.files[k][path] = f
	return f, nil
}

func (f *CAFile) fill(k Kind, data []byte) error {
	var err error
	if k == KindCA {
		f.Certs, err = ParseCAs(data)
	} else {
		f.CRLs, err = ParseCRLs(data)
	}
	f.pool = x509.NewCertPool()
	for _, c := range f.Certs {
		f.pool.AddCert(c)
	}
	return err
}

// FilePaths lists the CA or CRL files' paths, sorted.
func (s *Store) FilePaths(k Kind) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return sortedKeys(s.files[k])
}

// NewFile adds an empty CA or CRL file; false when the path exists, as
// either kind (HAProxy keeps both in one tree).
func (s *Store) NewFile(k Kind, path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files[KindCA][path] != nil || s.files[KindCRL][path] != nil {
		return false
	}
	s.files[k][path] = newCAFile(path)
	return true
}

// DelFile removes an unused CA or CRL file.
func (s *Store) DelFile(k Kind, path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k == KindCRL && s.files[KindCA][path] != nil {
		return ErrOtherKind
	}
	if s.files[k][path] == nil {
		return ErrNotFound
	}
	if s.uses[path] > 0 || (s.fileTx[k] != nil && s.fileTx[k].Path == path) {
		return ErrInUse
	}
	delete(s.files[k], path)
	return nil
}

// FileTx is the pending CA or CRL transaction, or nil.
func (s *Store) FileTx(k Kind) *CAFile {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.fileTx[k]
}

// SetFile replaces the content of a CA or CRL file in its transaction.
func (s *Store) SetFile(k Kind, path string, payload []byte) (created bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tx := s.fileTx[k]; tx != nil && tx.Path != path {
		return false, ErrOtherTx
	}
	if s.files[k][path] == nil {
		return false, ErrUnknownPath
	}
	n := newCAFile(path)
	if err := n.fill(k, payload); err != nil {
		return false, err
	}
	created = s.fileTx[k] == nil
	s.fileTx[k] = n
	return created, nil
}

// CommitFile makes the transaction of path the committed file.
func (s *Store) CommitFile(k Kind, path string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx := s.fileTx[k]
	if tx == nil {
		return 0, ErrNoTx
	}
	if tx.Path != path {
		return 0, ErrOtherTx
	}
	s.files[k][path] = tx
	s.fileTx[k] = nil
	s.gen.Add(1)
	return s.uses[path], nil
}

// AbortFile drops the CA or CRL transaction of path.
func (s *Store) AbortFile(k Kind, path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx := s.fileTx[k]
	if tx == nil {
		return ErrNoTx
	}
	if tx.Path != path {
		return ErrOtherTx
	}
	s.fileTx[k] = nil
	return nil
}

// Abs is how HAProxy names a relative path given on a bind line: as is.
// It is here so callers join bases the same way everywhere.
func Abs(base, p string) string {
	if base == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, p)
}

// String is for diagnostics.
func (c *Cert) String() string { return fmt.Sprintf("cert %s", c.Path) }

// Extra is a set of the files HAProxy may read beside a certificate
// (ssl-load-extra-files).
type Extra uint8

const (
	ExtraKey    Extra = 1 << iota // <crt>.key
	ExtraIssuer                   // <crt>.issuer
	ExtraOCSP                     // <crt>.ocsp
	ExtraSCTL                     // <crt>.sctl, which goha never reads
	ExtraBundle                   // <crt>.rsa, .ecdsa..., which goha never reads
	ExtraAll    = ExtraKey | ExtraIssuer | ExtraOCSP | ExtraSCTL | ExtraBundle
)
