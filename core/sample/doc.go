// Package sample evaluates what rules look at: ACL criteria, if/unless
// conditions and the %[sample] expressions of http-request and
// http-response rules. Compiling happens once, while the configuration is
// read (so that errors carry their line); evaluation reads the message head
// in place and allocates nothing.
//
// It is the seed of goha's one sample engine: fetches and converters will
// be registered here next to their implementation, and ACLs, log formats,
// rules, use_backend and checks will all evaluate through it. It imports
// only the standard library and core/http1, and knows the running process
// only through the Request it is handed.
package sample
