// Package pool keeps idle server connections the way HAProxy 2.2 does:
// per server, per thread (shard), in two lists, with takeover between
// shards, a keep-or-close rule on release, a periodic purge and a forced
// flush on address or state changes.
//
// # Layout
//
// A Set holds what the whole process shares: the number of shards, the
// global limits (idle cap, file-descriptor watermarks), the per-shard
// fd_takeover counters and the purge task. Each Server holds one padded
// slot per shard:
//
//	Server
//	 +-- counters (atomics): used, used_max, need_est, idle, idle_nb, safe_nb,
//	 |                       next_takeover, generation
//	 +-- shard[0] | mu | idle list | safe list | idle count |   (64 bytes)
//	 +-- shard[1] | mu | idle list | safe list | idle count |   (64 bytes)
//	 ...
//
// A connection is always in exactly one of three places: in use by a
// caller (counted in used), on one shard's idle list, or on one shard's
// safe list (both counted in idle). The shard lock guards the two lists
// of that shard; a takeover takes the sibling's lock, which is why even
// the owner locks its own shard.
//
// Lists keep the most recently released connection at the tail. Get takes
// from the tail (the warmest connection); the purge and the FD-pressure
// kill take from the head (the coldest).
//
// # Counters
//
// All counters are updated with atomics and read without locks, as in
// HAProxy: maxima and estimates are approximate under concurrency, and
// the keep rule tolerates that. The one cap that must hold exactly,
// pool-max-conn, is enforced by adding first and undoing on overflow.
//
// # Generations
//
// CloseAll bumps the server's generation before it empties the shards.
// A connection remembers the generation it was dialled under; Release
// refuses one from an older generation, and it checks under the shard
// lock, so a connection in use during CloseAll can never come back into
// the pool afterwards, whatever the interleaving.
package pool
