package stick

import (
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkEntryMemory reports the live heap one entry takes: a string key
// of about 20 bytes with http_req_cnt and http_req_rate(10s), in a shared
// table (as scripts/bench-peers.sh fills one), after a collection. A
// process's RSS per entry is higher by the heap's headroom (GOGC).
func BenchmarkEntryMemory(b *testing.B) {
	const n = 100000
	var perEntry float64
	for i := 0; i < b.N; i++ {
		t := New(Config{Name: "t", Key: KeyString, KeyLen: 33, Size: n, Expire: 60000, Store: []Stored{
			{Type: HTTPReqCnt, N: 1}, {Type: HTTPReqRate, N: 1, Period: 10000}}})
		t.EnableSync()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		key := make([]byte, 0, 32)
		for k := 0; k < n; k++ {
			key = strconv.AppendInt(append(key[:0], "key-"...), int64(k)*7919+100000000000, 10)
			e := t.Get(key, t0)
			t.Add(e, HTTPReqCnt, 0, 1, t0)
			t.Release(e, t0, true)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perEntry = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(t)
	}
	b.ReportMetric(perEntry, "B/entry")
}
