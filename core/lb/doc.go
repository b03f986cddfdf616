// Package lb holds goha's load-balancing algorithms: HAProxy 2.6's
// (roundrobin, static-rr, leastconn, first, source, uri, url_param, hdr and
// random, with map-based or consistent hashing) picking servers in the same
// order as HAProxy on the same configuration, Tengine's VNSWRR, and nginx's
// SWRR as a baseline.
//
// The package knows servers only as indices into the backend's server list
// (declaration order) and through Server values: user weight, backup flag,
// usability, connection limit and ID. The core adapts its own servers to
// that and reports each change with Update, Add or Remove, and each
// connection start and end with Take and Drop; live connection counts are
// read through Config.Served.
//
// One file per algorithm:
//
//	fwrr.go    roundrobin        O(log n), mutex (HAProxy's lbprm lock)
//	map.go     static-rr,        O(1), lock-free table swapped on change
//	           map-based hashing
//	fwlc.go    leastconn         O(log n), mutex
//	fas.go     first             O(full servers), lock-free snapshot
//	chash.go   consistent hash,  O(log points), lock-free snapshot
//	           random
//	vnswrr.go  vnswrr            O(1), lock-free, per-shard cursors
//	swrr.go    swrr (baseline)   O(n), mutex
//
// HAProxy's effective weights are kept: dynamic algorithms work with the
// user weight times 16 (so that slow start ramps in sixteenths), static
// ones with the weight divided by the GCD of all weights. Ties are broken as
// HAProxy's ebtrees break them, first in first out, which tree.go
// reproduces.
//
// hash.go has HAProxy's hash functions (sdbm, djb2, wt6, crc32) and its
// avalanche; key.go the zero-allocation helpers that find the bytes each
// hashing algorithm hashes; balance.go the "balance" and "hash-type"
// parsers with HAProxy's error texts.
package lb
