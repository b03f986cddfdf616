package pool

import "time"

// Stats is a snapshot of a server pool's counters, read without locks
// (each value is exact, the set of them is not taken atomically).
//
// `show servers conn` columns and `show stat` fields map as follows:
//
//	purge_delay   PurgeDelay (ms)
//	used_cur      Used         used_conn_cur
//	used_max      UsedMax
//	need_est      NeedEst      need_conn_est
//	unsafe_nb     IdleNb       idle_conn_cur
//	safe_nb       SafeNb       safe_conn_cur
//	idle_lim      IdleLim      src_ilim (empty when -1)
//	idle_cur      IdleCur      srv_icur
//	idle_per_thr  IdlePerThread
type Stats struct {
	PurgeDelay    time.Duration
	Used          int64
	UsedMax       int64
	NeedEst       int64
	IdleNb        int64
	SafeNb        int64
	IdleLim       int
	IdleCur       int64
	IdlePerThread []int64

	// Reused counts connections handed out by Get, Connects those
	// registered by Track: reuse rate = Reused/(Reused+Connects).
	Reused, Connects uint64
	// Closed counts pool-side closes by cause.
	Closed Closed
}

// Closed counts connections the pool closed, by cause.
type Closed struct {
	Purge   uint64 // periodic purge
	Flush   uint64 // CloseAll/Delete, or released after one
	Release uint64 // refused by the keep rule or a cap
	Dead    uint64 // idle timeout, failed liveness probe, or not quiet (Quieter)
	FD      uint64 // KillOne under descriptor pressure
}

// Stats returns the server's counters. IdlePerThread is a new slice.
func (s *Server[C]) Stats() Stats {
	st := Stats{
		PurgeDelay:    s.st.PurgeDelay,
		Used:          s.used.Load(),
		UsedMax:       s.usedMax.Load(),
		NeedEst:       s.needEst.Load(),
		IdleNb:        s.idleNb.Load(),
		SafeNb:        s.safeNb.Load(),
		IdleLim:       s.st.MaxConn,
		IdleCur:       s.idle.Load(),
		IdlePerThread: make([]int64, len(s.shards)),
		Reused:        s.reused.Load(),
		Connects:      s.connects.Load(),
		Closed: Closed{
			Purge:   s.killPurge.Load(),
			Flush:   s.killFlush.Load(),
			Release: s.killRelease.Load(),
			Dead:    s.killDead.Load(),
			FD:      s.killFD.Load(),
		},
	}
	for i := range s.shards {
		st.IdlePerThread[i] = int64(s.shards[i].count())
	}
	return st
}
