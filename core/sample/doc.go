// Package sample is goha's one sample engine: what ACLs, conditions, rules
// and log-format expressions evaluate.
//
// A sample (types.go) has one of HAProxy's types (bool, sint, ipv4, ipv6,
// str, bin, meth) and is cast between them as HAProxy casts. An
// expression (expr.go) is a fetch with its arguments followed by
// converters, each registered in a table (registry.go) next to its
// implementation (fetch_*.go, conv_*.go) with its argument count, input and
// output types, and an argument check that compiles the arguments once, at
// configuration time, so that errors carry their line. An ACL term
// (acl.go) is an expression, a matching method (str, beg, end, sub, reg,
// dir, dom, len, int, ip, bool, found, bin) and patterns, from the line or
// from files; conditions combine terms, named ACLs and HAProxy's predefined
// ones. A log-format string (lf.go) is text and %[expr] blocks. Variables
// (vars.go) hold what set-var stores, per scope.
//
// Evaluation reads the message head in place and builds converted values
// in the Request's scratch space, which it keeps between messages: a warm
// Request allocates nothing. A fetch or converter that cannot produce a
// value (a missing header, a failed cast) gives no sample; it never fails
// the stream. Converters never change their input's bytes in place: they
// may point into the message or into a variable.
//
// The package imports only the standard library, the leaves core/http1,
// core/diag and core/tlsconf (OpenSSL's cipher names), and
// github.com/cespare/xxhash (xxh64); it knows the running process only
// through the Request and the small optional interfaces its Stream may
// implement (ProxyInfo, TLSInfo, CaptureInfo, ...). Health checks
// (core/check) evaluate with it too.
package sample
