// Package stream is goha's running process: what serves a configuration
// that core has built.
//
// A Process is made by New from a *core.Config, prepared (Prepare compiles
// rules, conditions, error files and log formats, reporting problems at
// their lines, as `goha -c` shows them), then run (Run opens the
// listeners, starts the health checks and the log forwarders, and installs
// the process as the configuration's core.Observer). Stop ends it.
//
// Files, by what they serve:
//
//	process.go   the Process, and its view of proxies and servers (the
//	             model's, embedded, with what serving them takes)
//	listen.go    listeners, accept loops, maxconn accounting, soft stop
//	http.go      the HTTP/1 exchange: rules, server choice, forwarding
//	tcp.go       tcp streams and their relays
//	backend.go   pickers, server slots, the queue, dialing, server TLS
//	rawio.go     socket reads and writes that keep the thread
//	idle.go      parking of idle keep-alive connections on epoll
//	rules.go     compiled http-request/http-response rules
//	log.go, logformat.go, record.go   access logs
//	checks.go    health and agent probes of the servers
//	wire.go      run-time changes from core (the observer)
//	sessions.go, streams.go, pools.go, capture.go   what the stats socket
//	             reads: a server's streams, every stream, the pools, errors
//
// The package imports core and the leaves below it; core never imports
// it. The process's state lives in its own fields: two processes in one
// program share nothing but the object pools.
package stream
