package runtime

import (
	"fmt"

	"goha/core/cache"
)

func init() {
	Register(&Command{Words: []string{"show", "cache"}, Usage: "show cache",
		Help: "show cache status", Level: LevelAdmin, Run: cmdShowCache})
}

// cmdShowCache lists each cache and its live entries as HAProxy 2.6
// does; the addresses are those of goha's objects.
func cmdShowCache(c *Ctx) {
	for _, ca := range c.Proc.Caches() {
		c.Write(showCache(ca, nil))
	}
}

// showCache appends one cache's lines to b.
func showCache(ca *cache.Cache, b []byte) []byte {
	entries := ca.Snapshot()
	now := ca.Now()
	b = fmt.Appendf(b, "%p: %s (shctx:%p, available blocks:%d)\n", ca, ca.Name, &ca.Config, ca.AvailableBlocks())
	for i, e := range entries {
		// HAProxy walks its tree from one key to the next: of the
		// entries that vary under one key it shows the first stored.
		if i > 0 && e.Key32() == entries[i-1].Key32() {
			continue
		}
		b = fmt.Appendf(b, "%p hash:%d vary:0x", e, e.Key32())
		for _, x := range e.SecKey {
			b = fmt.Appendf(b, "%02x", x)
		}
		b = fmt.Appendf(b, " size:%d (%d blocks), refcount:0, expire:%d\n", e.Size(), e.Blocks(), e.Expire-now)
	}
	return b
}
