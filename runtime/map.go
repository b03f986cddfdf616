package runtime

import (
	"fmt"
	"strconv"
	"strings"

	"goha/core/sample"
)

// The map and acl commands: they read and change the process's pattern
// references (map files, ACL pattern files, ACLs' own patterns), which the
// converters and ACLs that use them see at once. As in HAProxy 2.6 they
// need no particular level.
func init() {
	Register(
		&Command{Words: []string{"add", "acl"}, Usage: "add acl [@<ver>] <acl> <pattern>", Help: "add an acl entry", Run: cmdAddMap},
		&Command{Words: []string{"clear", "acl"}, Usage: "clear acl [@<ver>] <acl>", Help: "clear the contents of this acl", Run: cmdClearMap},
		&Command{Words: []string{"commit", "acl"}, Usage: "commit acl @<ver> <acl>", Help: "commit the ACL at this version", Run: cmdCommitMap},
		&Command{Words: []string{"del", "acl"}, Usage: "del acl <acl> [<key>|#<ref>]", Help: "delete acl entries matching <key>", Run: cmdDelMap},
		&Command{Words: []string{"get", "acl"}, Usage: "get acl <acl> <value>", Help: "report the patterns matching a sample for an ACL", Run: cmdGetMap},
		&Command{Words: []string{"prepare", "acl"}, Usage: "prepare acl <acl>", Help: "prepare a new version for atomic ACL replacement", Run: cmdPrepareMap},
		&Command{Words: []string{"show", "acl"}, Usage: "show acl [@<ver>] <acl>]", Help: "report available acls or dump an acl's contents", Run: cmdShowMap},
		&Command{Words: []string{"add", "map"}, Usage: "add map [@<ver>] <map> <key> <val>", Help: "add a map entry (payload supported instead of key/val)", Run: cmdAddMap},
		&Command{Words: []string{"clear", "map"}, Usage: "clear map [@<ver>] <map>", Help: "clear the contents of this map", Run: cmdClearMap},
		&Command{Words: []string{"commit", "map"}, Usage: "commit map @<ver> <map>", Help: "commit the map at this version", Run: cmdCommitMap},
		&Command{Words: []string{"del", "map"}, Usage: "del map <map> [<key>|#<ref>]", Help: "delete map entries matching <key>", Run: cmdDelMap},
		&Command{Words: []string{"get", "map"}, Usage: "get map <acl> <value>", Help: "report the keys and values matching a sample for a map", Run: cmdGetMap},
		&Command{Words: []string{"prepare", "map"}, Usage: "prepare map <acl>", Help: "prepare a new version for atomic map replacement", Run: cmdPrepareMap},
		&Command{Words: []string{"set", "map"}, Usage: "set map <map> [<key>|#<ref>] <value>", Help: "modify a map entry", Run: cmdSetMap},
		&Command{Words: []string{"show", "map"}, Usage: "show map [@ver] [map]", Help: "report available maps or dump a map's contents", Run: cmdShowMap},
	)
}

// mapCmd is what every map/acl command starts from: which kind of
// reference it names, and its words with an optional @<ver> taken out.
type mapCmd struct {
	c      *Ctx
	isMap  bool
	flag   int
	gen    string // after '@'; "" when absent
	hasGen bool
}

func newMapCmd(c *Ctx) *mapCmd {
	m := &mapCmd{c: c, isMap: strings.HasPrefix(c.Arg(1), "m"), flag: sample.RefACL}
	if m.isMap {
		m.flag = sample.RefMap
	}
	return m
}

// shiftGen takes an "@<ver>" at word i out of the arguments.
func (m *mapCmd) shiftGen(i int) {
	if a := m.c.Arg(i); strings.HasPrefix(a, "@") {
		m.gen, m.hasGen = a[1:], true
		args := append([]string{}, m.c.Args[:i]...)
		m.c.Args = append(args, m.c.Args[i+1:]...)
	}
}

// pick returns the map word or the ACL one.
func (m *mapCmd) pick(ifMap, ifACL string) string {
	if m.isMap {
		return ifMap
	}
	return ifACL
}

func (m *mapCmd) unknown() {
	m.c.Err(m.pick("Unknown map identifier. Please use #<id> or <file>.", "Unknown ACL identifier. Please use #<id> or <file>."))
}

// lookup finds the reference named by word i; with checkFlag, only one
// used as this command's kind.
func (m *mapCmd) lookup(i int, checkFlag bool) *sample.Map {
	ref := m.c.Proc.Maps().Lookup(m.c.Arg(i))
	if ref == nil || (checkFlag && !ref.Has(m.flag)) {
		m.unknown()
		return nil
	}
	return ref
}

// str2uic reads the leading digits of s as an unsigned int, as HAProxy's
// str2uic (atoi): no digits is 0, overflow wraps.
func str2uic(s string) uint32 {
	var n uint32
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + uint32(s[i]-'0')
	}
	return n
}

func cmdShowMap(c *Ctx) {
	m := newMapCmd(c)
	ms := c.Proc.Maps()
	if c.Arg(2) == "" {
		c.WriteString("# id (file) description\n")
		for _, ref := range ms.List(m.flag) {
			curr, next, cnt := ref.Versions()
			c.Printf("%d (%s) %s. curr_ver=%d next_ver=%d entry_cnt=%d\n", ref.ID(), ref.Name, ref.Display(), curr, next, cnt)
		}
		return
	}
	m.shiftGen(2)
	ref := m.lookup(2, true)
	if ref == nil {
		return
	}
	gen := ref.Current()
	if m.hasGen {
		gen = str2uic(m.gen)
	}
	for _, e := range ref.Entries(gen) {
		if e.HasV {
			c.Printf("%#x %s %s\n", e.ID, e.Key, e.Value)
		} else {
			c.Printf("%#x %s\n", e.ID, e.Key)
		}
	}
}

func cmdGetMap(c *Ctx) {
	m := newMapCmd(c)
	if c.Arg(2) == "" || c.Arg(3) == "" {
		c.Err(m.pick("Missing map identifier and/or key.", "Missing ACL identifier and/or key."))
		return
	}
	ref := m.lookup(2, false)
	if ref == nil {
		return
	}
	for _, r := range ref.Get(c.Arg(3)) {
		var b strings.Builder
		fmt.Fprintf(&b, "type=%s", r.Method)
		if r.NoCase {
			b.WriteString(", case=insensitive")
		} else {
			b.WriteString(", case=sensitive")
		}
		switch {
		case !r.Found:
			b.WriteString(m.pick(", found=no", ", match=no"))
		default:
			b.WriteString(m.pick(", found=yes", ", match=yes"))
			if r.Tree {
				b.WriteString(", idx=tree")
			} else {
				b.WriteString(", idx=list")
			}
			fmt.Fprintf(&b, m.pick(", key=\"%s\"", ", pattern=\"%s\""), r.Key)
			if m.isMap {
				if r.ValueType != "" {
					fmt.Fprintf(&b, ", value=\"%s\", type=\"%s\"", r.Value, r.ValueType)
				} else {
					b.WriteString(", value=none")
				}
			}
		}
		b.WriteByte('\n')
		c.WriteString(b.String())
	}
}

func cmdPrepareMap(c *Ctx) {
	m := newMapCmd(c)
	ref := m.lookup(2, true)
	if ref == nil {
		return
	}
	c.Msg(fmt.Sprintf("New version created: %d", ref.Prepare()))
}

// parseEntryID reads "#0x<hex>", an entry's id; malformed is false when
// the word starts so but is not a number.
func parseEntryID(w string) (id uint64, isID, ok bool) {
	hex, isID := strings.CutPrefix(w, "#0x")
	if !isID {
		return 0, false, false
	}
	n, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		if ne, _ := err.(*strconv.NumError); ne != nil && ne.Err == strconv.ErrRange {
			// strtoll saturates: a valid number that names no entry.
			return 1<<63 - 1, true, true
		}
		return 0, true, false
	}
	return n, true, true
}

func cmdSetMap(c *Ctx) {
	m := newMapCmd(c)
	if c.Arg(2) == "" || c.Arg(3) == "" || c.Arg(4) == "" {
		c.Err("'set map' expects three parameters: map identifier, key and value.")
		return
	}
	ref := m.lookup(2, false)
	if ref == nil {
		return
	}
	var err error
	if id, isID, ok := parseEntryID(c.Arg(3)); isID {
		if !ok {
			c.Err("Malformed identifier. Please use #<id> or <file>.")
			return
		}
		err = ref.SetByID(id, c.Arg(4))
	} else {
		err = ref.Set(c.Arg(3), c.Arg(4))
	}
	if err != nil {
		c.Err(err.Error() + ".")
	}
}

func cmdDelMap(c *Ctx) {
	m := newMapCmd(c)
	if c.Arg(2) == "" || c.Arg(3) == "" {
		c.Err(m.pick("This command expects two parameters: map identifier and key.",
			"This command expects two parameters: ACL identifier and key."))
		return
	}
	ref := c.Proc.Maps().Lookup(c.Arg(2))
	if ref == nil || !ref.Has(m.flag) {
		// 2.6 names a map here for both kinds.
		c.Err("Unknown map identifier. Please use #<id> or <file>.")
		return
	}
	var found bool
	if id, isID, ok := parseEntryID(c.Arg(3)); isID {
		if !ok {
			c.Err("Malformed identifier. Please use #<id> or <file>.")
			return
		}
		found = ref.DeleteByID(id)
	} else {
		found = ref.Delete(c.Arg(3))
	}
	if !found {
		c.Err("Key not found.")
	}
}

func cmdClearMap(c *Ctx) {
	m := newMapCmd(c)
	m.shiftGen(2)
	if c.Arg(2) == "" {
		c.Err(m.pick("Missing map identifier.", "Missing ACL identifier."))
		return
	}
	ref := m.lookup(2, true)
	if ref == nil {
		return
	}
	gen := ref.Current()
	if m.hasGen {
		gen = str2uic(m.gen)
	}
	ref.Clear(gen)
}

func cmdCommitMap(c *Ctx) {
	m := newMapCmd(c)
	if !strings.HasPrefix(c.Arg(2), "@") {
		c.Err("Missing version number.")
		return
	}
	gen := str2uic(c.Arg(2)[1:])
	if c.Arg(3) == "" {
		c.Err(m.pick("Missing map identifier.", "Missing ACL identifier."))
		return
	}
	ref := m.lookup(3, true)
	if ref == nil {
		return
	}
	if !ref.Commit(gen) {
		c.Err("Version number out of range.")
	}
}

func cmdAddMap(c *Ctx) {
	m := newMapCmd(c)
	m.shiftGen(2)
	payload := c.Payload
	hasPayload := payload != ""
	if m.isMap {
		if (!hasPayload && (c.Arg(2) == "" || c.Arg(3) == "" || c.Arg(4) == "")) || (hasPayload && c.Arg(2) == "") {
			c.Err("'add map' expects three parameters (map identifier, key and value) or one parameter (map identifier) and a payload")
			return
		}
	} else if c.Arg(2) == "" || c.Arg(3) == "" {
		c.Err("'add acl' expects two parameters: ACL identifier and pattern.")
		return
	}
	ref := m.lookup(2, false)
	if ref == nil {
		return
	}
	gen := ref.Current()
	if m.hasGen {
		gen = str2uic(m.gen)
		if int32(gen-ref.Next()) > 0 {
			c.Err(m.pick("Version number in the future, please use 'prepare map' before.",
				"Version number in the future, please use 'prepare acl' before."))
			return
		}
	}
	if !m.isMap && ref.HasValues() {
		c.Err("This ACL is shared with a map containing samples. You must use the command 'add map' to add values.")
		return
	}
	for {
		key, value := c.Arg(3), c.Arg(4)
		if hasPayload {
			if payload == "" {
				break
			}
			// One "key value" per line: the key ends at a blank (only),
			// the value at the end of the line, as 2.6 reads it.
			l := strings.IndexAny(payload, " \t")
			if l < 0 {
				if m.isMap {
					c.Err(fmt.Sprintf("Missing value for key '%s'.", payload))
					return
				}
				l = len(payload)
			}
			key = payload[:l]
			payload = payload[min(l+1, len(payload)):]
			payload = strings.TrimLeft(payload, " \t")
			l = strings.IndexByte(payload, '\n')
			if l < 0 {
				l = len(payload)
			}
			value = payload[:l]
			payload = payload[min(l+1, len(payload)):]
		}
		var err error
		if m.isMap {
			err = ref.Add(gen, key, value, true)
		} else {
			err = ref.Add(gen, key, "", false)
		}
		if err != nil {
			c.Err(err.Error() + ".")
			return
		}
		if !hasPayload || payload == "" {
			return
		}
	}
}
