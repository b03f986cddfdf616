package stream

import "goha/core/sample"

// ProcVars are the process's variables (scope proc), which the global
// section's set-var lines set and `get var` reads.
func (proc *Process) ProcVars() *sample.ProcVars { return proc.procVars }
