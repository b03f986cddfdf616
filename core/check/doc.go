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
// Rules' sample expressions and log-format strings (send-lf, expect -lf,
// set-var(check.x), status-code, on-success/on-error, http-check send hdr,
// uri-lf and body-lf) compile and evaluate with goha's one sample engine,
// core/sample: a probe hands it a Request carrying the check's variables
// (scope check), what the server sent since the last send (res.payload,
// res.len, res.payload_lv), for http-check the parsed response head
// (res.hdr, res.fhdr, status), and the backend and server names. Fetches
// that need a request are refused, as HAProxy refuses them in checks.
//
// Layout:
//
//	status.go   check status codes and their texts (L4OK, L7STS, ...)
//	eval.go     what rules' expressions read: the probe as core/sample sees it
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
// Of goha, the package imports only the leaves core/sample and core/http1:
// servers are reached through the Reporter interface, and configuration
// arrives as already tokenized words.
// Configuration must be complete (options may follow server lines) before
// Backend.Finalize runs; checks are initialised after that.
package check
