package runtime

import (
	"net/netip"
	"strconv"
	"strings"

	"goha/core/stick"
)

// The stick-table commands: show table, clear table, set table, with
// HAProxy 2.6's replies.

func init() {
	Register(
		&Command{Words: []string{"show", "table"}, Usage: "show table <table> [<filter>]*",
			Help: "report table usage stats or dump this table's contents (filter: data/key)", Run: func(c *Ctx) { cmdTable(c, tableShow) }},
		&Command{Words: []string{"clear", "table"}, Usage: "clear table <table> [<filter>]*",
			Help: "remove an entry from a table (filter: data/key)", Run: func(c *Ctx) { cmdTable(c, tableClear) }},
		&Command{Words: []string{"set", "table"}, Usage: "set table <table> key <k> [data.* <v>]*",
			Help: "update or create a table entry's data", Run: func(c *Ctx) { cmdTable(c, tableSet) }},
	)
}

type tableAction uint8

const (
	tableShow tableAction = iota
	tableClear
	tableSet
)

// tableFilter is one `data.<type> <op> <value>` of show and clear table.
type tableFilter struct {
	dt    stick.DataType
	op    string
	value int64
}

func (f *tableFilter) match(t *stick.Table, e *stick.Entry, now int64) bool {
	v, _ := t.Value(e, f.dt, 0, now)
	switch f.op {
	case "eq":
		return v == f.value
	case "ne":
		return v != f.value
	case "le":
		return v <= f.value
	case "ge":
		return v >= f.value
	case "lt":
		return v < f.value
	}
	return v > f.value
}

// maxTableFilters is HAProxy's STKTABLE_FILTER_LEN.
const maxTableFilters = 4

func cmdTable(c *Ctx, act tableAction) {
	if c.Arg(2) == "" {
		if act != tableShow {
			tableArgsErr(c, act)
			return
		}
		var b []byte
		for _, t := range c.Proc.StickTables() {
			if t.Size > 0 {
				b = t.AppendHead(b)
			}
		}
		c.Write(b)
		return
	}
	t := c.Proc.StickTable(c.Arg(2))
	if t == nil {
		c.Err("No such table\n")
		return
	}
	switch {
	case c.Arg(3) == "key":
		tableKeyCmd(c, t, act)
		return
	case strings.HasPrefix(c.Arg(3), "data."):
		if act == tableSet {
			c.Err("content-based lookup is only supported with the \"show\" and \"clear\" actions\n")
			return
		}
	case c.Arg(3) != "":
		tableArgsErr(c, act)
		return
	case act == tableSet:
		tableArgsErr(c, act)
		return
	}
	var filters []tableFilter
	i := 0
	for ; i < maxTableFilters; i++ {
		w := c.Arg(3 + 3*i)
		if w == "" {
			break
		}
		dt, ok := stick.LookupType(strings.TrimPrefix(w, "data."))
		if !ok || !strings.HasPrefix(w, "data.") {
			c.Err("Filter entry #" + strconv.Itoa(i+1) + ": Unknown data type\n")
			return
		}
		if !t.Stores(dt) {
			c.Err("Filter entry #" + strconv.Itoa(i+1) + ": Data type not stored in this table\n")
			return
		}
		op := c.Arg(4 + 3*i)
		switch op {
		case "eq", "ne", "le", "ge", "lt", "gt":
		default:
			c.Err("Filter entry #" + strconv.Itoa(i+1) + ": Require and operator among \"eq\", \"ne\", \"le\", \"ge\", \"lt\", \"gt\"\n")
			return
		}
		v, err := strconv.ParseInt(c.Arg(5+3*i), 10, 64)
		if err != nil {
			c.Err("Filter entry #" + strconv.Itoa(i+1) + ": Require a valid integer value to compare against\n")
			return
		}
		filters = append(filters, tableFilter{dt: dt, op: op, value: v})
	}
	if c.Arg(3+3*i) != "" && len(filters) > 0 {
		c.Err("Detected extra data in filter, " + strconv.Itoa(3+3*i+1) + "th word of input, after '" + c.Arg(2+3*i) + "'\n")
		return
	}
	now := stick.Now()
	var b []byte
	if c.Level() < LevelOperator {
		if act == tableShow {
			b = t.AppendHead(b)
			b = append(b, "# contents not dumped due to insufficient privileges\n"...)
			c.Write(b)
		}
		return
	}
	// The snapshot drops the expired entries first, which the head's
	// count then leaves out.
	list := t.Snapshot(now)
	if act == tableShow {
		b = t.AppendHead(b)
	}
	matches := func(e *stick.Entry) bool {
		for i := range filters {
			if !filters[i].match(t, e, now) {
				return false
			}
		}
		return true
	}
	if act == tableShow {
		for _, e := range list {
			if matches(e) {
				b = t.AppendEntry(b, e, now)
			}
		}
		t.Unref(list, nil)
		c.Write(b)
		return
	}
	t.Unref(list, matches)
}

func tableArgsErr(c *Ctx, act tableAction) {
	switch act {
	case tableShow:
		c.Err("Optional argument only supports \"data.<store_data_type>\" <operator> <value> and key <key>\n")
	case tableClear:
		c.Err("Required arguments: <table> \"data.<store_data_type>\" <operator> <value> or <table> key <key>\n")
	default:
		c.Err("Required arguments: <table> key <key> [data.<store_data_type> <value>]*\n")
	}
}

// tableKeyCmd runs show, clear or set table ... key <k>.
func tableKeyCmd(c *Ctx, t *stick.Table, act tableAction) {
	k := c.Arg(4)
	if k == "" {
		c.Err("Key value expected\n")
		return
	}
	var key []byte
	switch t.Key {
	case stick.KeyIP:
		a, err := netip.ParseAddr(k)
		if err != nil || !a.Is4() {
			a = netip.IPv4Unspecified()
		}
		key, _ = stick.KeyFromAddr(nil, t.Key, a)
	case stick.KeyIPv6:
		a, err := netip.ParseAddr(k)
		if err != nil || !a.Is6() {
			c.Err("Invalid key\n")
			return
		}
		key, _ = stick.KeyFromAddr(nil, t.Key, a)
	case stick.KeyInteger:
		n, err := strconv.ParseUint(k, 10, 32)
		if err != nil {
			c.Err("Invalid key\n")
			return
		}
		key = stick.KeyFromInt(nil, int64(n))
	case stick.KeyString:
		key = stick.KeyFromBytes(nil, t.Key, t.KeyLen, []byte(k))
	default:
		c.Err([]string{
			"Showing keys from tables of type other than ip, ipv6, string and integer is not supported\n",
			"Removing keys from tables of type other than ip, ipv6, string and integer is not supported\n",
			"Inserting keys into tables of type other than ip, ipv6, string and integer is not supported\n",
		}[act])
		return
	}
	if c.Level() < LevelOperator {
		return
	}
	now := stick.Now()
	switch act {
	case tableShow:
		e := t.Lookup(key, now)
		if e == nil {
			return
		}
		b := t.AppendHead(nil)
		b = t.AppendEntry(b, e, now)
		t.Release(e, now, false)
		c.Write(b)
	case tableClear:
		if found, removed := t.Delete(key); found && !removed {
			c.Err("Entry currently in use, cannot remove\n")
		}
	case tableSet:
		e := t.Get(key, now)
		if e == nil {
			c.Err("Unable to allocate a new entry\n")
			return
		}
		defer t.Release(e, now, true)
		for i := 5; c.Arg(i) != ""; i += 2 {
			w := c.Arg(i)
			if !strings.HasPrefix(w, "data.") {
				c.Err("\"data.<type>\" followed by a value expected\n")
				return
			}
			dt, ok := stick.LookupType(w[5:])
			if !ok {
				c.Err("Unknown data type\n")
				return
			}
			if !t.Stores(dt) {
				c.Err("Data type not stored in this table\n")
				return
			}
			v, err := strconv.ParseInt(c.Arg(i+1), 10, 64)
			if err != nil {
				c.Err("Require a valid integer value to store\n")
				return
			}
			t.Set(e, dt, 0, v, now)
		}
	}
}
