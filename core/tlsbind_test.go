package core

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"goha/core/certstore"
)

func selfSigned(t *testing.T, name string, serial int64) []byte {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		DNSNames: []string{name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalPKCS8PrivateKey(key)
	return append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb})...)
}

// TestBindCertsFollowCommits: handshakes choosing a bind's certificate
// while commits replace it see either the old or the new certificate,
// never a mix or nothing, and the new one once the commit returned. Run
// with -race.
func TestBindCertsFollowCommits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.pem")
	os.WriteFile(path, selfSigned(t, "a.test", 1), 0o600)
	st := certstore.New()
	b := &bindCerts{store: st, base: &tls.Config{}}
	if err := b.addCrt(st, path); err != nil {
		t.Fatal(err)
	}
	serial := func() int64 {
		cfg, err := b.configFor(&tls.ClientHelloInfo{})
		if err != nil {
			t.Error(err)
			return 0
		}
		c, err := cfg.GetCertificate(&tls.ClientHelloInfo{ServerName: "a.test"})
		if err != nil {
			t.Error(err)
			return 0
		}
		return c.Leaf.SerialNumber.Int64()
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if s := serial(); s < 1 || s > 20 {
					t.Errorf("serial %d", s)
				}
			}
		}()
	}
	for n := int64(2); n <= 20; n++ {
		if _, _, err := st.SetCert(path, selfSigned(t, "a.test", n)); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CommitCert(path); err != nil {
			t.Fatal(err)
		}
		if s := serial(); s != n {
			t.Errorf("after commit %d: serial %d", n, s)
		}
	}
	close(stop)
	wg.Wait()
}

// TestCompleteChains: a chain Go stops at an intermediate of the CA file
// is completed up to the file's self-signed root, as OpenSSL builds it.
func TestCompleteChains(t *testing.T) {
	mk := func(name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, ca bool) (*x509.Certificate, *ecdsa.PrivateKey) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			IsCA: ca, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
		if parent == nil {
			parent, parentKey = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := x509.ParseCertificate(der)
		return c, key
	}
	root, rootKey := mk("root", nil, nil, true)
	inter, interKey := mk("inter", root, rootKey, true)
	leaf, _ := mk("leaf", inter, interKey, false)
	roots := x509.NewCertPool()
	roots.AddCert(inter)
	roots.AddCert(root)
	chains, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range completeChains(chains, []*x509.Certificate{inter, root}) {
		if len(ch) != 3 || ch[2] != root {
			t.Errorf("chain of %d certificates, want leaf, inter, root", len(ch))
		}
	}
}

// A crt with an OCSP response is refused, as by HAProxy, when its issuer
// is neither in its chain nor in its .issuer file.
func TestOCSPNeedsIssuer(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.pem")
	pemData := selfSigned(t, "a.test", 1)
	os.WriteFile(path, pemData, 0o600)
	os.WriteFile(path+".ocsp", []byte{0x30, 3, 0x0a, 1, 0}, 0o600)
	b := &bindCerts{base: &tls.Config{}}
	if err := b.addCrt(certstore.New(), path); err == nil {
		t.Error("a .ocsp without issuer was accepted")
	}
	os.WriteFile(path+".issuer", pemData, 0o600)
	if err := b.addCrt(certstore.New(), path); err != nil {
		t.Errorf("with its .issuer: %v", err)
	}
}
