package lb

import "sync"

// swrr is nginx's smooth weighted round robin (ngx_http_upstream_get_peer):
// every pick adds each usable server's weight to its current weight, takes
// the first highest and subtracts the total from it. It is the reference
// sequence vnswrr precomputes, and the baseline of the benchmarks.
//
// Cost: O(n) per pick under one mutex.
type swrr struct {
	served func(int) int

	mu sync.Mutex // guards following fields
	ss servers
	cw []int
}

func newSWRR(c Config) *swrr {
	s := &swrr{served: c.Served}
	s.ss.init(&c)
	s.cw = make([]int, len(s.ss.list))
	return s
}

func (s *swrr) Name() string  { return SWRR.String() }
func (s *swrr) Dynamic() bool { return true }
func (s *swrr) Take(int)      {}
func (s *swrr) Drop(int)      {}

func (s *swrr) Pick(_ Key, avoid int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.ss.list {
		if !s.ss.list[i].Backup && s.ss.usable(i) {
			return s.pickGroup(false, avoid)
		}
	}
	if !s.ss.allBackups {
		for i := range s.ss.list {
			if s.ss.list[i].Backup && s.ss.usable(i) {
				return i
			}
		}
		return -1
	}
	return s.pickGroup(true, avoid)
}

func (s *swrr) pickGroup(backup bool, avoid int) int {
	best, tot := -1, 0
	for i := range s.ss.list {
		sv := &s.ss.list[i]
		if sv.Backup != backup || !s.ss.usable(i) || i == avoid || full(sv.MaxConn, s.served(i)) {
			continue
		}
		s.cw[i] += sv.Weight
		tot += sv.Weight
		if best < 0 || s.cw[i] > s.cw[best] {
			best = i
		}
	}
	if best >= 0 {
		s.cw[best] -= tot
	} else if avoid >= 0 && avoid < len(s.ss.list) && s.ss.list[avoid].Backup == backup &&
		s.ss.usable(avoid) && !full(s.ss.list[avoid].MaxConn, s.served(avoid)) {
		return avoid
	}
	return best
}

func (s *swrr) Update(i int, sv Server) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ss.update(i, sv)
}

func (s *swrr) Add(i int, sv Server) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ss.add(i, sv); err != nil {
		return err
	}
	for len(s.cw) < len(s.ss.list) {
		s.cw = append(s.cw, 0)
	}
	return nil
}

func (s *swrr) Remove(i int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ss.remove(i); err != nil {
		return err
	}
	s.cw[i] = 0
	return nil
}
