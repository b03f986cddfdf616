// Package runtime serves goha's stats sockets: HAProxy 2.6's runtime API,
// byte for byte where tools depend on it, with HAProxy 3.x's rule that
// every reply ends in exactly one empty line.
//
// It shadows the standard library's runtime package; import that one as
// goruntime where both are needed.
//
// Layout:
//
//	listen.go    sockets (UNIX, TCP, fd@, abns@), stats maxconn, Serve/Close
//	session.go   one connection: lines, `;`, escapes, payloads, prompt mode,
//	             severity prefixes, timeouts
//	registry.go  Command, Register, longest-prefix lookup, help and
//	             "did you mean" suggestions (core/diag fingerprints)
//	cli.go, info.go, stats.go, server.go, proxy.go, activity.go, ring.go
//	             the commands, each file registering its table in init()
//	statefile.go server-state-file loading at start
//	process.go   what the commands read from the running process (pools,
//	             checks, captured errors), in the shapes they print
//
// A command changes core's model only through core's methods
// (core/admin.go), which update the atomics the data path reads and then
// tell the configuration's observer, the running process (core/stream),
// so that a change has reached the load balancer, the idle-connection
// pools and the checks when the command replies. What only the running
// process knows (its streams, pools, check results) is read from it
// directly, through Ctx.Proc.
//
// Concurrency: each connection is served by one goroutine that owns its
// session. Commands may run concurrently on different connections; they
// read core's atomics and call core's methods, which serialise per server.
package runtime
