package core

import (
	"github.com/cespare/xxhash/v2"

	"goha/core/lb"
)

// ExtraHashes are hash functions goha adds to HAProxy's: xxh64 lives here
// because core/lb imports only the standard library.
var ExtraHashes = map[string]lb.HashFunc{"xxh64": lb.XXH64(xxhash.Sum64)}
