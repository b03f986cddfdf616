package stream

import goruntime "runtime"

// defaultThreads is HAProxy's default nbthread: the CPUs the process may use.
func defaultThreads() int { return goruntime.GOMAXPROCS(0) }
