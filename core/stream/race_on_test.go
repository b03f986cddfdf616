//go:build race

package stream

// raceEnabled says that the race detector is on: see its uses.
const raceEnabled = true
