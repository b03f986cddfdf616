package peers

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"goha/core/stick"
)

// session is one connected peer.
type session struct {
	p    *Peers
	name string
	conn net.Conn
	br   *bufio.Reader

	// Written by the reader, read by the sender.
	lastRecv atomic.Int64 // unix nanoseconds of the last message received
	wake     chan struct{}
	teach    atomic.Bool // the peer asked for a full resync
	confirm  atomic.Int32
	acks     chan ack
	// confirmed, when not nil, is closed on the peer's first
	// resync-confirm (HandOff waits for it).
	confirmed   chan struct{}
	confirmOnce sync.Once

	// The sender's own.
	out  []byte
	sent time.Time
	send []*sendState

	stats    *peerStats
	lastSent atomic.Int64 // unix nanoseconds of the last write, for show peers
	// recv is the reader's view of the peer's tables, by our table, for
	// show peers.
	recv atomic.Pointer[map[*stick.Table]*recvTable]
	// lesson holds, while the peer teaches this process the tables it
	// asked for, each table's update number when it asked; nil
	// otherwise. Set before the reader starts, cleared by it.
	lesson map[*stick.Table]uint64
}

// sendState is what a session has pushed of one table.
type sendState struct {
	sh      Shared
	id      uint64 // the table's id on this session, from 1
	defined bool
	seq     uint64        // the table's last update pushed
	upd     atomic.Uint32 // the last update id sent (read by show peers)
}

// ack is an acknowledgement the reader asks the sender to send.
type ack struct {
	remoteID uint64
	last     uint32
}

// recvTable is what the peer defined of one of its tables.
type recvTable struct {
	t        *stick.Table // nil: not ours, ignored
	def      stick.RemoteDef
	lastGet  atomic.Uint32
	remoteID uint64
}

func newSession(p *Peers, name string, c net.Conn, br *bufio.Reader) *session {
	s := &session{p: p, name: name, conn: c, br: br, wake: make(chan struct{}, 1), acks: make(chan ack, 64)}
	s.lastRecv.Store(time.Now().UnixNano())
	for i, sh := range p.cfg.Tables {
		s.send = append(s.send, &sendState{sh: sh, id: uint64(i + 1)})
	}
	return s
}

// serve runs the session: it reads in a goroutine of its own and sends
// here; learn asks the peer for the whole tables first.
func (s *session) serve(learn bool) {
	defer s.conn.Close()
	for _, st := range s.send {
		st.sh.Table.Subscribe(s.wake)
		defer st.sh.Table.Unsubscribe(s.wake)
	}
	if learn {
		s.lesson = map[*stick.Table]uint64{}
		for _, st := range s.send {
			s.lesson[st.sh.Table] = st.sh.Table.UpdateSeq()
		}
	}
	done := make(chan error, 1)
	go func() {
		err := s.readLoop()
		if err == stick.ErrMalformed {
			s.countStat(func(ps *peerStats) { ps.protoErr.Add(1) })
		}
		done <- err
	}()
	if learn {
		s.control(ctrlResyncReq)
	}
	// Everything the tables hold goes to a new session: a peer that was
	// away catches up without asking.
	s.pushAll()
	if !s.flush() {
		return
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-s.p.stop:
			return
		case <-done:
			return
		case <-s.wake:
			s.pushUpdates()
		case a := <-s.acks:
			s.sendAck(a)
		case <-tick.C:
			if time.Since(time.Unix(0, s.lastRecv.Load())) > silenceLimit {
				return
			}
			if time.Since(s.sent) >= heartbeatEvery {
				s.control(ctrlHeartbeat)
				s.countStat(func(ps *peerStats) { ps.txHbt.Add(1) })
			}
		}
		if s.teach.Swap(false) {
			for _, st := range s.send {
				st.seq = 0
			}
			s.pushAll()
			s.control(ctrlResyncFinished)
		}
		for s.confirm.Load() > 0 {
			s.confirm.Add(-1)
			s.control(ctrlResyncConfirm)
		}
		if !s.flush() {
			return
		}
	}
}

func (s *session) control(t byte) { s.out = append(s.out, classControl, t) }

// flush writes what is queued; false when the connection failed.
func (s *session) flush() bool {
	if len(s.out) == 0 {
		return true
	}
	s.conn.SetWriteDeadline(time.Now().Add(silenceLimit))
	_, err := s.conn.Write(s.out)
	s.out = s.out[:0]
	s.sent = time.Now()
	s.lastSent.Store(s.sent.UnixNano())
	return err == nil
}

// message queues a stick-table message with its payload.
func (s *session) message(typ byte, payload []byte) {
	s.out = append(s.out, classStickTable, typ)
	s.out = stick.AppendUvarint(s.out, uint64(len(payload)))
	s.out = append(s.out, payload...)
}

// define queues the definition of st's table (which also makes it the
// table the following updates are about).
func (s *session) define(st *sendState) {
	t := st.sh.Table
	var b []byte
	b = stick.AppendUvarint(b, st.id)
	b = stick.AppendUvarint(b, uint64(len(st.sh.Name)))
	b = append(b, st.sh.Name...)
	b = stick.AppendUvarint(b, t.PeerKeyType())
	b = stick.AppendUvarint(b, uint64(t.KeyLen))
	b = stick.AppendUvarint(b, t.StoredMask())
	b = stick.AppendUvarint(b, uint64(t.Expire))
	b = t.AppendDefinitionParams(b)
	s.message(stktDefine, b)
	st.defined = true
}

// pushAll queues every entry of every table.
func (s *session) pushAll() {
	for _, st := range s.send {
		t := st.sh.Table
		last := t.UpdateSeq()
		now := stick.Now()
		list := t.Snapshot(now)
		s.pushEntries(st, list, now)
		t.Unref(list, nil)
		st.seq = last
	}
}

// pushUpdates queues the entries updated since the last push.
func (s *session) pushUpdates() {
	for _, st := range s.send {
		t := st.sh.Table
		list, last, all := t.UpdatesSince(st.seq)
		if all {
			now := stick.Now()
			snap := t.Snapshot(now)
			s.pushEntries(st, snap, now)
			t.Unref(snap, nil)
		} else if len(list) > 0 {
			now := stick.Now()
			live := list[:0]
			for _, e := range list {
				if t.Live(e) {
					live = append(live, e)
				}
			}
			s.pushEntries(st, live, now)
		}
		st.seq = last
	}
}

func (s *session) pushEntries(st *sendState, list []*stick.Entry, now int64) {
	if len(list) == 0 {
		return
	}
	t := st.sh.Table
	// The definition goes first each time: it is the switch to this
	// table as well.
	s.define(st)
	var b []byte
	for _, e := range list {
		upd := st.upd.Add(1)
		b = binary.BigEndian.AppendUint32(b[:0], upd)
		b = t.AppendPeerKey(b, e)
		b = t.AppendPeerValues(b, e, now)
		s.message(stktUpdate, b)
		if len(s.out) > 64<<10 && !s.flush() {
			return
		}
	}
}

func (s *session) sendAck(a ack) {
	var b []byte
	b = stick.AppendUvarint(b, a.remoteID)
	b = binary.BigEndian.AppendUint32(b, a.last)
	s.message(stktAck, b)
}

// readLoop reads and applies the peer's messages until the connection
// ends or a message is malformed.
func (s *session) readLoop() error {
	tables := map[uint64]*recvTable{}
	var cur *recvTable
	dict := map[uint64]string{}
	head := make([]byte, 2)
	var body []byte
	for {
		s.conn.SetReadDeadline(time.Now().Add(silenceLimit + heartbeatEvery))
		if _, err := io.ReadFull(s.br, head); err != nil {
			return err
		}
		s.lastRecv.Store(time.Now().UnixNano())
		body = body[:0]
		if head[1] >= 0x80 {
			n, err := readUvarint(s.br)
			if err != nil {
				return err
			}
			if n > maxMessage {
				return stick.ErrMalformed
			}
			if uint64(cap(body)) < n {
				body = make([]byte, n)
			}
			body = body[:n]
			if _, err := io.ReadFull(s.br, body); err != nil {
				return err
			}
		}
		switch head[0] {
		case classControl:
			switch head[1] {
			case ctrlResyncReq:
				s.teach.Store(true)
				s.nudge()
			case ctrlResyncFinished, ctrlResyncPartial:
				s.lesson = nil
				s.p.learnt()
				s.confirm.Add(1)
				s.countStat(func(ps *peerStats) { ps.confirm.Add(1) })
				s.nudge()
			case ctrlResyncConfirm:
				if s.confirmed != nil {
					s.confirmOnce.Do(func() { close(s.confirmed) })
				}
			case ctrlHeartbeat:
				s.countStat(func(ps *peerStats) { ps.rxHbt.Add(1) })
			}
		case classError, classReserved:
			return stick.ErrMalformed
		case classStickTable:
			switch head[1] {
			case stktDefine:
				rt, err := s.defineRecv(body)
				if err != nil {
					return err
				}
				tables[rt.remoteID] = rt
				cur = rt
				if rt.t != nil {
					m := map[*stick.Table]*recvTable{}
					if old := s.recv.Load(); old != nil {
						for k, v := range *old {
							m[k] = v
						}
					}
					m[rt.t] = rt
					s.recv.Store(&m)
				}
			case stktSwitch:
				id, n := stick.Uvarint(body)
				if n == 0 {
					return stick.ErrMalformed
				}
				cur = tables[id]
			case stktUpdate, stktIncUpdate, stktUpdateTimed, stktIncUpdateTimed:
				if cur == nil || cur.t == nil {
					continue
				}
				if err := s.update(cur, head[1], body, dict); err != nil {
					return err
				}
				select {
				case s.acks <- ack{remoteID: cur.remoteID, last: cur.lastGet.Load()}:
				default:
				}
			}
		}
	}
}

// countStat updates the peer's show peers figures.
func (s *session) countStat(fn func(*peerStats)) {
	if s.stats != nil {
		fn(s.stats)
	}
}

func (s *session) nudge() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// defineRecv reads a table definition: the table is ours when its name,
// key type and key size match one of the section's.
func (s *session) defineRecv(b []byte) (*recvTable, error) {
	rd := func() uint64 {
		v, n := stick.Uvarint(b)
		if n == 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	rt := &recvTable{remoteID: rd()}
	nl := rd()
	if b == nil || uint64(len(b)) < nl || nl == 0 {
		return nil, stick.ErrMalformed
	}
	name := string(b[:nl])
	b = b[nl:]
	kt, klen, types := rd(), rd(), rd()
	if b == nil {
		return nil, stick.ErrMalformed
	}
	rt.def.Types = types
	for _, sh := range s.p.cfg.Tables {
		if sh.Name == name && sh.Table.PeerKeyType() == kt && uint64(sh.Table.KeyLen) == klen {
			rt.t = sh.Table
		}
	}
	rd() // expire
	// The parameters: an array's size (and a rate array's period), a
	// rate's period, each after its type.
	for dt := stick.DataType(0); dt < stick.NumTypes && b != nil && len(b) > 0; dt++ {
		if types&(1<<dt) == 0 {
			continue
		}
		ti := stick.Types[dt]
		if !ti.Array && ti.Std != stick.StdFreq {
			continue
		}
		if rd() != uint64(dt) {
			rt.t = nil
			break
		}
		if ti.Array {
			rt.def.N[dt] = int(rd())
		}
		if ti.Std == stick.StdFreq {
			rd()
		}
	}
	for dt := stick.DataType(0); dt < stick.NumTypes; dt++ {
		if stick.Types[dt].Array && rt.def.N[dt] == 0 && types&(1<<dt) != 0 {
			// An old peer's array without its size: not decodable.
			rt.t = nil
		}
	}
	return rt, nil
}

// update applies an update message to its table.
func (s *session) update(rt *recvTable, typ byte, b []byte, dict map[uint64]string) error {
	if typ == stktUpdate || typ == stktUpdateTimed {
		if len(b) < 4 {
			return stick.ErrMalformed
		}
		rt.lastGet.Store(binary.BigEndian.Uint32(b))
		b = b[4:]
	} else {
		rt.lastGet.Add(1)
	}
	t := rt.t
	expire := t.Expire
	if typ == stktUpdateTimed || typ == stktIncUpdateTimed {
		if len(b) < 4 {
			return stick.ErrMalformed
		}
		expire = int64(int32(binary.BigEndian.Uint32(b)))
		b = b[4:]
	}
	key, n, err := t.PeerKey(b)
	if err != nil {
		return err
	}
	b = b[n:]
	now := stick.Now()
	e := t.Get(key, now)
	if e == nil {
		return nil
	}
	if since, ok := s.lesson[t]; ok && t.LocallyNewer(e, since) {
		// A lesson is a copy of the teacher's table, which may hold
		// what this process pushed before its own later updates: those
		// stand.
		t.Release(e, now, false)
		return nil
	}
	err = t.ApplyPeerValues(e, &rt.def, b, dict, now, expire)
	t.Release(e, now, false)
	return err
}

func readUvarint(br *bufio.Reader) (uint64, error) {
	var buf [10]byte
	for i := 0; i < len(buf); i++ {
		c, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		buf[i] = c
		if (i == 0 && c < 0xf0) || (i > 0 && c < 0x80) {
			v, n := stick.Uvarint(buf[:i+1])
			if n == 0 {
				return 0, stick.ErrMalformed
			}
			return v, nil
		}
	}
	return 0, stick.ErrMalformed
}
