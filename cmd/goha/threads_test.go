package main

import "testing"

func TestSchedulerThreads(t *testing.T) {
	for _, tc := range []struct {
		nbthread, cpus int
		env            string
		want           int
	}{
		{0, 8, "", 0},  // nbthread not set: Go's default
		{1, 8, "", 1},  // fewer threads than CPUs: that many
		{3, 8, "", 3},  //
		{8, 8, "", 0},  // as many as CPUs: the default already
		{16, 8, "", 0}, // more shards than CPUs: no more threads than CPUs
		{1, 8, "4", 0}, // GOMAXPROCS set by the operator wins
		{2, 2, "", 0},  //
		{1, 1, "", 0},  //
	} {
		if got := schedulerThreads(tc.nbthread, tc.cpus, tc.env); got != tc.want {
			t.Errorf("schedulerThreads(%d, %d, %q) = %d, want %d", tc.nbthread, tc.cpus, tc.env, got, tc.want)
		}
	}
}
