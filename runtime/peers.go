package runtime

import (
	"fmt"
	"strings"
	"time"

	"goha/core/peers"
)

// show peers: the peers sections, their peers and what each session
// pushed and received, in HAProxy 2.6's layout. Figures goha has no
// counterpart for (HAProxy's internal flags, task calls) show as 0.

func init() {
	Register(&Command{Words: []string{"show", "peers"}, Usage: "show peers [dict|-] [section]",
		Help: "dump some information about all the peers or this peers section", Run: cmdShowPeers})
}

var peerStatusNames = map[int]string{100: "CONN", 110: "HSHK", 200: "ESTA", 300: "RETR", 501: "PROT", 502: "VERS", 503: "NAME", 504: "UNKN"}

func cmdShowPeers(c *Ctx) {
	arg := 2
	dict := false
	switch c.Arg(2) {
	case "dict":
		dict, arg = true, 3
	case "-":
		arg = 3
	}
	target := c.Arg(arg)
	sections := c.Proc.PeersSections()
	if target != "" {
		found := false
		for _, s := range sections {
			if s.Name == target {
				found = true
			}
		}
		if !found {
			c.Err("No such peers\n")
			return
		}
	}
	var b strings.Builder
	first := true
	now := time.Now()
	since := func(t time.Time) string {
		if t.IsZero() {
			return "<NEVER>"
		}
		return humanTime(now.Sub(t))
	}
	until := func(t time.Time) string {
		switch {
		case t.IsZero():
			return "<NEVER>"
		case !t.After(now):
			return "<PAST>"
		}
		return humanTime(t.Sub(now))
	}
	for i := range sections {
		s := &sections[i]
		if target != "" && s.Name != target {
			continue
		}
		if !first {
			b.WriteString("\n")
		}
		first = false
		disabled := 0
		if s.Disabled {
			disabled = 1
		}
		fmt.Fprintf(&b, "%p: [%s] id=%s disabled=%d flags=0x%x resync_timeout=%s task_calls=%d\n",
			s, s.Since.Format("02/Jan/2006:15:04:05"), s.Name, disabled, 0, "<NEVER>", 0)
		for j := range s.Peers {
			writePeer(&b, &s.Peers[j], dict, since, until)
		}
	}
	c.WriteString(b.String())
}

func writePeer(b *strings.Builder, p *peers.PeerStatus, dict bool, since, until func(time.Time) string) {
	kind, state := "remote", "inactive"
	if p.Local {
		kind = "local"
	}
	if p.Active {
		state = "active"
	}
	status := peerStatusNames[p.Status]
	if status == "" {
		status = "NONE"
	}
	fmt.Fprintf(b, "  %p: id=%s(%s,%s) addr=%s last_status=%s last_hdshk=%s\n", p, p.Name, kind, state, p.Addr, status, since(p.LastHandshake))
	fmt.Fprintf(b, "        reconnect=%s heartbeat=%s confirm=%d tx_hbt=%d rx_hbt=%d no_hbt=%d new_conn=%d proto_err=%d coll=%d\n",
		until(p.NextConnect), until(p.NextHeartbeat), p.Confirm, p.TxHbt, p.RxHbt, p.NoHbt, p.NewConn, p.ProtoErr, p.Coll)
	b.WriteString("        flags=0x0")
	if p.Active {
		xprt := "RAW"
		if p.TLS {
			xprt = "SSL"
		}
		fmt.Fprintf(b, " appctx:%p st0=7 st1=0 task_calls=0 state=EST", p)
		// HAProxy shows the connection of a session the peer opened.
		if p.Accepted {
			fmt.Fprintf(b, "\n        xprt=%s src=%s addr=%s", xprt, p.Src, p.Dst)
		}
	}
	if len(p.Tables) > 0 {
		b.WriteString("\n        shared tables:")
		for i := range p.Tables {
			t := &p.Tables[i]
			fmt.Fprintf(b, "\n          %p local_id=%d remote_id=%d flags=0x0 remote_data=0x%x", t, t.LocalID, t.RemoteID, t.RemoteData)
			fmt.Fprintf(b, "\n              last_acked=%d last_pushed=%d last_get=%d teaching_origin=0 update=%d", t.LastAcked, t.LastPushed, t.LastGet, t.Update)
			fmt.Fprintf(b, "\n              table:%p id=%s update=%d localupdate=%d commitupdate=%d refcnt=1", t, t.ID, t.Update, t.Update, t.Update)
			if dict {
				b.WriteString("\n        TX dictionary cache:\n        RX dictionary cache:")
			} else {
				b.WriteString("\n        Dictionary cache not dumped (use \"show peers dict\")")
			}
		}
	}
	b.WriteString("\n")
}
