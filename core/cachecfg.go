package core

import (
	"strconv"
	"strings"

	"goha/core/cache"
	"goha/core/config"
	"goha/core/diag"
)

// cache sections, the cache filter and the cache-use and cache-store
// actions, checked as HAProxy 2.6's cache.c checks them.

func init() {
	registerSection("cache", parseCacheSection)
	registerPostCheck(checkCacheFilters)
}

// cacheKeywords are the section's keywords, which docs/configuration.md
// lists.
var cacheKeywords = []string{"max-age", "max-object-size", "max-secondary-entries", "process-vary", "total-max-size"}

// CacheFilter is a proxy's use of a cache: an explicit "filter cache"
// line, or the one a cache-use or cache-store rule declares.
type CacheFilter struct {
	Name     string
	Implicit bool
}

func parseCacheSection(b *builder, s *config.Section) {
	if s.Name == "" {
		b.report(s.Pos, &abortErr{"'cache' expects a <name> argument"})
		return
	}
	if len(s.Args) > 0 {
		b.report(s.Pos, &abortErr{"'cache' cannot handle unexpected argument '" + s.Args[0] + "'."})
		return
	}
	c := cache.Config{Name: s.Name, MaxAge: 60, MaxSecondary: 10}
	if len(s.Name) > 32 {
		c.Name = s.Name[:32]
		b.report(s.Pos, tightWarnf("cache name is limited to 32 characters, truncate to '%s'.", c.Name))
	}
	for _, o := range b.cfg.Caches {
		if o.Name == c.Name {
			b.report(s.Pos, tightf("Duplicate cache name '%s'.", c.Name))
			b.aborted = true
			return
		}
	}
	for _, ln := range s.Lines {
		w := ln.Words
		arg := ""
		if len(w) > 1 {
			arg = w[1]
		}
		known := false
		for _, k := range cacheKeywords {
			known = known || k == w[0]
		}
		if !known {
			b.report(ln.Pos, errf("unknown keyword '%s' in 'cache' section", w[0]))
			continue
		}
		if len(w) > 2 {
			b.report(ln.Pos, &abortErr{"'" + w[0] + "' cannot handle unexpected argument '" + w[2] + "'."})
			return
		}
		// HAProxy warns and stops reading on these values: the warning,
		// then "Error(s) found".
		abortWarn := func(format string, a ...any) {
			b.report(ln.Pos, tightWarnf(format, a...))
			b.aborted = true
			b.fatalWarns++
		}
		switch w[0] {
		case "total-max-size":
			n, err := strconv.ParseUint(arg, 10, 64)
			if err != nil || arg == "" || arg[0] == '+' || arg[0] == '-' {
				abortWarn("total-max-size wrong value '%s'", arg)
				return
			}
			if n > 4095 {
				abortWarn("\"total-max-size\" (%s) must not be greater than %d", arg, 4095)
				return
			}
			c.MaxBlocks = int(n) * 1024
		case "max-age":
			if arg == "" {
				b.report(ln.Pos, tightWarnf("'%s' expects an age parameter in seconds.", w[0]))
			}
			c.MaxAge = Atoi(arg)
		case "max-object-size":
			if arg == "" {
				b.report(ln.Pos, tightWarnf("'%s' expects a maximum file size parameter in bytes.", w[0]))
			}
			n, err := strconv.ParseUint(arg, 10, 32)
			if err != nil || arg[0] == '+' {
				abortWarn("max-object-size wrong value '%s'", arg)
				return
			}
			c.MaxObjSize = int(n)
		case "process-vary":
			switch arg {
			case "on":
				c.ProcessVary = true
			case "off":
				c.ProcessVary = false
			default:
				b.report(ln.Pos, tightWarnf("'%s' expects \"on\" or \"off\" (enable or disable vary processing).", w[0]))
			}
		case "max-secondary-entries":
			if arg == "" {
				b.report(ln.Pos, tightWarnf("'%s' expects a strictly positive number.", w[0]))
			}
			n, err := strconv.ParseUint(arg, 10, 32)
			if err != nil || n == 0 || arg[0] == '+' {
				abortWarn("max-secondary-entries wrong value '%s'", arg)
				return
			}
			c.MaxSecondary = int(n)
		}
	}
	if c.MaxBlocks <= 0 {
		b.d.Alertf(diag.Pos{}, "Size not specified for cache '%s'", c.Name)
		return
	}
	if c.MaxObjSize == 0 {
		c.MaxObjSize = c.MaxBlocks * cache.BlockSize >> 8
	} else if c.MaxObjSize > c.MaxBlocks*cache.BlockSize/2 {
		b.d.Alertf(diag.Pos{}, "\"max-object-size\" is limited to an half of \"total-max-size\" => %d", c.MaxBlocks*cache.BlockSize/2)
		return
	}
	b.cfg.Caches = append(b.cfg.Caches, &c)
}

// parseCacheFilter reads "filter cache <name>" for p: it takes the place
// of the implicit declaration a cache rule made before it.
func parseCacheFilter(c *kwCtx, args []string) error {
	if len(args) < 2 {
		return errf("'filter' : '%s : expects a <name> argument'", args[0])
	}
	if len(args) > 2 {
		return errf("'filter' : 'unknown keyword '%s''", args[2])
	}
	p := c.p
	for i, f := range p.CacheFilters {
		if f.Name != args[1] {
			continue
		}
		if !f.Implicit {
			return errf("'filter' : '%s: multiple explicit declarations of the cache filter '%s''", p.Name, args[1])
		}
		p.CacheFilters = append(p.CacheFilters[:i], p.CacheFilters[i+1:]...)
		break
	}
	p.CacheFilters = append(p.CacheFilters, CacheFilter{Name: args[1]})
	p.filterOrder = append(p.filterOrder, "cache:"+args[1])
	return nil
}

// cacheRule checks the cache name of a cache-use or cache-store rule
// and declares the proxy's implicit filter for it.
func cacheRule(p *Proxy, args []string) error {
	name := ""
	if len(args) > 1 {
		name = args[1]
	}
	if name == "" || name == "if" || name == "unless" {
		return errf("expects a cache name")
	}
	for _, f := range p.CacheFilters {
		if f.Name == name {
			return nil
		}
	}
	p.CacheFilters = append(p.CacheFilters, CacheFilter{Name: name, Implicit: true})
	p.filterOrder = append(p.filterOrder, "cache:"+name)
	return nil
}

// FindCache is the cache section named name, nil when there is none.
func (c *Config) FindCache(name string) *cache.Config {
	for _, x := range c.Caches {
		if x.Name == name {
			return x
		}
	}
	return nil
}

// checkCacheFilters resolves each proxy's cache filters, as HAProxy's
// cache_store_check: the cache must exist, compression must come after
// it, and an implicit declaration goes only with the compression filter.
func checkCacheFilters(b *builder) {
	for _, p := range b.cfg.Proxies {
		for _, f := range p.CacheFilters {
			if b.cfg.FindCache(f.Name) == nil {
				b.d.Alertf(diag.Pos{}, "config: %s '%s': unable to find the cache '%s' referenced by the filter 'cache'.", proxyTypeStr(p), p.Name, f.Name)
				continue
			}
			comp := false
			for _, o := range p.filterOrder {
				switch {
				case o == "cache:"+f.Name:
					if comp {
						b.d.Alertf(diag.Pos{}, "config: %s '%s': unable to enable the compression filter before the cache '%s'.", proxyTypeStr(p), p.Name, f.Name)
					}
				case o == "compression":
					comp = true
				case o == "fcgi-app" || strings.HasPrefix(o, "cache:"):
				default:
					if f.Implicit {
						b.d.Alertf(diag.Pos{}, "config: %s '%s': require an explicit filter declaration to use the cache '%s'.", proxyTypeStr(p), p.Name, f.Name)
					}
				}
			}
		}
	}
}

// proxyTypeStr is HAProxy's proxy_type_str.
func proxyTypeStr(p *Proxy) string {
	switch {
	case p.Cap&CapFE != 0 && p.Cap&CapBE != 0:
		return "proxy"
	case p.Cap&CapFE != 0:
		return "frontend"
	case p.Cap&CapBE != 0:
		return "backend"
	}
	return "proxy"
}
