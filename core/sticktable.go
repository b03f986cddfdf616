package core

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"goha/core/config"
	"goha/core/diag"
	"goha/core/stick"
)

// The stick-table keyword: a proxy's table, named after the proxy.

func parseStickTableKw(c *kwCtx, args []string) error {
	if c.p.StickTable != nil {
		return errf("stick-table: only one stick-table per proxy is permitted.")
	}
	t, warn, err := parseStickTable(c.kw, c.p.Name, args, false)
	if err != nil {
		return err
	}
	c.p.StickTable = t
	return warn
}

// parseStickTable reads a stick-table (or a peers section's table) line's
// words after the keyword, in HAProxy 2.6's words; warn is a warning the
// line also gets (a store option given twice).
func parseStickTable(kw, name string, args []string, inPeers bool) (t *stick.Config, warn, err error) {
	t = &stick.Config{Name: name, SrvKey: "name"}
	typed, sized := false, false
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	for i := 0; i < len(args); {
		switch w := args[i]; {
		case w == "size":
			if arg(i+1) == "" {
				return nil, nil, errf("%s: missing argument after '%s'.", kw, w)
			}
			n, err := config.ParseSize(args[i+1])
			if err != nil {
				return nil, nil, errf("%s: unexpected character '%c' in argument of '%s'.", kw, badChar(args[i+1]), w)
			}
			t.Size, sized = n, true
			i += 2
		case w == "peers" && !inPeers:
			if arg(i+1) == "" {
				return nil, nil, errf("%s: missing argument after '%s'.", kw, w)
			}
			t.Peers = args[i+1]
			i += 2
		case w == "expire":
			if arg(i+1) == "" {
				return nil, nil, errf("%s: missing argument after '%s'.", kw, w)
			}
			d, err := config.ParseTime(args[i+1], time.Millisecond)
			switch {
			case err != nil && strings.Contains(err.Error(), "overflow"):
				return nil, nil, tightf("%s: timer overflow in argument <%s> to <%s>, maximum value is 2147483647 ms (~24.8 days).", kw, args[i+1], w)
			case err != nil:
				return nil, nil, errf("%s: unexpected character '%c' in argument of '%s'.", kw, badChar(args[i+1]), w)
			case d > 0 && d < time.Millisecond:
				return nil, nil, tightf("%s: timer underflow in argument <%s> to <%s>, minimum non-null value is 1 ms.", kw, args[i+1], w)
			case d.Milliseconds() > 2147483647:
				return nil, nil, tightf("%s: timer overflow in argument <%s> to <%s>, maximum value is 2147483647 ms (~24.8 days).", kw, args[i+1], w)
			}
			t.Expire = d.Milliseconds()
			i += 2
		case w == "nopurge":
			t.NoPurge = true
			i++
		case w == "type":
			kt, custom, size, ok := stick.ParseKeyType(arg(i + 1))
			if !ok {
				return nil, nil, errf("%s: unknown type '%s'.", kw, arg(i+1))
			}
			t.Key, t.KeyLen, typed = kt, size, true
			i += 2
			if custom && arg(i) == "len" {
				n, _ := strconv.Atoi(arg(i + 1))
				if n <= 0 {
					return nil, nil, errf("%s: unknown type '%s'.", kw, arg(i))
				}
				if kt == stick.KeyString {
					n++ // the terminating NUL HAProxy counts
				}
				t.KeyLen = n
				i += 2
			}
		case w == "store":
			for _, opt := range splitStore(arg(i + 1)) {
				st, dup, err := parseStoreOption(kw, opt, t.Store)
				if err != nil {
					return nil, nil, err
				}
				if dup {
					warn = tightWarnf("%s: store option '%s' already enabled, ignored.", kw, storeName(opt))
					continue
				}
				t.Store = append(t.Store, st)
			}
			if err := storeConflicts(kw, t.Store); err != nil {
				return nil, nil, err
			}
			i += 2
		case w == "srvkey":
			switch arg(i + 1) {
			case "name", "addr":
				t.SrvKey = args[i+1]
			default:
				return nil, nil, errf("%s : unknown server key type '%s'.", kw, arg(i+1))
			}
			i += 2
		default:
			return nil, nil, errf("%s: unknown argument '%s'.", kw, w)
		}
	}
	if !sized {
		return nil, nil, errf("%s: missing size.", kw)
	}
	if !typed {
		return nil, nil, errf("%s: missing type.", kw)
	}
	return t, warn, nil
}

// badChar is the first byte of s that is no digit, for HAProxy's
// "unexpected character" messages.
func badChar(s string) byte {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return s[i]
		}
	}
	return 0
}

// splitStore cuts a store list at the commas outside parentheses:
// "gpc_rate(2,10s),conn_cnt".
func splitStore(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func storeName(opt string) string {
	if i := strings.IndexByte(opt, '('); i >= 0 {
		return opt[:i]
	}
	return opt
}

// parseStoreOption reads one store option: a data type with, for an
// array, its size, and for a rate its period.
func parseStoreOption(kw, opt string, have []stick.Stored) (st stick.Stored, dup bool, err error) {
	name, rest := opt, ""
	if i := strings.IndexByte(opt, '('); i >= 0 {
		if !strings.HasSuffix(opt, ")") {
			return st, false, errf("%s: missing closing parenthesis after store option '%s'.", kw, opt[:i])
		}
		name, rest = opt[:i], opt[i+1:len(opt)-1]
	}
	dt, ok := stick.LookupType(name)
	if !ok {
		return st, false, errf("%s: unknown store option '%s'.", kw, name)
	}
	for _, h := range have {
		if h.Type == dt {
			return st, true, nil
		}
	}
	ti := stick.Types[dt]
	var a []string
	if rest != "" || strings.Contains(opt, "(") {
		a = strings.SplitN(rest, ",", 2)
	}
	st = stick.Stored{Type: dt, N: 1}
	if ti.Array {
		if len(a) == 0 {
			return st, false, errf("%s: missing argument to store option '%s'.", kw, name)
		}
		n, _ := strconv.Atoi(a[0])
		if n <= 0 || n > stick.MaxArray {
			return st, false, errf("%s: array size is out of allowed range (1-%d) for store option '%s'.", kw, stick.MaxArray, name)
		}
		st.N, a = n, a[1:]
	}
	switch {
	case ti.Period && len(a) == 0:
		return st, false, errf("%s: missing argument to store option '%s'.", kw, name)
	case ti.Period:
		d, err := config.ParseTime(a[0], time.Millisecond)
		if err != nil {
			return st, false, errf("%s: error when processing store option '%s'.", kw, name)
		}
		st.Period = d.Milliseconds()
	case len(a) > 0:
		return st, false, errf("%s: unexpected argument to store option '%s'.", kw, name)
	}
	return st, false, nil
}

// storeConflicts refuses the arrays stored beside the single values they
// replace, as HAProxy 2.6 does.
func storeConflicts(kw string, st []stick.Stored) error {
	has := map[stick.DataType]bool{}
	for _, s := range st {
		has[s.Type] = true
	}
	switch {
	case has[stick.GPT] && has[stick.GPT0]:
		return errf("%s: simultaneous usage of 'gpt' and 'gpt0' in a same table is not permitted as 'gpt' overrides 'gpt0'.", kw)
	case has[stick.GPC] && (has[stick.GPC0] || has[stick.GPC1]):
		return errf("%s: simultaneous usage of 'gpc' and 'gpc[0/1]' in a same table is not permitted as 'gpc' overrides 'gpc[0/1]'.", kw)
	case has[stick.GPCRate] && (has[stick.GPC0Rate] || has[stick.GPC1Rate]):
		return errf("%s: simultaneous usage of 'gpc_rate' and 'gpc[0/1]_rate' in a same table is not permitted as 'gpc_rate' overrides 'gpc[0/1]_rate'.", kw)
	}
	return nil
}

// A proxy's table that names a peers section needs one (an incomplete
// section, removed, counts as none), as HAProxy checks.
func init() {
	registerProxyCheck(func(b *builder, p *Proxy) {
		t := p.StickTable
		if t == nil || t.Peers == "" {
			return
		}
		for _, ps := range b.cfg.Peers {
			if ps.Name == t.Peers {
				return
			}
		}
		b.d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Proxy '%s': unable to find sync peers '%s'.", p.Name, t.Peers)})
	})
}

// StickTables returns the configuration's stick tables by name.
func (c *Config) StickTables() map[string]*stick.Config {
	m := map[string]*stick.Config{}
	for _, p := range c.Proxies {
		if p.StickTable != nil {
			m[p.Name] = p.StickTable
		}
	}
	for _, ps := range c.Peers {
		for _, t := range ps.Tables {
			m[t.Name] = t
		}
	}
	return m
}
