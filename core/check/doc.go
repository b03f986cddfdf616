// Package check is goha's health-check engine, modelled on HAProxy 2.6.
//
// Every check is a tcp-check ruleset: an ordered list of connect, send and
// expect rules run against one server address. The protocol checks (redis,
// pgsql, mysql, smtp, ldap, ssl-hello) are shared rulesets built once and
// used, by pointer, by every backend that asks for them; what differs between
// backends (the smtp greeting, the database user) travels in preset check
// variables, not in the rules. The agent check is the shared ruleset
// "*agent-check": it sends the agent string and parses the reply with a
// custom expect.
//
// Layout:
//
//	status.go   check status codes and their texts (L4OK, L7STS, ...)
//	sample.go   the small sample/log-format language used by rules
//	rules.go    rule and ruleset types
//	parse.go    tcp-check / http-check rule parsers
//	backend.go  per-backend check configuration (options, inheritance, finalize)
//	protocols.go the shared protocol rulesets and their custom expects
//	spop.go     spop-check: the SPOP hello frames and their decoder
//	socks4.go   the SOCKS4 handshake of checks (and of server traffic)
//	exec.go     the executor: one probe, one Outcome
//	httpresp.go HTTP/1.x response parsing and http-check expects
//	agent.go    agent reply parsing
//	health.go   rise/fall state machine, intervals, observe, Reporter
//	server.go   server check keywords (ServerOptions)
//	logtext.go  HAProxy's log line and stats texts
//	sched.go    per-server probing goroutines
//
// Concurrency: a Server's mutex guards the state of both its checks. Each
// configured check has one goroutine in the Scheduler, so at most one probe
// per check is in flight; a probe holds no lock while it does I/O.
//
// The package imports nothing of goha: servers are reached through the
// Reporter interface, and configuration arrives as already tokenized words.
// Configuration must be complete (options may follow server lines) before
// Backend.Finalize runs; checks are initialised after that.
package check
