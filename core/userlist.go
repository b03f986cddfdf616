package core

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"strings"
	"sync/atomic"

	"goha/core/config"
	"goha/core/crypt"
	"goha/core/diag"
	"goha/core/sample"
)

// userlist sections: users with their passwords and groups, which the
// http_auth and http_auth_group fetches check Basic credentials against.
// They are read as HAProxy's cfg_parse_users reads them, and their user
// and group references resolved as its userlist_postinit resolves them,
// once every section is read.

func init() { registerSection("userlist", parseUserlistSection) }

// userlistKeywords are the section's keywords and their options, which
// docs/configuration.md lists (core/docs_test.go keeps them in step).
var userlistKeywords = map[string][]string{
	"group": {"users"},
	"user":  {"password", "insecure-password", "groups"},
}

// Userlist is one userlist section.
type Userlist struct {
	Name string
	Pos  diag.Pos

	users  []*User // in declaration order
	byName map[string]*User
	groups []*userGroup
	// key keys the verification cache's digests: what the cache holds
	// means nothing outside this process.
	key [32]byte
}

// User is a user of a userlist.
type User struct {
	Name string
	// Insecure says the password is written in clear (insecure-password);
	// once set on a line, HAProxy keeps it even if password follows.
	Insecure bool
	pass     string
	hash     crypt.Hash
	groups   map[string]bool
	// groupNames is the groups option as written, resolved after reading.
	groupNames string
	// verified caches the last password that matched the hash, as an
	// HMAC under the list's key: checking it again costs one HMAC, not
	// thousands of rounds of SHA-512. One entry per user bounds the
	// cache by the configuration; a wrong password is never cached, so
	// guessing costs what it costs without the cache.
	verified atomic.Pointer[[sha256.Size]byte]
}

type userGroup struct {
	name      string
	userNames string // the users option as written
}

// cur is the list lines add to: HAProxy adds them to the last list
// created, also after a duplicated header it ignored.
func (b *builder) curUserlist() *Userlist {
	if n := len(b.cfg.Userlists); n > 0 {
		return b.cfg.Userlists[n-1]
	}
	return nil
}

func parseUserlistSection(b *builder, s *config.Section) {
	b.userlistHeader(s)
	for _, ln := range s.Lines {
		b.userlistLine(ln)
	}
}

func (b *builder) userlistHeader(s *config.Section) {
	switch {
	case s.Name == "":
		b.report(s.Pos, tightf("'userlist' expects <name> as arguments."))
		return
	case len(s.Args) > 0:
		b.report(s.Pos, errf("'userlist' cannot handle unexpected argument '%s'.", s.Args[0]))
		return
	}
	if ch := invalidChar(s.Name); ch != "" {
		b.report(s.Pos, tightf("character '%s' is not permitted in 'userlist' name '%s'.", ch, s.Name))
		return
	}
	if b.cfg.FindUserlist(s.Name) != nil {
		b.report(s.Pos, tightWarnf("ignoring duplicated userlist '%s'.", s.Name))
		return
	}
	ul := &Userlist{Name: s.Name, Pos: s.Pos, byName: map[string]*User{}}
	rand.Read(ul.key[:])
	b.cfg.Userlists = append(b.cfg.Userlists, ul)
}

func (b *builder) userlistLine(ln config.Line) {
	w := ln.Words
	arg := func(i int) string {
		if i < len(w) {
			return w[i]
		}
		return ""
	}
	switch w[0] {
	case "group":
		if arg(1) == "" {
			b.report(ln.Pos, tightf("'group' expects <name> as arguments."))
			return
		}
		if ch := invalidChar(w[1]); ch != "" {
			b.report(ln.Pos, tightf("character '%s' is not permitted in 'group' name '%s'.", ch, w[1]))
			return
		}
		ul := b.curUserlist()
		if ul == nil {
			return
		}
		if ul.HasGroup(w[1]) {
			b.report(ln.Pos, tightWarnf("ignoring duplicated group '%s' in userlist '%s'.", w[1], ul.Name))
			return
		}
		g := &userGroup{name: w[1]}
		for i := 2; i < len(w); i += 2 {
			if w[i] != "users" {
				b.report(ln.Pos, tightf("'group' only supports 'users' option."))
				return
			}
			g.userNames = arg(i + 1)
		}
		ul.groups = append(ul.groups, g)
	case "user":
		if arg(1) == "" {
			b.report(ln.Pos, tightf("'user' expects <name> as arguments."))
			return
		}
		ul := b.curUserlist()
		if ul == nil {
			return
		}
		if ul.byName[w[1]] != nil {
			b.report(ln.Pos, tightWarnf("ignoring duplicated user '%s' in userlist '%s'.", w[1], ul.Name))
			return
		}
		// The user is kept before its options are read, as in HAProxy.
		u := &User{Name: w[1], groups: map[string]bool{}}
		u.hash = crypt.Parse("")
		ul.users = append(ul.users, u)
		ul.byName[u.Name] = u
		for i := 2; i < len(w); i += 2 {
			switch w[i] {
			case "password":
				u.pass = arg(i + 1)
				u.hash = crypt.Parse(u.pass)
				if u.hash.Scheme == crypt.Unsupported {
					b.report(ln.Pos, tightf("the encrypted password used for user '%s' uses %s, which is not supported by goha.", u.Name, u.hash.Name))
					return
				}
			case "insecure-password":
				u.pass, u.Insecure = arg(i+1), true
			case "groups":
				u.groupNames = arg(i + 1)
			default:
				b.report(ln.Pos, tightf("'user' only supports 'password', 'insecure-password' and 'groups' options."))
				return
			}
		}
	default:
		b.report(ln.Pos, tightf("unknown keyword '%s' in 'users' section", w[0]))
	}
}

// resolveUserlists links users and groups, as HAProxy's userlist_postinit:
// lists, users and groups in the reverse of their order (HAProxy's lists
// are built by prepending), stopping at the first name that is not
// declared. It reports whether the configuration may go on to its checks.
func (b *builder) resolveUserlists() bool {
	for i := len(b.cfg.Userlists) - 1; i >= 0; i-- {
		ul := b.cfg.Userlists[i]
		for j := len(ul.users) - 1; j >= 0; j-- {
			u := ul.users[j]
			for _, g := range splitNames(u.groupNames) {
				if !ul.HasGroup(g) {
					b.d.Alertf(diag.Pos{}, "userlist '%s': no such group '%s' specified in user '%s'", ul.Name, g, u.Name)
					return false
				}
				u.groups[g] = true
			}
		}
		for j := len(ul.groups) - 1; j >= 0; j-- {
			g := ul.groups[j]
			for _, name := range splitNames(g.userNames) {
				u := ul.byName[name]
				if u == nil {
					b.d.Alertf(diag.Pos{}, "userlist '%s': no such user '%s' specified in group '%s'", ul.Name, name, g.name)
					return false
				}
				u.groups[g.name] = true
			}
		}
	}
	return true
}

// splitNames splits a comma-separated list as strtok does: empty names
// are skipped.
func splitNames(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' })
}

// FindUserlist returns the userlist named name, or nil.
func (c *Config) FindUserlist(name string) *Userlist {
	for _, ul := range c.Userlists {
		if ul.Name == name {
			return ul
		}
	}
	return nil
}

// SampleUserlists is the configuration's userlists as the sample fetches
// resolve them; never nil, so that an unknown name is an error.
func (c *Config) SampleUserlists() map[string]sample.Userlist {
	m := make(map[string]sample.Userlist, len(c.Userlists))
	for _, ul := range c.Userlists {
		m[ul.Name] = ul
	}
	return m
}

// HasGroup says whether the list declares group.
func (ul *Userlist) HasGroup(group string) bool {
	for _, g := range ul.groups {
		if g.name == group {
			return true
		}
	}
	return false
}

// InGroup says whether user belongs to group.
func (ul *Userlist) InGroup(user []byte, group string) bool {
	u := ul.byName[string(user)]
	return u != nil && u.groups[group]
}

// Check says whether pass is user's password: equal to an insecure
// password, or giving the stored hash through crypt(3)'s algorithm, as
// HAProxy's check_user.
func (ul *Userlist) Check(user, pass []byte) bool {
	u := ul.byName[string(user)]
	if u == nil {
		return false
	}
	if u.Insecure {
		return subtle.ConstantTimeCompare(pass, []byte(u.pass)) == 1
	}
	if u.hash.Scheme == crypt.Invalid || u.hash.Scheme == crypt.Unsupported {
		return false
	}
	mac := hmac.New(sha256.New, ul.key[:])
	mac.Write(pass)
	var sum [sha256.Size]byte
	mac.Sum(sum[:0])
	if v := u.verified.Load(); v != nil && hmac.Equal(v[:], sum[:]) {
		return true
	}
	if !u.hash.Verify(pass) {
		return false
	}
	u.verified.Store(&sum)
	return true
}

// Users lists the list's users, in declaration order.
func (ul *Userlist) Users() []*User { return ul.users }
