package stream

import (
	"io"
	"sync"
)

// Sessions of a server, so that `shutdown sessions server` can end them.
// One set per shard, each with its own lock, so that requests of different
// threads never contend here.
type sessionSet struct {
	shards []sessShard // sized once, before the process serves
}

// sessShard lists one thread's streams on a server. The list is
// intrusive (the links live in the stream's connection state) so that a
// request adds and removes its stream without hashing or allocating.
type sessShard struct {
	mu   sync.Mutex // guards the list and every listed link's prev and next
	head *sessLink
	_    [48]byte // keeps shards on separate cache lines
}

// sessLink is a stream's place in its server's session list.
type sessLink struct {
	c          io.Closer
	sh         *sessShard // the list it is on; nil when on none
	prev, next *sessLink
}

func (ss *sessionSet) init(threads int) {
	if len(ss.shards) == 0 {
		ss.shards = make([]sessShard, threads)
	}
}

func (ss *sessionSet) shard(n int) *sessShard {
	if len(ss.shards) == 0 {
		return nil
	}
	return &ss.shards[n%len(ss.shards)]
}

// track lists l among the server's streams; c is what kill closes
// to kill the stream (see hconn.Close for an HTTP exchange).
func (ss *sessionSet) track(shard int, l *sessLink, c io.Closer) {
	sh := ss.shard(shard)
	if sh == nil {
		return
	}
	l.c, l.sh, l.prev = c, sh, nil
	sh.mu.Lock()
	l.next = sh.head
	if sh.head != nil {
		sh.head.prev = l
	}
	sh.head = l
	sh.mu.Unlock()
}

// untrackSession takes l off the list it is on, if any.
func untrackSession(l *sessLink) {
	sh := l.sh
	if sh == nil {
		return
	}
	sh.mu.Lock()
	if l.prev != nil {
		l.prev.next = l.next
	} else {
		sh.head = l.next
	}
	if l.next != nil {
		l.next.prev = l.prev
	}
	sh.mu.Unlock()
	l.c, l.sh, l.prev, l.next = nil, nil, nil, nil
}

// kill kills every stream the server serves: a tcp stream's client
// connection is closed, an http exchange is cut on its server side (see
// hconn.Close). The kills run under the list's lock: a stream leaves the
// list before its connection state serves anything else, so a kill never
// reaches the next exchange on the same client connection. Neither kind
// of close waits.
func (ss *sessionSet) kill() {
	for i := range ss.shards {
		sh := &ss.shards[i]
		sh.mu.Lock()
		for l := sh.head; l != nil; l = l.next {
			l.c.Close()
		}
		sh.mu.Unlock()
	}
}
