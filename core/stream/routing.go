package stream

import (
	"fmt"
	"goha/core"
	"goha/core/diag"
	"goha/core/http1"
	"goha/core/sample"
	"net"
	"time"
)

// useServerRule is a compiled use-server rule: a fixed server, or a
// log-format string naming one per request.
type useServerRule struct {
	cond *sample.Cond
	srv  *core.Server
	name *sample.Expr // dynamic rules
}

// compileRouting compiles a proxy's redirect lines, monitor fail
// conditions, dynamic use_backend names and use-server rules.
func (proc *Process) compileRouting(p *proxy, named map[string][]*sample.Term, d *diag.Collector) {
	for _, r := range p.Redirects {
		rule, err := compileRule(proc.envAt(r.Pos), r.Words, named, false)
		if err != nil {
			d.Alertf(r.Pos, "error detected in %s '%s' while parsing redirect rule : %v", core.CapName(p.Cap), p.Name, err)
			continue
		}
		p.redirRules = append(p.redirRules, rule)
	}
	for _, m := range p.MonitorFail {
		c, err := sample.CompileCond(proc.envAt(m.Pos), m.Words, named)
		if err != nil {
			d.Alertf(m.Pos, "error detected while parsing a 'monitor fail' condition : %v.", err)
			continue
		}
		p.monFail = append(p.monFail, c)
	}
	for _, us := range p.UseServers {
		c, err := sample.CompileCond(proc.envAt(us.Pos), us.Cond, named)
		if err != nil {
			d.Alertf(us.Pos, "error detected while parsing switching rule : %v.", err)
			continue
		}
		r := useServerRule{cond: c, srv: us.Target}
		if us.Dynamic {
			if r.name, err = sample.CompileLF(proc.envAt(us.Pos), us.Name); err != nil {
				d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Parsing [%s:%d]; use-server rule failed to parse log-format '%s' : %v.", us.Pos.File, us.Pos.Line, us.Name, err)})
				continue
			}
		} else if us.Target == nil {
			continue
		}
		p.useSrv = append(p.useSrv, r)
	}
}

// compileDynamicBackend compiles the name of a use_backend rule that is a
// log-format string.
func (proc *Process) compileDynamicBackend(ub *core.UseBackend, d *diag.Collector) *sample.Expr {
	e, err := sample.CompileLF(proc.envAt(ub.Pos), ub.Name)
	if err != nil {
		d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Parsing [%s:%d]: failed to parse use_backend rule '%s' : %v.", ub.Pos.File, ub.Pos.Line, ub.Name, err)})
		return nil
	}
	return e
}

// switchBackend runs the frontend's use_backend rules. The first rule
// whose condition holds decides; a dynamic name that names no backend
// ends the rules on the default backend, as in HAProxy.
func (proc *Process) switchBackend(fe *proxy, hc *hconn) *proxy {
	for _, r := range fe.useBE {
		if !r.cond.Eval(&hc.view) {
			continue
		}
		if r.name == nil {
			return r.be
		}
		hc.scratch = r.name.AppendTo(hc.scratch[:0], &hc.view)
		if be := proc.backendNamed(hc.scratch); be != nil {
			return be
		}
		break
	}
	return fe.defBE
}

// backendNamed finds the backend called name, as use_backend resolves a
// dynamic name.
func (proc *Process) backendNamed(name []byte) *proxy {
	for _, p := range proc.proxies {
		if p.IsBackend() && p.Name == string(name) && !p.Disabled {
			return p
		}
	}
	return nil
}

// useServer runs the backend's use-server rules: the first whose
// condition holds and whose server may take the request (it is not down,
// or option persist is set) decides. A dynamic name that names no server
// ends the rules, leaving the choice to the load balancer.
func (hc *hconn) useServer(be *proxy) *server {
	for _, r := range be.useSrv {
		if !r.cond.Eval(&hc.view) {
			continue
		}
		var s *server
		if r.name != nil {
			hc.scratch = r.name.AppendTo(hc.scratch[:0], &hc.view)
			for _, c := range *be.rt.byIdx.Load() {
				if c != nil && c.Name == string(hc.scratch) {
					s = c
					break
				}
			}
		} else {
			s = be.rt.find(r.srv)
		}
		if s == nil {
			return nil
		}
		if s.OpState() != core.OpStopped || be.Persist {
			return s
		}
	}
	return nil
}

// isMonitorURI says whether uri is the monitor-uri m: as in HAProxy, an m
// that begins with '/' matches the path (an absolute-form request's
// included), another the whole URI.
func isMonitorURI(m string, uri []byte) bool {
	if string(uri) == m {
		return true
	}
	if m[0] != '/' {
		return false
	}
	pre, _, _ := splitURI(uri)
	return string(uri[len(pre):]) == m
}

// monitor answers a request for the frontend's monitor-uri: 200, or 503
// when a monitor fail condition holds, as the proxy's error pages for
// those codes say. Like HAProxy, it logs nothing.
func (proc *Process) monitor(fe *proxy, c net.Conn, cbuf *http1.Buffer, hc *hconn, hlen int) (keep bool) {
	si := &hc.si
	status := 200
	for _, cond := range fe.monFail {
		if cond.Eval(&hc.view) {
			status = 503
			break
		}
	}
	fe.FE.Intercepted.Add(1)
	si.status, si.term = status, [2]byte{'L', 'R'}
	mode := hc.replyConn(false)
	keep = mode != http1.ConnClose
	if keep {
		cbuf.Discard(hlen)
	}
	b, n, _ := proc.errorReplyBytes(fe, hc, status, mode)
	si.bytesOut = n
	if b != nil {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		c.Write(b)
		c.SetWriteDeadline(time.Time{})
	}
	si.countLocalReply(status)
	return keep
}
