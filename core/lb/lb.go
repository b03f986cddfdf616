package lb

import (
	"fmt"
	"sync/atomic"
	"time"
)

// HAProxy's weight scales: a user weight (0..MaxWeight) is multiplied by
// WeightScale for the dynamic algorithms, giving the effective weight
// (eweight) they work with, so that slow start can ramp in sixteenths.
const (
	MaxWeight   = 256
	WeightScale = 16
	maxEWeight  = MaxWeight * WeightScale // SRV_EWGHT_MAX
	eweightSpan = MaxWeight * WeightScale // SRV_EWGHT_RANGE
)

// Server is what an algorithm knows of one server of the backend. Servers are
// named by their index in the backend's list (declaration order).
type Server struct {
	// ID is HAProxy's puid: the server's "id", or the number HAProxy
	// assigns (the first free one from the server's position, 1-based).
	// "first" serves in ID order and consistent hashing derives the
	// server's points on the ring from it. 0 means index+1, except that
	// consistent hashing seeds the points of a server given to Add with
	// ID 0 with 0, as HAProxy 2.6 does for "add server" without "id".
	ID int
	// Weight is the user weight, 0..256 (HAProxy's uweight). 0 takes the
	// server out of rotation.
	Weight int
	// Ramp is the slow-start step in sixteenths of Weight (1..16), as
	// HAProxy's server_recalc_eweight computes it; 0 means full weight.
	// Only dynamic algorithms honour it.
	Ramp int
	// Backup servers serve only when no active server is usable.
	Backup bool
	// Usable is false while the server is down, stopping, draining or in
	// maintenance.
	Usable bool
	// MaxConn is the server's connection limit (0: none). A server serving
	// MaxConn connections is "full" and skipped.
	MaxConn int
}

// Key carries what a pick needs from the request.
type Key struct {
	// Hash is the request's hash for the hashing algorithms (source, uri,
	// url_param, hdr), computed with HashType.Sum, SourceHash and the
	// extraction helpers of this package.
	Hash uint32
	// HasHash is false when the hashed input is absent (no such parameter,
	// empty header): HAProxy then falls back to round robin.
	HasHash bool
	// Shard is the caller's shard (thread) number; vnswrr keeps one cursor
	// per shard. Others ignore it.
	Shard int
}

// Picker chooses servers. All methods are safe for concurrent use.
type Picker interface {
	// Pick returns the index of the server for a new connection, or -1
	// when no server is usable (or every one is full). avoid is the server
	// a retry or redispatch wants to leave (-1: none); it is returned only
	// when it is the sole candidate.
	Pick(k Key, avoid int) int
	// Update applies server i's new weight or state before the next pick.
	Update(i int, s Server) error
	// Add registers a server at index i, which must be unused (normally
	// the current count, as HAProxy appends dynamic servers).
	Add(i int, s Server) error
	// Remove forgets server i. Other indices do not move.
	Remove(i int) error
	// Take and Drop tell the picker that server i's served count (as
	// Config.Served reports it) has just gone up or down; call them for
	// every connection. leastconn requeues the server, consistent hashing
	// counts the backend's load for hash-balance-factor, the others
	// ignore them.
	Take(i int)
	Drop(i int)
	// Dynamic reports whether run-time weights other than 0 and the
	// initial weight, and dynamic servers, are accepted (HAProxy's
	// BE_LB_PROP_DYN).
	Dynamic() bool
	// Name is the algorithm's name: "roundrobin", "static-rr",
	// "leastconn", "first", "source", "uri", "url_param", "hdr",
	// "random", "vnswrr". For the algo column of "show stat", use
	// Algo.StatName, which prints "unknown" for random as HAProxy 2.6
	// does.
	Name() string
}

// Config describes one backend's balancing.
type Config struct {
	Balance Balance
	Hash    HashType
	// AllBackups: when no active server is usable, balance over all usable
	// backups instead of using only the first one ("option allbackups").
	AllBackups bool
	// HashBalanceFactor is "hash-balance-factor" (0: off, else > 100), for
	// consistent hashing.
	HashBalanceFactor int
	// Shards is the number of shards (threads) picking, for vnswrr's
	// per-shard cursors; 0 means 1.
	Shards  int
	Servers []Server
	// Served returns the number of connections server i is serving. It is
	// read during picks, possibly under the picker's lock, so it must be
	// cheap (an atomic load) and must not call the picker; nil means
	// nothing is ever full and leastconn sees no load.
	Served func(i int) int
}

// New builds the picker for c.
func New(c Config) (Picker, error) {
	for i := range c.Servers {
		if err := checkServer(&c.Servers[i], i); err != nil {
			return nil, err
		}
	}
	if c.Served == nil {
		c.Served = func(int) int { return 0 }
	}
	switch c.Balance.Algo {
	case RoundRobin:
		return newFWRR(c), nil
	case StaticRR:
		return newMap(c), nil
	case LeastConn:
		return newFWLC(c), nil
	case First:
		return newFAS(c), nil
	case Random:
		return newCHash(c), nil
	case Source, URI, URLParam, Hdr:
		if c.Hash.Consistent {
			return newCHash(c), nil
		}
		return newMap(c), nil
	case VNSWRR:
		return newVNSWRR(c), nil
	case SWRR:
		return newSWRR(c), nil
	}
	return nil, fmt.Errorf("lb: unknown algorithm %d", c.Balance.Algo)
}

func checkServer(s *Server, i int) error {
	if s.Weight < 0 || s.Weight > MaxWeight {
		return ErrWeight
	}
	if s.ID <= 0 {
		s.ID = i + 1
	}
	if s.Ramp < 0 || s.Ramp > WeightScale {
		s.Ramp = 0
	}
	return nil
}

// SlowStartRamp returns Server.Ramp for a server that came up elapsed ago
// under "slowstart period", as HAProxy's server_recalc_eweight counts it in
// whole seconds: (16 x elapsed + period) / period, or 0 (full weight) once
// the period is over or without slow start.
func SlowStartRamp(elapsed, period time.Duration) int {
	p, e := int64(period/time.Second), int64(elapsed/time.Second)
	if p <= 0 || e < 0 || e >= p {
		return 0
	}
	return int((WeightScale*e + p) / p)
}

// dynEWeight is HAProxy's effective weight for the dynamic algorithms.
func dynEWeight(s *Server) uint32 {
	w := WeightScale
	if s.Ramp > 0 {
		w = s.Ramp
	}
	return uint32(s.Weight * w)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// full reports whether a server with limit maxconn serving served is full.
func full(maxconn, served int) bool {
	return maxconn > 0 && served >= maxconn
}

// counter is an atomic int64 alone on its cache line, so that shards
// advancing their own cursors do not contend.
type counter struct {
	atomic.Int64
	_ [56]byte
}
