package lb

import "testing"

// FuzzOps drives every algorithm with a byte-coded series of updates, adds,
// removes, takes, drops and picks. A pick must return -1 or a server that is
// present, usable and not full; nothing may panic.
func FuzzOps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte{3, 0, 9, 3, 1, 0, 3, 2, 9, 9, 9, 9})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) < 2 {
			return
		}
		algo := allAlgos[int(ops[0])%len(allAlgos)]
		hash := HashType{Consistent: ops[1]&1 != 0}
		served := map[int]int{}
		ss := weights(1, 2, 3)
		ss[2].Backup = true
		present := map[int]Server{0: ss[0], 1: ss[1], 2: ss[2]}
		p := mustNew(t, Config{Balance: algo, Hash: hash, AllBackups: ops[1]&2 != 0, Servers: ss,
			Served: func(i int) int { return served[i] }, Shards: 3})
		for k := 2; k+2 < len(ops); k += 3 {
			op, i, v := ops[k]%6, int(ops[k+1]%6), ops[k+2]
			s := Server{Weight: int(v) % 300, Usable: v&1 != 0, Backup: v&2 != 0, MaxConn: int(v>>5) % 3}
			switch op {
			case 0:
				if p.Update(i, s) == nil {
					if s.Weight > MaxWeight {
						t.Fatalf("weight %d accepted", s.Weight)
					}
					present[i] = s
				}
			case 1:
				if p.Add(i, s) == nil {
					present[i] = s
				}
			case 2:
				if p.Remove(i) == nil {
					delete(present, i)
				}
			case 3:
				served[i]++
				p.Take(i)
			case 4:
				if served[i] > 0 {
					served[i]--
					p.Drop(i)
				}
			case 5:
				got := p.Pick(Key{Hash: uint32(v) * 2654435761, HasHash: v&4 != 0, Shard: int(v)}, i-1)
				if got < 0 {
					continue
				}
				s, ok := present[got]
				if !ok || !s.Usable || s.Weight == 0 {
					t.Fatalf("%v picked %d: %+v present=%v", algo.Algo, got, s, ok)
				}
			}
		}
	})
}
