package main

import goruntime "runtime"

// schedulerThreads is the GOMAXPROCS that a configuration's nbthread asks
// for, or 0 to leave the Go default (every CPU the process may use).
// HAProxy runs nbthread threads, so `nbthread 1` on a larger machine uses
// one CPU; goha then gives the Go scheduler one thread too. It never gives
// more than the default: nbthread above the CPU count still makes that
// many shards (pools, takeover accounting), but more scheduler threads than
// CPUs would only add switches. GOMAXPROCS in the environment wins, as the
// operator's explicit choice.
func schedulerThreads(nbthread, cpus int, env string) int {
	if nbthread <= 0 || env != "" || nbthread >= cpus {
		return 0
	}
	return nbthread
}

// setSchedulerThreads applies nbthread to GOMAXPROCS and, unless the
// operator set GOMAXPROCS, starts the governor (governor.go) with that
// as its ceiling. report is told of the governor's changes.
func setSchedulerThreads(nbthread int, env string, report func(from, to int, used, idle float64)) (stop func()) {
	if n := schedulerThreads(nbthread, goruntime.GOMAXPROCS(0), env); n > 0 {
		goruntime.GOMAXPROCS(n)
	}
	if env != "" {
		return func() {}
	}
	return startGovernor(goruntime.GOMAXPROCS(0), report)
}
