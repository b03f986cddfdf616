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
//	exec.go     the executor: one probe, one Outcome
//	agent.go    agent reply parsing
//	health.go   rise/fall state machine, intervals, observe
//	logtext.go  HAProxy's log line texts
//	sched.go    per-server probing goroutines
//
// The package imports nothing of goha: servers are reached through the
// Reporter interface, and configuration arrives as already tokenized words.
// Configuration must be complete (options may follow server lines) before
// Backend.Finalize runs; checks are initialised after that.
package check
