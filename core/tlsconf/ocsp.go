package tlsconf

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// The parts of an OCSP response (RFC 6960) that stapling and the
// runtime's `show ssl ocsp-response` need. golang.org/x/crypto/ocsp is
// not a dependency goha takes, and it hides the raw CertID HAProxy keys
// its responses with.

// OCSP certificate statuses.
const (
	OCSPGood = iota
	OCSPRevoked
	OCSPUnknown
)

// OCSPResponse is a decoded OCSP response. Only Status is set when the
// response is not successful or not a basic response.
type OCSPResponse struct {
	Status int // responseStatus, 0 successful
	// Type is the responseBytes' type, nil without responseBytes.
	Type     asn1.ObjectIdentifier
	Basic    bool // Type is id-pkix-ocsp-basic and was decoded
	Version  int
	ByName   []byte // the responder's DER name, or nil
	ByKey    []byte // the responder's key hash, when not by name
	Produced time.Time
	Single   []OCSPSingle
	Exts     []pkix.Extension
	SigAlg   pkix.AlgorithmIdentifier
	Sig      []byte
	Certs    [][]byte // DER certificates the responder sent
}

// OCSPSingle is one SingleResponse.
type OCSPSingle struct {
	CertID     []byte // DER CertID, HAProxy's key for the response
	HashAlg    asn1.ObjectIdentifier
	NameHash   []byte
	KeyHash    []byte
	Serial     []byte // the serial's INTEGER content bytes
	CertStatus int
	RevTime    time.Time
	Reason     int // -1 when none
	This, Next time.Time
	Exts       []pkix.Extension
}

var oidOCSPBasic = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 48, 1, 1}

type ocspRespASN struct {
	Status asn1.Enumerated
	Bytes  ocspBytesASN `asn1:"explicit,tag:0,optional"`
}

type ocspBytesASN struct {
	Type     asn1.ObjectIdentifier
	Response []byte
}

type ocspBasicASN struct {
	TBS    ocspDataASN
	SigAlg pkix.AlgorithmIdentifier
	Sig    asn1.BitString
	Certs  []asn1.RawValue `asn1:"explicit,tag:0,optional"`
}

type ocspDataASN struct {
	Version   int `asn1:"optional,explicit,default:0,tag:0"`
	Responder asn1.RawValue
	Produced  time.Time `asn1:"generalized"`
	Responses []ocspSingleASN
	Exts      []pkix.Extension `asn1:"explicit,tag:1,optional"`
}

type ocspSingleASN struct {
	CertID asn1.RawValue
	Status asn1.RawValue
	This   time.Time        `asn1:"generalized"`
	Next   time.Time        `asn1:"generalized,explicit,tag:0,optional"`
	Exts   []pkix.Extension `asn1:"explicit,tag:1,optional"`
}

type certIDASN struct {
	HashAlg  pkix.AlgorithmIdentifier
	NameHash []byte
	KeyHash  []byte
	Serial   asn1.RawValue
}

type revokedASN struct {
	Time   time.Time       `asn1:"generalized"`
	Reason asn1.Enumerated `asn1:"explicit,tag:0,optional,default:-1"`
}

var errBadOCSP = errors.New("malformed OCSP response")

// ParseOCSP decodes a DER OCSP response.
func ParseOCSP(der []byte) (*OCSPResponse, error) {
	var r ocspRespASN
	if rest, err := asn1.Unmarshal(der, &r); err != nil || len(rest) != 0 {
		return nil, errBadOCSP
	}
	out := &OCSPResponse{Status: int(r.Status)}
	if len(r.Bytes.Type) == 0 {
		return out, nil
	}
	out.Type = r.Bytes.Type
	if !r.Bytes.Type.Equal(oidOCSPBasic) {
		return out, nil
	}
	var b ocspBasicASN
	if rest, err := asn1.Unmarshal(r.Bytes.Response, &b); err != nil || len(rest) != 0 {
		return nil, errBadOCSP
	}
	out.Basic = true
	out.Version = b.TBS.Version
	out.Produced = b.TBS.Produced
	out.Exts = b.TBS.Exts
	out.SigAlg = b.SigAlg
	out.Sig = b.Sig.RightAlign()
	for _, c := range b.Certs {
		out.Certs = append(out.Certs, c.FullBytes)
	}
	rid := b.TBS.Responder
	if rid.Class != asn1.ClassContextSpecific || !rid.IsCompound {
		return nil, errBadOCSP
	}
	switch rid.Tag {
	case 1:
		var name asn1.RawValue
		if rest, err := asn1.Unmarshal(rid.Bytes, &name); err != nil || len(rest) != 0 {
			return nil, errBadOCSP
		}
		out.ByName = name.FullBytes
	case 2:
		var key []byte
		if rest, err := asn1.Unmarshal(rid.Bytes, &key); err != nil || len(rest) != 0 {
			return nil, errBadOCSP
		}
		out.ByKey = key
	default:
		return nil, errBadOCSP
	}
	for _, s := range b.TBS.Responses {
		var id certIDASN
		if rest, err := asn1.Unmarshal(s.CertID.FullBytes, &id); err != nil || len(rest) != 0 {
			return nil, errBadOCSP
		}
		if id.Serial.Class != asn1.ClassUniversal || id.Serial.Tag != asn1.TagInteger || len(id.Serial.Bytes) == 0 {
			return nil, errBadOCSP
		}
		one := OCSPSingle{
			CertID: s.CertID.FullBytes, HashAlg: id.HashAlg.Algorithm, NameHash: id.NameHash,
			KeyHash: id.KeyHash, Serial: id.Serial.Bytes, This: s.This, Next: s.Next, Exts: s.Exts, Reason: -1,
		}
		if s.Status.Class != asn1.ClassContextSpecific {
			return nil, errBadOCSP
		}
		switch s.Status.Tag {
		case 0:
			one.CertStatus = OCSPGood
		case 1:
			// RevokedInfo with its SEQUENCE tag replaced by [1].
			var ri revokedASN
			if rest, err := asn1.UnmarshalWithParams(s.Status.FullBytes, &ri, "tag:1"); err != nil || len(rest) != 0 {
				return nil, errBadOCSP
			}
			one.CertStatus, one.RevTime, one.Reason = OCSPRevoked, ri.Time, int(ri.Reason)
		case 2:
			one.CertStatus = OCSPUnknown
		default:
			return nil, errBadOCSP
		}
		out.Single = append(out.Single, one)
	}
	return out, nil
}

// SerialInt is the serial of a CertID as a number.
func (s *OCSPSingle) SerialInt() *big.Int {
	n := new(big.Int).SetBytes(s.Serial)
	if len(s.Serial) > 0 && s.Serial[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(s.Serial))))
	}
	return n
}

// Check is what HAProxy requires of a response it staples: successful,
// basic, one single response whose status is known, with a next update
// not yet past.
func (r *OCSPResponse) Check(now time.Time) error {
	switch {
	case r.Status != 0:
		return errors.New("OCSP response status not successful")
	case !r.Basic:
		return errors.New("Failed to get basic response from OCSP Response")
	case len(r.Single) > 1:
		return fmt.Errorf("OCSP response ignored because contains multiple single responses (%d)", len(r.Single))
	case len(r.Single) == 0:
		return errors.New("Failed to get OCSP single response")
	case r.Single[0].CertStatus == OCSPUnknown:
		return errors.New("OCSP single response: certificate status is unknown")
	case r.Single[0].Next.IsZero():
		return errors.New("OCSP single response: missing nextupdate")
	case now.After(r.Single[0].Next.Add(5 * time.Minute)):
		return errors.New("OCSP single response: no longer valid.")
	}
	return nil
}
