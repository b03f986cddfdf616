package sample

import "sync"

// ProcVars are the process's variables (scope proc), shared by every
// stream; mu guards m.
type ProcVars struct {
	mu sync.RWMutex
	m  map[string]varValue
}

func (p *ProcVars) get(name string, s *Sample) bool {
	if p == nil {
		return false
	}
	p.mu.RLock()
	v, ok := p.m[name]
	p.mu.RUnlock()
	if ok {
		*s = Sample{T: v.t, I: v.i, B: v.b, IP: v.ip}
	}
	return ok
}

func (p *ProcVars) set(name string, s *Sample) {
	if p == nil {
		return
	}
	// A new slice each time: readers may still hold the old bytes.
	v := varValue{t: s.T, i: s.I, ip: s.IP, b: append([]byte(nil), s.B...)}
	p.mu.Lock()
	if p.m == nil {
		p.m = map[string]varValue{}
	}
	p.m[name] = v
	p.mu.Unlock()
}

func (p *ProcVars) unset(name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	delete(p.m, name)
	p.mu.Unlock()
}

// Set is set-var in the global section: a value known at start-up.
func (p *ProcVars) Set(name string, s *Sample) { p.set(name, s) }

// Get reads the process variable name into s.
func (p *ProcVars) Get(name string, s *Sample) bool { return p.get(name, s) }
