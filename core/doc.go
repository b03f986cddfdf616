// Package core is goha's model: proxies, servers, binds and global
// settings as the configuration describes them, the keyword tables that
// build them from HAProxy's sections (Build), the counters, TLS building,
// and the admin operations the stats socket performs on the model
// (admin.go), each of which tells the configuration's Observer (the
// running process, core/stream) before it returns.
//
// It imports only the leaves (core/config, core/diag, core/check,
// core/lb, core/pool, core/http1, core/sample, core/tlsconf, core/freq
// and ring); nothing that runs traffic lives here.
package core
