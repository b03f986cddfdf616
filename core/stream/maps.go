package stream

import (
	"goha/core/diag"
	"goha/core/sample"
)

// Maps is the process's map files and ACL pattern references, which the
// runtime commands (show map, add acl, ...) read and change.
func (proc *Process) Maps() *sample.MapSet { return proc.env.Maps }

// envAt is the process's compile environment for the line at pos: the
// map and pattern references created while compiling it are named after
// it, as HAProxy names them.
func (proc *Process) envAt(pos diag.Pos) *sample.Env {
	e := *proc.env
	e.Pos = pos
	return &e
}
