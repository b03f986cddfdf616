package main

import "goha/core"

// startRuntime opens the stats sockets of the configuration.
var startRuntime = func(proc *core.Process) error { return nil }
