package lb

import "bytes"

// The helpers below find, without allocating, the bytes HAProxy hashes for
// each hashing algorithm. The caller hashes them with HashType.Sum.

// SourceHash is "balance source"'s hash of a client address (4 bytes for
// IPv4, 16 for IPv6): the XOR of its big-endian 32-bit words, then the
// avalanche if the hash type has it. HAProxy applies no hash function here.
func SourceHash(addr []byte, h HashType) uint32 {
	var v uint32
	for i := 0; i+4 <= len(addr); i += 4 {
		v ^= uint32(addr[i])<<24 | uint32(addr[i+1])<<16 | uint32(addr[i+2])<<8 | uint32(addr[i+3])
	}
	if h.Avalanche {
		v = FullHash(v)
	}
	return v
}

// URIKey returns the part of the request URI "balance uri" hashes: up to
// the '?' (unless Whole), at most Len bytes, up to the Depth-th directory,
// and with PathOnly only the path of an absolute URI.
func URIKey(uri []byte, b *Balance) []byte {
	if b.PathOnly {
		uri = URIPath(uri)
	}
	if b.Len > 0 && len(uri) > b.Len {
		uri = uri[:b.Len]
	}
	slashes := 0
	for i, c := range uri {
		if c == '/' {
			slashes++
			if b.Depth > 0 && slashes == b.Depth+1 {
				return uri[:i]
			}
		} else if c == '?' && !b.Whole {
			return uri[:i]
		}
	}
	return uri
}

// URIPath returns the path (with the query) of a request URI: the URI itself
// in origin form, what follows the authority in absolute form, nothing for
// "*" and authority forms.
func URIPath(uri []byte) []byte {
	if len(uri) == 0 || uri[0] == '/' {
		return uri
	}
	i := bytes.Index(uri, []byte("://"))
	if i < 0 {
		return nil
	}
	rest := uri[i+3:]
	j := bytes.IndexByte(rest, '/')
	if j < 0 {
		return nil
	}
	return rest[j:]
}

// FindURLParam returns the value of the first query-string parameter name in
// uri, as "balance url_param" finds it.
func FindURLParam(uri []byte, name string) ([]byte, bool) {
	q := bytes.IndexByte(uri, '?')
	if q < 0 {
		return nil, false
	}
	return findParam(uri[q+1:], name, false)
}

// FindPostParam looks for the parameter in a form-encoded request body, as
// "url_param <name> check_post" does when the query string lacks it.
func FindPostParam(body []byte, name string) ([]byte, bool) {
	return findParam(body, name, true)
}

func findParam(params []byte, name string, post bool) ([]byte, bool) {
	n := len(name)
	for len(params) > n {
		if params[n] == '=' && string(params[:n]) == name {
			v := params[n+1:]
			end := bytes.IndexByte(v, '&')
			if end < 0 {
				end = len(v)
			}
			// HAProxy tests only the value's first byte: a body whose
			// value does not start like a URI-encoded one is not a form.
			if post && end > 0 && !isToken(v[0]) {
				if v[0] == ' ' || v[0] == '\t' || v[0] == '\r' || v[0] == '\n' {
					return v[:0], true
				}
				return nil, false
			}
			return v[:end], true
		}
		a := bytes.IndexByte(params, '&')
		if a < 0 {
			return nil, false
		}
		params = params[a+1:]
	}
	return nil, false
}

// isToken is HTTP's tchar set, which HAProxy requires of POST values.
func isToken(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// HostDomain returns the part of a Host value that "hdr(host)
// use_domain_only" hashes: the label before the last dot ("example" in
// "www.example.com"), or the whole value when it has no dot.
func HostDomain(v []byte) []byte {
	last := bytes.LastIndexByte(v, '.')
	if last < 0 {
		return v
	}
	start := bytes.LastIndexByte(v[:last], '.') + 1
	return v[start:last]
}

// HeaderValue returns the first element of a header field value, as
// "balance hdr" hashes it: up to the first comma outside double quotes,
// without surrounding blanks.
func HeaderValue(v []byte) []byte {
	for len(v) > 0 && isLWS(v[0]) {
		v = v[1:]
	}
	quoted := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == ',':
			v = v[:i]
		}
	}
	for len(v) > 0 && isLWS(v[len(v)-1]) {
		v = v[:len(v)-1]
	}
	return v
}

func isLWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// Request is what the hashing algorithms may look at in a request.
type Request struct {
	// Src is the client's address: 4 bytes (IPv4) or 16 (IPv6).
	Src []byte
	// URI is the request target as received.
	URI []byte
	// Header returns the value of the first field with that name
	// (case-insensitive), nil when there is none.
	Header func(name string) []byte
	// Post tells a POST request; Body is the part of its body already
	// received, searched by url_param when the query string lacks the
	// parameter.
	Post bool
	Body []byte
}

// Key computes the pick key of r for c's algorithm and hash type, with
// HasHash false when the hashed input is missing so that the pick falls back
// to round robin, as HAProxy does. Shard is left to the caller.
func (c *Config) Key(r *Request) Key {
	b := &c.Balance
	switch b.Algo {
	case Source:
		if len(r.Src) == 4 || len(r.Src) == 16 {
			return Key{Hash: SourceHash(r.Src, c.Hash), HasHash: true}
		}
	case URI:
		return Key{Hash: c.Hash.Sum(URIKey(r.URI, b)), HasHash: true}
	case URLParam:
		v, ok := FindURLParam(r.URI, b.Param)
		if !ok && r.Post {
			// HAProxy 2.6 looks in the body of every POST, with or
			// without check_post.
			v, ok = FindPostParam(r.Body, b.Param)
		}
		if ok {
			return Key{Hash: c.Hash.Sum(v), HasHash: true}
		}
	case Hdr:
		if r.Header == nil {
			break
		}
		v := HeaderValue(r.Header(b.Header))
		if len(v) == 0 {
			break
		}
		if b.DomainOnly {
			v = HostDomain(v)
		}
		return Key{Hash: c.Hash.Sum(v), HasHash: true}
	}
	return Key{}
}
