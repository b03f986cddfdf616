package certstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CrtList is a crt-list file: its entries in order.
type CrtList struct {
	Path    string
	Entries []*CrtEntry
	// Lines is the last line number given: the file's line count, then
	// one more per entry added at run time, as HAProxy numbers them.
	Lines int
	// Defaults are the binds (file:line) that serve the first entry as
	// their default certificate (those without strict-sni).
	Defaults []string
}

// CrtEntry is one line of a crt-list: a certificate path (crt-base
// applied), its SSL options and its SNI filters.
type CrtEntry struct {
	Cert    string
	Line    int
	Opts    map[string]string // option keyword to its argument ("" for flags)
	HasOpts bool              // the line had a [...] block, even empty
	Filters []string
}

// crtListKeywords are the SSL options a crt-list line takes, with how
// many arguments each consumes, in the order HAProxy 2.6 dumps them.
var crtListKeywords = []struct {
	kw   string
	args int
}{
	{"npn", 1}, {"alpn", 1}, {"verify", 1}, {"no-ca-names", 0}, {"allow-0rtt", 0},
	{"ca-file", 1}, {"ca-verify-file", 1}, {"crl-file", 1}, {"ciphers", 1}, {"ciphersuites", 1},
	{"curves", 1}, {"ecdhe", 1}, {"ssl-min-ver", 1}, {"ssl-max-ver", 1},
}

// maxCrtArgs bounds the words of a line, as HAProxy's MAX_CRT_ARGS.
const maxCrtArgs = 2048

// ParseCrtLine splits a crt-list line into its certificate path, options
// and filters, with HAProxy's error texts (which name file and line). An
// empty line gives an empty path and no error.
func ParseCrtLine(line, file string, linenum int) (*CrtEntry, error) {
	var args []string
	sslB, sslE := 0, 0
	start := -1 // where the word being read starts; -1 between words
	end := func(i int) {
		if start >= 0 {
			args = append(args, line[start:i])
			start = -1
		}
	}
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f':
			end(i)
		case ch == '[':
			end(i)
			if sslB != 0 {
				return nil, fmt.Errorf("parsing [%s:%d]: too many '['", file, linenum)
			}
			if len(args) == 0 {
				return nil, fmt.Errorf("parsing [%s:%d]: file must start with a cert", file, linenum)
			}
			sslB = len(args)
		case ch == ']':
			end(i)
			if sslE != 0 {
				return nil, fmt.Errorf("parsing [%s:%d]: too many ']'", file, linenum)
			}
			if sslB == 0 {
				return nil, fmt.Errorf("parsing [%s:%d]: missing '['", file, linenum)
			}
			sslE = len(args)
		default:
			if start < 0 {
				if len(args) == maxCrtArgs {
					return nil, fmt.Errorf("parsing [%s:%d]: too many args ", file, linenum)
				}
				start = i
			}
		}
	}
	end(len(line))
	e := &CrtEntry{Line: linenum}
	if len(args) == 0 {
		return e, nil
	}
	e.Cert = args[0]
	i := 1
	if sslB != 0 {
		e.HasOpts = true
		e.Opts = map[string]string{}
		i = sslB
		// A '[' with no ']' leaves the options unclosed: HAProxy reads
		// none of them as options, the words become filters.
		for i < sslE {
			found := false
			for _, k := range crtListKeywords {
				if k.kw != args[i] {
					continue
				}
				found = true
				if i+1+k.args > sslE {
					return nil, fmt.Errorf("parsing [%s:%d]: ssl args out of '[]' for %s", file, linenum, args[i])
				}
				v := ""
				if k.args == 1 {
					v = args[i+1]
				}
				if err := checkOpt(k.kw, v); err != nil {
					return nil, err
				}
				e.Opts[k.kw] = v
				i += 1 + k.args
				break
			}
			if !found {
				return nil, fmt.Errorf("parsing [%s:%d]: unknown ssl keyword %s", file, linenum, args[i])
			}
		}
	}
	e.Filters = append([]string(nil), args[i:]...)
	return e, nil
}

func checkOpt(kw, v string) error {
	switch kw {
	case "verify":
		if v != "none" && v != "optional" && v != "required" {
			return fmt.Errorf("verify : unknown verify method '%s', only 'none', 'optional', and 'required' are supported", v)
		}
	case "ssl-min-ver", "ssl-max-ver":
		switch v {
		case "SSLv3", "TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3":
		default:
			return fmt.Errorf("'%s' : unknown version '%s'", kw, v)
		}
	}
	return nil
}

// Format writes an entry as `show ssl crt-list` does; withLine adds
// ":<line>" after the path (the -n form).
func (e *CrtEntry) Format(withLine bool) string {
	var b strings.Builder
	b.WriteString(e.Cert)
	if withLine {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.HasOpts {
		b.WriteString(" [")
		sp := false
		for _, k := range crtListKeywords {
			v, ok := e.Opts[k.kw]
			if !ok || k.kw == "ca-verify-file" {
				continue
			}
			if sp {
				b.WriteByte(' ')
			}
			sp = true
			b.WriteString(k.kw)
			if k.args == 1 {
				b.WriteString(" " + v)
			}
		}
		b.WriteString("]")
	}
	for _, f := range e.Filters {
		b.WriteString(" " + f)
	}
	return b.String()
}

// LoadCrtList reads a crt-list file and the certificates, CA and CRL
// files it names, with crtBase put before relative certificate paths and
// caBase before relative CA and CRL paths. A list already loaded is
// returned as is.
func (s *Store) LoadCrtList(path, crtBase, caBase string) (*CrtList, error) {
	s.mu.RLock()
	l := s.lists[path]
	s.mu.RUnlock()
	if l != nil {
		return l, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l = &CrtList{Path: path}
	// HAProxy 2.6 (and 3.x) reads a line of blanks after a line whose
	// path it put under crt-base as that certificate again, at line 0,
	// without options or filters: its path buffer still holds the
	// previous one. show ssl crt-list lists that entry, and it serves the
	// certificate for its own names.
	prevBased := ""
	for n, ln := range strings.Split(string(data), "\n") {
		if ln == "" || ln[0] == '#' || ln[0] == '\r' {
			continue
		}
		e, err := ParseCrtLine(ln, path, n+1)
		if err != nil {
			return nil, err
		}
		if e.Cert == "" {
			if prevBased != "" {
				l.Entries = append(l.Entries, &CrtEntry{Cert: prevBased})
			}
			continue
		}
		prevBased = ""
		if crtBase != "" && !filepath.IsAbs(e.Cert) {
			prevBased = Abs(crtBase, e.Cert)
		}
		e.Cert = Abs(crtBase, e.Cert)
		if _, err := s.LoadCert(e.Cert); err != nil {
			return nil, fmt.Errorf("unable to load SSL certificate file '%s' file does not exist.", e.Cert)
		}
		for _, k := range []string{"ca-file", "ca-verify-file", "crl-file"} {
			v, ok := e.Opts[k]
			if !ok {
				continue
			}
			v = Abs(caBase, v)
			e.Opts[k] = v
			kind := KindCA
			if k == "crl-file" {
				kind = KindCRL
			}
			if _, err := s.LoadFile(kind, v); err != nil {
				return nil, fmt.Errorf("parsing [%s:%d]: '%s' : unable to load %s", path, n+1, k, v)
			}
		}
		l.Entries = append(l.Entries, e)
	}
	l.Lines = strings.Count(string(data), "\n")
	if len(data) > 0 && data[len(data)-1] != '\n' {
		l.Lines++
	}
	s.mu.Lock()
	if o := s.lists[path]; o != nil {
		l = o
	} else {
		s.lists[path] = l
	}
	s.mu.Unlock()
	return l, nil
}

// CrtList returns a copy of a crt-list's entries, or nil.
func (s *Store) CrtList(path string) *CrtList {
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := s.lists[path]
	if l == nil {
		return nil
	}
	return &CrtList{Path: l.Path, Entries: append([]*CrtEntry(nil), l.Entries...), Lines: l.Lines,
		Defaults: append([]string(nil), l.Defaults...)}
}

// CrtListPaths lists the crt-lists' paths, sorted.
func (s *Store) CrtListPaths() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return sortedKeys(s.lists)
}

// AddCrtEntry appends an entry to a crt-list; its certificate must be a
// non-empty entry of the store, and its CA and CRL files already loaded.
// It returns the number of binds using the list.
func (s *Store) AddCrtEntry(list string, e *CrtEntry) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lists[list]
	if l == nil {
		return 0, fmt.Errorf("crt-list '%s' does not exist!", list)
	}
	c := s.certs[e.Cert]
	if c == nil {
		return 0, fmt.Errorf("certificate '%s' does not exist!", e.Cert)
	}
	if c.Empty() {
		return 0, fmt.Errorf("certificate '%s' is empty!", e.Cert)
	}
	for _, k := range []string{"ca-file", "ca-verify-file", "crl-file"} {
		if v, ok := e.Opts[k]; ok {
			kind := KindCA
			if k == "crl-file" {
				kind = KindCRL
			}
			if s.files[kind][v] == nil {
				return 0, fmt.Errorf("'%s' : unable to load %s", k, v)
			}
		}
	}
	l.Lines++
	e.Line = l.Lines
	l.Entries = append(l.Entries, e)
	s.uses[e.Cert] += s.uses[list]
	for _, k := range crtFileOpts {
		if v, ok := e.Opts[k]; ok {
			s.uses[v] += s.uses[list]
		}
	}
	s.gen.Add(1)
	return s.uses[list], nil
}

// crtFileOpts are the crt-list options naming a CA or CRL file of the
// store.
var crtFileOpts = []string{"ca-file", "ca-verify-file", "crl-file"}

// DelCrtEntry removes the entry of cert (at line, when not 0) from a
// crt-list, with HAProxy's error texts.
func (s *Store) DelCrtEntry(list, cert string, line int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lists[list]
	if l == nil {
		return fmt.Errorf("crt-list '%s' does not exist!", list)
	}
	c := s.certs[cert]
	if c == nil {
		return fmt.Errorf("certificate '%s' does not exist!", cert)
	}
	if c.Empty() {
		return fmt.Errorf("certificate '%s' is empty!", cert)
	}
	var lines []string
	pick, found := -1, 0
	for i, e := range l.Entries {
		if e.Cert != cert {
			continue
		}
		found++
		lines = append(lines, fmt.Sprint(e.Line))
		if pick < 0 && (line == 0 || e.Line == line) {
			pick = i
		}
	}
	if found == 0 {
		return fmt.Errorf("certificate '%s' can't be found in crt-list '%s'!", cert, list)
	}
	if pick < 0 {
		return fmt.Errorf("found a certificate '%s' but the line number is incorrect, please specify a correct line number preceded by colons (%s)!", cert, strings.Join(lines, ", "))
	}
	if line == 0 && found > 1 {
		return fmt.Errorf("found the certificate '%s' in several entries, please specify a line number preceded by colons (%s)!", cert, strings.Join(lines, ", "))
	}
	if pick == 0 && len(l.Defaults) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "certificate '%s' cannot be deleted, it is used as default certificate by the following frontends:\n", cert)
		for _, d := range l.Defaults {
			fmt.Fprintf(&b, "\t- %s\n", d)
		}
		return errors.New(b.String())
	}
	e := l.Entries[pick]
	l.Entries = append(l.Entries[:pick:pick], l.Entries[pick+1:]...)
	s.uses[cert] -= s.uses[list]
	// The line's CA and CRL files are no longer used by it either, as
	// AddCrtEntry counted them.
	for _, k := range crtFileOpts {
		if v, ok := e.Opts[k]; ok {
			s.uses[v] -= s.uses[list]
		}
	}
	s.gen.Add(1)
	return nil
}

// UseAsDefault records that a bind (named file:line) without strict-sni
// serves a crt-list's first entry as its default certificate.
func (s *Store) UseAsDefault(list, bind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.lists[list]; l != nil {
		l.Defaults = append(l.Defaults, bind)
	}
}
