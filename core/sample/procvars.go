package sample

import "sync"

// ProcVars are the process's variables (scope proc), shared by every
// stream; mu guards m. As in HAProxy, a process variable exists from the
// moment the configuration (or a runtime command) names it, without a
// value until one is set, and unsetting it keeps it: `ifexists` holds for
// every process variable the configuration names.
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
	if ok && v.set {
		v.sample(s)
		return true
	}
	return false
}

func (p *ProcVars) setCond(name string, s *Sample, c VarCond) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]varValue{}
	}
	v := p.m[name]
	ok := v.condSet(s, c, true)
	p.m[name] = v
	return ok
}

func (p *ProcVars) unset(name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	if _, ok := p.m[name]; ok {
		p.m[name] = varValue{exists: true}
	}
	p.mu.Unlock()
}

// Declare makes the variable exist, without a value if it has none.
func (p *ProcVars) Declare(name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.m == nil {
		p.m = map[string]varValue{}
	}
	if v := p.m[name]; !v.exists {
		p.m[name] = varValue{exists: true}
	}
	p.mu.Unlock()
}

// Get reads the process variable name into s.
func (p *ProcVars) Get(name string, s *Sample) bool { return p.get(name, s) }
