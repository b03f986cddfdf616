package main

import (
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile to $GOHA_CPUPROFILE until the process
// stops: a debugging aid for the request path, off unless asked for.
func startProfile() func() {
	path := os.Getenv("GOHA_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
