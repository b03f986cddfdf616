package runtime

import (
	"fmt"
	"goha/core/stream"
	"goha/ring"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"goha/core"
)

func init() {
	Register(
		&Command{Words: []string{"show", "info"}, Usage: "show info [desc|json|typed|float]*",
			Help: "report information about the running process", Run: cmdShowInfo},
		&Command{Words: []string{"show", "version"}, Usage: "show version", Help: "show version of the current process",
			Run: func(c *Ctx) { c.Msg(core.Version) }},
		&Command{Words: []string{"show", "startup-logs"}, Usage: "show startup-logs",
			Help: "report logs emitted during HAProxy startup", Level: LevelOperator, Run: cmdStartupLogs},
	)
}

type infoField struct {
	pos             int
	name, tags, typ string
	desc            string
}

// infoValue is one field's value; ok is false for fields HAProxy skips
// (empty ones such as description).
type infoValue struct {
	s  string
	n  int64
	f  float64
	ok bool
	fl bool
}

// infoValues computes show info's values for p, in infoFields order.
func infoValues(p *stream.Process, float bool) []infoValue {
	conf := p.Conf
	up := p.Uptime()
	var t ProcessTotals
	now := time.Now()
	g := p.GlobalCounters()
	t.CumConns = g.ConnTot.Load()
	t.CumReq = g.ReqTot.Load() // stats-socket streams; requests below
	t.MaxConnRate, t.MaxSessRate = g.ConnRateMax.Load(), g.SessRateMax.Load()
	// Bytes sent: the stats socket's (global Bout), HTTP/1 as on
	// the wire, a tcp stream's to its client and to its server.
	t.TotalBytesOut = g.Bout.Load()
	// Spliced bytes: a tcp stream's, and HTTP/1's in the h1 counters.
	spliced := p.SplicedBytesOut()
	for _, px := range conf.Proxies {
		spliced += px.FE.H1SplicedBytesOut.Load() + px.BE.H1SplicedBytesOut.Load()
		if px.IsFrontend() {
			t.TotalBytesOut += px.FE.H1BytesOut.Load()
			if px.Mode == core.ModeTCP {
				t.TotalBytesOut += px.FE.Bout.Load()
			}
		}
		if px.IsBackend() {
			t.TotalBytesOut += px.BE.H1BytesOut.Load()
			if px.Mode == core.ModeTCP {
				t.TotalBytesOut += px.BE.Bin.Load()
			}
		}
		if px.IsFrontend() {
			t.CurrConns += px.FE.Scur.Load()
			t.CumReq += px.FE.ReqTot.Load()
			t.ConnRate += px.FE.ConnR.Rate(now)
			t.SessRate += px.FE.SessRate.Rate(now)
			t.Listeners += int64(len(px.Binds))
		}
	}
	t.Listeners += int64(len(conf.Global.StatsSockets))
	d, r := conf.LogTotals()
	t.DroppedLogs, t.CumRecvLogs = int64(d), int64(r)
	poolAlloc, poolUsed := poolTotals(p)
	var poolFail int64 // Go allocations do not fail
	var rl syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	node := conf.Global.Node
	if node == "" {
		node, _ = os.Hostname()
	}
	stopping := int64(0)
	select {
	case <-p.Stopping():
		stopping = 1
	default:
	}
	secs := int64(up / time.Second)
	pipesUsed, pipesFree := stream.PipeStats()
	compIn, compOut := stream.CompressBps(now)
	vals := map[int]infoValue{
		0: {s: "HAProxy"}, 1: {s: core.Version}, 2: {s: core.ReleaseDate},
		3: {n: int64(p.Threads)}, 4: {n: 1}, 5: {n: 1}, 6: {n: int64(p.PID)},
		7:  {s: fmt.Sprintf("%dd %dh%02dm%02ds", secs/86400, secs/3600%24, secs/60%60, secs%60)},
		8:  {n: secs},
		10: {n: poolAlloc >> 20}, 11: {n: poolUsed >> 20}, 12: {n: poolFail},
		13: {n: int64(rl.Cur)}, 14: {n: int64(rl.Cur)},
		15: {n: int64(conf.GlobalMaxConn())}, 16: {n: int64(conf.HardMaxConn())},
		17: {n: t.CurrConns}, 18: {n: t.CumConns}, 19: {n: t.CumReq},
		24: {n: pipesUsed}, 25: {n: pipesFree},
		26: {n: t.ConnRate}, 27: {n: int64(conf.RateLimit(core.RateConnections))}, 28: {n: t.MaxConnRate},
		29: {n: t.SessRate}, 30: {n: int64(conf.RateLimit(core.RateSessions))}, 31: {n: t.MaxSessRate},
		33: {n: int64(conf.RateLimit(core.RateSSLSessions))},
		42: {n: compIn}, 43: {n: compOut},
		44: {n: int64(conf.RateLimit(core.RateCompression)) * 1024},
		47: {n: t.Tasks}, 49: {n: 100}, 50: {s: node}, 51: {s: conf.Global.Description},
		52: {n: stopping}, 53: {n: t.Jobs}, 55: {n: t.Listeners},
		58: {n: t.DroppedLogs}, 61: {n: t.TotalBytesOut}, 62: {n: spliced}, 63: {n: t.BytesOutRate},
		65: {n: t.CumRecvLogs}, 66: {s: core.Version},
		68: {n: poolAlloc}, 69: {n: poolUsed}, 70: {n: p.Start.Unix()}, 71: {s: "0"},
	}
	if float {
		vals[8] = infoValue{f: up.Seconds(), fl: true}
	}
	out := make([]infoValue, len(infoFields))
	for i, f := range infoFields {
		v := vals[f.pos]
		v.ok = !(f.typ == "str" && v.s == "")
		out[i] = v
	}
	return out
}

func (v infoValue) text() string {
	switch {
	case v.fl:
		return strconv.FormatFloat(v.f, 'f', 6, 64)
	case v.s != "":
		return v.s
	}
	return strconv.FormatInt(v.n, 10)
}

func cmdShowInfo(c *Ctx) {
	var typed, json, desc, float bool
	for _, a := range c.Args[2:] {
		switch a {
		case "typed":
			typed = true
		case "json":
			json = true
		case "desc":
			desc = true
		case "float":
			float = true
		}
	}
	vals := infoValues(c.Proc, float)
	b := make([]byte, 0, 4096)
	if json {
		b = append(b, '[')
	}
	first := true
	for i, f := range infoFields {
		v := vals[i]
		if !v.ok {
			continue
		}
		switch {
		case json:
			if !first {
				b = append(b, ',')
			}
			first = false
			typ := f.typ
			if v.fl {
				typ = "flt"
			}
			origin, nature, scope := stream.JSONTagNames(f.tags)
			b = append(b, `{"field":{"pos":`...)
			b = strconv.AppendInt(b, int64(f.pos), 10)
			b = append(b, `,"name":`...)
			b = stream.AppendJSONString(b, f.name)
			b = append(b, `},"processNum":1,"tags":{"origin":"`...)
			b = append(b, origin...)
			b = append(b, `","nature":"`...)
			b = append(b, nature...)
			b = append(b, `","scope":"`...)
			b = append(b, scope...)
			b = append(b, `"},"value":{"type":"`...)
			b = append(b, typ...)
			b = append(b, `","value":`...)
			switch {
			case v.fl:
				b = append(b, v.text()...)
			case f.typ == "str":
				b = stream.AppendJSONString(b, v.s)
			default:
				b = strconv.AppendInt(b, v.n, 10)
			}
			b = append(b, "}}"...)
		case typed:
			typ := f.typ
			if v.fl {
				typ = "flt"
			}
			b = fmt.Appendf(b, "%d.%s.1:%s:%s:%s", f.pos, f.name, f.tags, typ, v.text())
			if desc {
				b = fmt.Appendf(b, ":%q", f.desc)
			}
			b = append(b, '\n')
		default:
			b = append(b, f.name...)
			b = append(b, ": "...)
			b = append(b, v.text()...)
			if desc {
				b = append(b, ":\""...)
				b = append(b, f.desc...)
				b = append(b, '"')
			}
			b = append(b, '\n')
		}
	}
	if json {
		b = append(b, "]\n"...)
	}
	c.Write(b)
}

func cmdStartupLogs(c *Ctx) {
	if c.Proc.StartupLogs == nil {
		return
	}
	var b strings.Builder
	c.Proc.StartupLogs.Dump(&b, false, false, ring.FrameLF, nil)
	txt := b.String()
	if txt != "" && txt[len(txt)-1] != '\n' {
		txt += "\n"
	}
	c.WriteString(txt)
}
