package stream

import (
	"goha/core"
	"goha/core/check"
	"goha/core/http1"
	"goha/core/pool"
)

// proxy is a proxy as the running process serves it: the model, and what
// serving it takes that configuration does not say. The model's fields and
// methods are reached through the embedding; what is below belongs to the
// process and lives as long as it.
type proxy struct {
	*core.Proxy

	// Frontend side, compiled by Prepare.
	useBE     []useBackendRule
	defBE     *proxy
	reqRules  []*httpRule
	respRules []*httpRule
	errReply  map[int]*http1.Reply
	logFmt    *logFormat // nil: the httplog or tcplog fast paths

	errs [2]*ErrorCapture // last request and response errors; Process.capMu guards them

	rt *backendRT // backend side: nil for a frontend only, or before Run
}

// server is a server as the running process serves it.
type server struct {
	*core.Server
	be       *proxy
	idx      int                    // index in the backend's picker
	pool     *pool.Server[*srvConn] // idle connections; nil until Run
	sessions sessionSet             // client connections of the streams being served
	chk      *check.Server          // health and agent checks; nil when unchecked
}
