package core

import (
	"fmt"
	"strings"

	"goha/core/comp"
	"goha/core/diag"
)

// Compression is what a proxy's `compression` lines set.
type Compression struct {
	// Algos and Types are in HAProxy's order: each line's words are put
	// in front of the list, so the last one named comes first, and a
	// defaults section's follow the proxy's own.
	Algos []comp.Algo
	Types []string
	// Offload removes Accept-Encoding from the requests compression
	// applies to, so that the server sends its response uncompressed.
	Offload bool
}

// inherited is what a proxy gets from its defaults section: the
// algorithms and types, never offload.
func (c *Compression) inherited() *Compression {
	if c == nil {
		return nil
	}
	return &Compression{Algos: c.Algos, Types: c.Types}
}

func init() {
	registerKeywords(
		Keyword{Name: "compression", Scope: scopeProxy, Args: ArgsAny, Parse: parseCompression},
		Keyword{Name: "tune.comp.maxlevel", Scope: scopeGlobal, Args: 1, Parse: func(c *kwCtx, args []string) error {
			v := Atoi(first(args))
			if v < 1 || v > 9 {
				return errf("'%s' expects a numeric value between 1 and 9", c.kw)
			}
			c.g.CompMaxLevel = v
			return nil
		}},
		// The limits that lower the level or turn compression off as
		// memory or CPU run short are not implemented: only the values
		// that set no limit are accepted.
		Keyword{Name: "maxzlibmem", Scope: scopeGlobal, Args: 1, Parse: func(c *kwCtx, args []string) error {
			if first(args) == "" {
				return errf("'%s' expects an integer argument.", c.kw)
			}
			if Atoi(args[0]) != 0 {
				return errf("'%s' is not supported by goha (only 0, no limit).", c.kw)
			}
			return nil
		}},
		Keyword{Name: "maxcompcpuusage", Scope: scopeGlobal, Args: 1, Parse: func(c *kwCtx, args []string) error {
			v := Atoi(first(args))
			if first(args) == "" || v < 0 || v > 100 {
				return errf("'%s' expects an integer argument between 0 and 100.", c.kw)
			}
			if v != 100 {
				return errf("'%s' is not supported by goha (only 100, no limit).", c.kw)
			}
			return nil
		}},
		// The input rate above which responses start uncompressed, in
		// kB/s: the value `set rate-limit http-compression global` changes.
		Keyword{Name: "maxcomprate", Scope: scopeGlobal, Args: 1, Parse: func(c *kwCtx, args []string) error {
			if first(args) == "" {
				return errf("'%s' expects an integer argument in kb/s.", c.kw)
			}
			c.b.cfg.SetRateLimit(RateCompression, Atoi(args[0]))
			return nil
		}},
	)
	registerPostCheck(checkCompFilter)
}

func parseCompression(c *kwCtx, args []string) error {
	if c.p.Comp == nil {
		c.p.Comp = &Compression{}
	}
	cp := c.p.Comp
	switch first(args) {
	case "algo":
		if len(args) < 2 {
			return errf("parsing [%s:%d] : '%s' expects <algorithm>.", c.pos.File, c.pos.Line, c.kw)
		}
		for _, name := range args[1:] {
			a, ok := comp.ParseAlgo(name)
			if !ok {
				return errf("'%s' : '%s' is not a supported algorithm.", c.kw, name)
			}
			cp.Algos = append([]comp.Algo{a}, cp.Algos...)
		}
	case "type":
		if len(args) < 2 {
			return errf("'%s' expects <type>.", c.kw)
		}
		for _, t := range args[1:] {
			cp.Types = append([]string{t}, cp.Types...)
		}
	case "offload":
		if len(args) > 1 {
			return errf("'%s %s' cannot handle unexpected argument '%s'.", c.kw, args[0], args[1])
		}
		cp.Offload = true
		if c.p.Cap&CapDefaults != 0 {
			return diag.Warnf("'%s' : '%s' ignored in 'defaults' section.", c.kw, args[0])
		}
	default:
		return errf("'%s' expects 'algo', 'type' or 'offload'", c.kw)
	}
	return nil
}

// parseCompFilter reads `filter compression`.
func parseCompFilter(c *kwCtx, args []string) error {
	if len(args) > 1 {
		return errf("'filter %s' : unknown keyword '%s'.", args[0], args[1])
	}
	for _, f := range c.p.filterOrder {
		if f == "compression" {
			return errf("'filter' : '%s: Proxy supports only one compression filter\n'", c.p.Name)
		}
	}
	c.p.filterOrder = append(c.p.filterOrder, "compression")
	return nil
}

// checkCompFilter applies HAProxy's rule for the compression filter of a
// proxy with compression settings: implicit (the last filter) when the
// proxy declares no other filter, required explicitly when it does, and
// never before a cache filter.
func checkCompFilter(b *builder) {
	for _, p := range b.cfg.Proxies {
		if p.Comp == nil {
			continue
		}
		declared, other := false, false
		for _, f := range p.filterOrder {
			switch {
			case f == "compression":
				declared = true
			case strings.HasPrefix(f, "cache:"):
				if declared {
					b.d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("config: %s '%s': unable to enable the compression filter before any cache filter.", capName(p.Cap), p.Name)})
				}
			case f == "fcgi-app":
			default:
				other = true
			}
		}
		if !declared && other {
			b.d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("config: %s '%s': require an explicit filter declaration to use HTTP compression", capName(p.Cap), p.Name)})
		}
	}
}
