package stick

// A rate is three values: the date its current period started (tick), the
// events counted in it (curr) and in the period before (prev). It behaves
// as HAProxy's freq_ctr over a period: the reported rate is the current
// count plus the share of the previous period's that a window of one
// period ending now still covers.

// addRate counts n events at now.
func addRate(r []uint64, period int64, n uint64, now int64) {
	tick := int64(r[0])
	if now-tick < period {
		r[1] += n
		return
	}
	// A new period: the current one becomes the previous one, unless
	// more than one has gone by, and the new one starts now when the
	// counter was idle that long.
	r[2], r[1] = r[1], n
	tick += period
	if now-tick >= period {
		r[2] = 0
		tick = now
	}
	r[0] = uint64(tick)
}

// readRate returns the events over the last period at now. As HAProxy's
// read_freq_ctr_period, a previous count of one or none with no event in
// the current period reads as that count, not as a fraction of it.
func readRate(r []uint64, period int64, now int64) uint64 {
	if period <= 0 {
		return 0
	}
	tick, curr, prev := int64(r[0]), r[1], r[2]
	remain := tick + period - now
	if remain < 0 {
		remain += period
		if remain >= 0 {
			prev = curr
		} else {
			prev = 0
		}
		curr = 0
	}
	if curr == 0 && prev <= 1 {
		return prev
	}
	return (prev*uint64(remain) + curr*uint64(period)) / uint64(period)
}
