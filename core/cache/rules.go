package cache

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"hash/crc32"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header gives a message's field values: fn is called with the value of
// each field named name (any case), in order.
type Header func(name string, fn func(value []byte))

// elements calls fn with each comma-separated element of the fields
// named name, trimmed, as HAProxy's http_find_header without full does;
// commas inside quoted strings do not split.
func (h Header) elements(name string, fn func(e []byte)) {
	h(name, func(v []byte) {
		start, quoted := 0, false
		for i := 0; i <= len(v); i++ {
			if i < len(v) {
				switch v[i] {
				case '"':
					quoted = !quoted
					continue
				case '\\':
					if quoted {
						i++
					}
					continue
				case ',':
					if quoted {
						continue
					}
				default:
					continue
				}
			}
			fn(bytes.Trim(v[start:min(i, len(v))], " \t"))
			start = i + 1
		}
	})
}

// first is the first whole value of the fields named name.
func (h Header) first(name string) ([]byte, bool) {
	var out []byte
	found := false
	h(name, func(v []byte) {
		if !found {
			out, found = bytes.Trim(v, " \t"), true
		}
	})
	return out, found
}

// Key is HAProxy's primary key: the SHA-1 of the absolute URI, or of
// "https://", the Host field and the URI for an origin-form one. ok is
// false when there is none (no Host with an origin-form URI).
func Key(uri, host []byte, hasHost, absolute bool) (k [20]byte, ok bool) {
	if len(uri) == 0 {
		return k, false
	}
	h := sha1.New()
	if !absolute {
		if !hasHost {
			return k, false
		}
		h.Write([]byte("https://"))
		h.Write(host)
	}
	h.Write(uri)
	h.Sum(k[:0])
	return k, true
}

// RequestFlags are what a request says of the cache.
type RequestFlags struct {
	// Ignore: the cache is not used for it (Authorization, Cache-Control
	// no-cache or max-age..., Pragma no-cache without Cache-Control).
	Ignore bool
	// NoStore: the response is not to be stored (Authorization,
	// no-store).
	NoStore bool
}

// CheckRequest reads the request's fields as HAProxy's
// http_check_request_for_cacheability.
func CheckRequest(h Header) RequestFlags {
	var f RequestFlags
	pragma := false
	if v, ok := h.first("pragma"); ok && strings.EqualFold(string(v), "no-cache") {
		pragma = true
	}
	if _, ok := h.first("authorization"); ok {
		f.Ignore, f.NoStore = true, true
	}
	cc := false
	h.elements("cache-control", func(e []byte) {
		cc = true
		switch {
		case hasPrefixFold(e, "max-age"), hasPrefixFold(e, "no-cache"), hasPrefixFold(e, "max-stale"), hasPrefixFold(e, "min-fresh"):
			f.Ignore = true
		case hasPrefixFold(e, "no-store"):
			f.NoStore = true
		}
	})
	if !cc && pragma {
		f.Ignore = true
	}
	return f
}

func hasPrefixFold(b []byte, p string) bool {
	return len(b) >= len(p) && strings.EqualFold(string(b[:len(p)]), p)
}

// Cacheable says whether a response may be stored, as HAProxy's
// http_check_response_for_cacheability then cache-store's test of the
// transaction's flags: it needs freshness information or a validator and
// nothing that forbids it. A request that bypassed the cache (no-cache,
// max-age...) still has its response stored, as HAProxy 2.6 does since
// its fix for that (2.6.12 here): only what set NoStore prevents it.
func Cacheable(h Header, req RequestFlags) bool {
	// The request's flags are where HAProxy's transaction flags start;
	// a "public" response sets them again.
	cacheable, cook := !req.NoStore, !req.NoStore
	if v, ok := h.first("pragma"); ok && strings.EqualFold(string(v), "no-cache") {
		return false
	}
	fresh := false
	h.elements("cache-control", func(e []byte) {
		s := string(e)
		switch {
		case strings.EqualFold(s, "public"):
			cacheable, cook = true, true
		case strings.EqualFold(s, "private"), strings.EqualFold(s, "no-cache"), strings.EqualFold(s, "no-store"),
			strings.EqualFold(s, "max-age=0"), strings.EqualFold(s, "s-maxage=0"):
			cacheable, cook = false, false
		case hasPrefixFold(e, `no-cache="set-cookie`):
			cook = false
		case hasPrefixFold(e, "s-maxage"), hasPrefixFold(e, "max-age"):
			fresh = true
		}
	})
	if !fresh {
		_, fresh = h.first("expires")
	}
	if !fresh {
		_, etag := h.first("etag")
		_, lm := h.first("last-modified")
		if !etag && !lm {
			return false
		}
	}
	return cacheable && cook
}

// MaxAge is how long a response stays in c (HAProxy's http_calc_maxage):
// s-maxage, max-age, then Expires, bounded by the cache's max-age. trueAge
// is the response's own, -1 when it gives none; ok false when a
// directive's value is not a number.
func (c *Cache) MaxAge(h Header, now int64) (eff, trueAge int64, ok bool) {
	smax, max, expires := int64(-1), int64(-1), int64(-1)
	bad := false
	h("cache-control", func(v []byte) {
		if n, found, good := Directive(v, "s-maxage"); found {
			if !good {
				bad = true
			}
			smax = n
		}
		if n, found, good := Directive(v, "max-age"); found {
			if !good {
				bad = true
			}
			max = n
		}
	})
	if bad {
		return -1, -1, false
	}
	if smax == -1 && max == -1 {
		if v, found := h.first("expires"); found {
			expires = 0
			if t, err := http.ParseTime(string(v)); err == nil && t.Unix() >= now {
				expires = t.Unix() - now
			}
		}
	}
	limit := int64(c.Config.MaxAge)
	switch {
	case smax > 0:
		return min(smax, limit), smax, true
	case max > 0:
		return min(max, limit), max, true
	case expires >= 0:
		return min(expires, limit), expires, true
	}
	return limit, -1, true
}

// Directive finds name=<number> in a Cache-Control field value, as
// HAProxy's directive_value reads it: the name must start the value or
// follow a comma and blanks, the number may be quoted. found false: no
// such directive; ok false: a value that is not a non-negative number.
func Directive(v []byte, name string) (n int64, found, ok bool) {
	for i := 0; i+len(name) <= len(v); i++ {
		if i > 0 {
			j := i - 1
			for j >= 0 && (v[j] == ' ' || v[j] == '\t') {
				j--
			}
			if j >= 0 && v[j] != ',' {
				continue
			}
		}
		if !strings.EqualFold(string(v[i:i+len(name)]), name) {
			continue
		}
		rest := v[i+len(name):]
		if len(rest) == 0 || rest[0] != '=' {
			continue
		}
		rest = rest[1:]
		if len(rest) > 0 && rest[0] == '"' {
			rest = rest[1:]
		}
		end := 0
		if end < len(rest) && (rest[end] == '-' || rest[end] == '+') {
			end++
		}
		digits := end
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		if end == digits {
			return 0, true, false
		}
		n, err := strconv.ParseInt(string(rest[:end]), 10, 64)
		if err != nil {
			n = 1<<63 - 1
			if rest[0] == '-' {
				return 0, true, false
			}
		}
		if n < 0 {
			return 0, true, false
		}
		return n, true, true
	}
	return 0, false, true
}

// ServerAge reads the response's Age field: ok false for an invalid one,
// which HAProxy does not store; 0 when there is none.
func ServerAge(h Header) (age int64, present, ok bool) {
	v, found := h.first("age")
	if !found {
		return 0, false, true
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n <= 0 {
		return 0, true, false
	}
	return min(n, MaxEntryAge), true, true
}

// LastModified is the date an If-Modified-Since is compared with: the
// Last-Modified field, else Date, else now.
func LastModified(h Header, now int64) int64 {
	for _, name := range []string{"last-modified", "date"} {
		if v, ok := h.first(name); ok {
			if t, err := http.ParseTime(string(v)); err == nil && t.Unix() != 0 {
				return t.Unix()
			}
		}
	}
	return now
}

// Vary signature bits, HAProxy 2.6's vary_header_bit.
const (
	VaryAcceptEncoding = 1 << 0
	VaryReferer        = 1 << 1
	varyAll            = VaryAcceptEncoding | VaryReferer
)

// VarySignature reads the response's Vary elements: ok false when one
// names a header HAProxy 2.6 cannot vary on.
func VarySignature(h Header) (sig uint32, ok bool) {
	ok = true
	h.elements("vary", func(e []byte) {
		switch {
		case strings.EqualFold(string(e), "accept-encoding"):
			sig |= VaryAcceptEncoding
		case strings.EqualFold(string(e), "referer"):
			sig |= VaryReferer
		default:
			ok = false
		}
	})
	return sig, ok
}

// Encoding bits of the accept-encoding part of a secondary key.
const (
	encGzip = 1 << iota
	encDeflate
	encBr
	encCompress
	encAES128GCM
	encExi
	encPack200
	encZstd
	encIdentity
	encStar
	encOther
)

var encodings = map[string]uint32{
	"gzip": encGzip, "x-gzip": encGzip, "deflate": encDeflate, "br": encBr,
	"compress": encCompress, "x-compress": encCompress, "aes128gcm": encAES128GCM,
	"exi": encExi, "pack200-gzip": encPack200, "zstd": encZstd,
	"identity": encIdentity, "*": encStar,
}

// encodingOf reads one accept-encoding or content-encoding element as
// HAProxy 2.6's parse_encoding_value: its bit, and whether its weight is
// exactly "q=0" (other spellings of zero are not refusals there). ok
// false: unknown. HAProxy lowercases accept-encoding values only, so
// lower is false for a content-encoding, whose "GZIP" is unknown.
func encodingOf(e []byte, lower bool) (bit uint32, rejected, ok bool) {
	if lower {
		e = bytes.ToLower(e)
	}
	name, params, weighted := bytes.Cut(e, []byte{';'})
	bit, ok = encodings[string(bytes.TrimRight(name, " \t"))]
	if !ok {
		return 0, false, false
	}
	if weighted {
		rejected = string(bytes.TrimLeft(params, " \t")) == "q=0"
	}
	return bit, rejected, true
}

// maxAcceptEncodings is HAProxy's ACCEPT_ENCODING_MAX_ENTRIES.
const maxAcceptEncodings = 16

// SecondaryKey builds a request's secondary key for the signature sig:
// the accept-encoding bitmap and the referer's CRC-32, zero for what sig
// does not cover. ok false when it cannot be built (too many
// accept-encoding fields).
func SecondaryKey(h Header, sig uint32) (k [SecKeyLen]byte, ok bool) {
	if sig&VaryAcceptEncoding != 0 {
		// As HAProxy, the elements are counted across the fields, empty
		// ones included, and the sixteenth makes the request one whose
		// key is not built.
		bitmap, black, count := uint32(encIdentity), ^uint32(0), 0
		h.elements("accept-encoding", func(e []byte) {
			if count >= maxAcceptEncodings {
				return
			}
			count++
			if len(e) == 0 {
				return
			}
			bit, rejected, known := encodingOf(e, true)
			switch {
			case !known:
				bitmap |= encOther
			case rejected:
				black &^= bit
			default:
				bitmap |= bit
			}
		})
		if count == maxAcceptEncodings {
			return k, false
		}
		if bitmap&encStar != 0 {
			bitmap = ^uint32(0)
		}
		bitmap &= black
		if count == 0 {
			bitmap = ^uint32(0)
		}
		binary.LittleEndian.PutUint32(k[0:4], bitmap)
	}
	if sig&VaryReferer != 0 {
		if v, found := h.first("referer"); found {
			binary.LittleEndian.PutUint32(k[4:8], crc32.ChecksumIEEE(v))
		}
	}
	return k, true
}

// ResponseEncoding puts the response's Content-Encoding bitmap in a
// secondary key's accept-encoding part; ok false for an unknown encoding,
// which HAProxy does not store.
func ResponseEncoding(h Header, k *[SecKeyLen]byte) bool {
	var bitmap uint32
	ok := true
	h.elements("content-encoding", func(e []byte) {
		bit, _, known := encodingOf(e, false)
		if !known {
			ok = false
		}
		bitmap |= bit
	})
	if !ok {
		return false
	}
	if bitmap == 0 {
		bitmap = encIdentity
	}
	binary.LittleEndian.PutUint32(k[0:4], bitmap)
	return true
}

// SecKeyMatch compares a stored secondary key with a request's: the
// stored encodings must all be accepted, the referer hashes equal.
func SecKeyMatch(stored, req [SecKeyLen]byte) bool {
	ref := binary.LittleEndian.Uint32(stored[0:4])
	acc := binary.LittleEndian.Uint32(req[0:4])
	if ref&encOther != 0 || ref&acc != ref {
		return false
	}
	return bytes.Equal(stored[4:], req[4:])
}

// NotModified says whether a conditional request gets a 304 from e: an
// If-None-Match naming its ETag (weakly) or "*", or, without
// If-None-Match, an If-Modified-Since no earlier than its date.
func NotModified(h Header, e *Entry) bool {
	inm, match := false, false
	h.elements("if-none-match", func(v []byte) {
		if match {
			return
		}
		inm = true
		if string(v) == "*" {
			match = true
			return
		}
		if len(e.ETag) > 0 && etagWeakEqual(e.ETag, v) {
			match = true
		}
	})
	if match || inm {
		return match
	}
	if v, ok := h.first("if-modified-since"); ok {
		if t, err := http.ParseTime(string(v)); err == nil {
			return e.LastModified <= t.Unix()
		}
	}
	return false
}

// etagWeakEqual compares two entity tags, ignoring a W/ prefix; both must
// be quoted.
func etagWeakEqual(a, b []byte) bool {
	a, b = bytes.TrimPrefix(a, []byte("W/")), bytes.TrimPrefix(b, []byte("W/"))
	if len(a) < 2 || a[0] != '"' || a[len(a)-1] != '"' {
		return false
	}
	return bytes.Equal(a, b)
}

// HTTPDate is a time as HTTP writes it.
func HTTPDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }
