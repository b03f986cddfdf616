package runtime

// _getsocks hands the listening sockets to a new process, in HAProxy
// 2.6's wire format, so that sockets pass from HAProxy to goha and back:
//
//   - the sender writes the number of sockets, a native-endian int (4
//     bytes), alone;
//   - then messages of up to maxSendFD sockets, each carrying the
//     descriptors (SCM_RIGHTS) and, per socket, <namespace length byte>
//     <namespace> <interface length byte> <interface> <4 zero bytes>;
//   - the receiver answers each message with a 4-byte acknowledgement;
//     the sender waits for it only after a full message.
//
// The sender does nothing (the session ends without a reply) unless the
// socket has `expose-fd listeners`, or when it has no socket to send.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"goha/core/stream"
)

// maxSendFD is HAProxy's MAX_SEND_FD: sockets per message.
const maxSendFD = 253

// xferTimeout bounds each step of a transfer, as HAProxy's 1-second
// SO_RCVTIMEO does.
const xferTimeout = time.Second

func init() {
	Register(&Command{Words: []string{"_getsocks"}, unlisted: true, Run: cmdGetSocks})
}

func cmdGetSocks(c *Ctx) {
	// The session ends after the transfer, whatever happens: nothing else
	// may follow the binary answer.
	c.s.quit = true
	uc, ok := c.s.conn.(*net.UnixConn)
	if !ok || !c.s.sock.opts.ExposeFD {
		return
	}
	socks, err := c.Proc.ExportListeners()
	if err != nil || len(socks) == 0 {
		return
	}
	defer func() {
		for _, s := range socks {
			s.File.Close()
		}
	}()
	sendSockets(uc, c.s.r, socks)
}

// sendSockets writes socks to the receiver; acks are read from r (the
// session's buffered reader over the same connection).
func sendSockets(uc *net.UnixConn, r io.Reader, socks []stream.ListenerSocket) error {
	uc.SetDeadline(time.Now().Add(xferTimeout))
	var n [4]byte
	binary.NativeEndian.PutUint32(n[:], uint32(len(socks)))
	if _, err := uc.Write(n[:]); err != nil {
		return err
	}
	for len(socks) > 0 {
		chunk := socks[:min(len(socks), maxSendFD)]
		socks = socks[len(chunk):]
		var meta []byte
		fds := make([]int, 0, len(chunk))
		for _, s := range chunk {
			fds = append(fds, int(s.File.Fd()))
			meta = appendName(meta, s.Namespace)
			meta = appendName(meta, s.Interface)
			meta = append(meta, 0, 0, 0, 0)
		}
		uc.SetDeadline(time.Now().Add(xferTimeout))
		if _, _, err := uc.WriteMsgUnix(meta, unix.UnixRights(fds...), nil); err != nil {
			return err
		}
		if len(chunk) == maxSendFD {
			if _, err := io.ReadFull(r, n[:]); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendName writes a length byte and the name (at most 255 bytes, as
// the length byte allows).
func appendName(b []byte, s string) []byte {
	if len(s) > 255 {
		s = s[:255]
	}
	return append(append(b, byte(len(s))), s...)
}

// ReceivedSocket is one listening socket received from an old process.
type ReceivedSocket struct {
	File      *os.File
	Namespace string
	Interface string
}

// Errors of GetSockets.
var (
	ErrNoSockets   = errors.New("failed to get the number of sockets to be transferred")
	ErrXferCorrupt = errors.New("inconsistency while transferring sockets")
)

// GetSockets asks the process serving the stats socket at path for its
// listening sockets (`_getsocks`), as `-x` does. A process that has none
// to give answers with none.
func GetSockets(path string) ([]ReceivedSocket, error) {
	c, err := net.DialTimeout("unix", path, xferTimeout)
	if err != nil {
		return nil, fmt.Errorf("failed to connect to the old process socket '%s'", path)
	}
	defer c.Close()
	return receiveSockets(c.(*net.UnixConn))
}

func receiveSockets(uc *net.UnixConn) ([]ReceivedSocket, error) {
	uc.SetDeadline(time.Now().Add(xferTimeout))
	if _, err := uc.Write([]byte("_getsocks\n")); err != nil {
		return nil, ErrNoSockets
	}
	var n [4]byte
	if _, err := io.ReadFull(uc, n[:]); err != nil {
		return nil, ErrNoSockets
	}
	want := int(int32(binary.NativeEndian.Uint32(n[:])))
	if want == 0 {
		return nil, nil
	}
	if want < 0 || want > 1<<20 {
		return nil, ErrXferCorrupt
	}
	var fds []int
	var meta []byte
	closeAll := func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	buf := make([]byte, maxSendFD*(1+unix.PathMax+1+unix.IFNAMSIZ+4))
	oob := make([]byte, unix.CmsgSpace(4)*maxSendFD)
	for len(fds) < want {
		uc.SetDeadline(time.Now().Add(xferTimeout))
		nb, noob, _, _, err := uc.ReadMsgUnix(buf, oob)
		if err != nil || nb == 0 && noob == 0 {
			closeAll()
			return nil, fmt.Errorf("we didn't get the expected number of sockets (expecting %d got %d)", want, len(fds))
		}
		var ack [4]byte
		binary.NativeEndian.PutUint32(ack[:], uint32(len(fds)))
		uc.Write(ack[:])
		msgs, err := unix.ParseSocketControlMessage(oob[:noob])
		if err != nil {
			closeAll()
			return nil, ErrXferCorrupt
		}
		for _, m := range msgs {
			got, err := unix.ParseUnixRights(&m)
			if err != nil {
				continue
			}
			fds = append(fds, got...)
		}
		if len(fds) > want {
			closeAll()
			return nil, errors.New("got too many sockets")
		}
		meta = append(meta, buf[:nb]...)
	}
	names, err := parseSocketMeta(meta, len(fds))
	if err != nil {
		closeAll()
		return nil, err
	}
	out := make([]ReceivedSocket, len(fds))
	for i, fd := range fds {
		unix.CloseOnExec(fd)
		out[i] = ReceivedSocket{File: os.NewFile(uintptr(fd), "getsocks"), Namespace: names[i][0], Interface: names[i][1]}
	}
	return out, nil
}

// parseSocketMeta reads the per-socket namespace and interface names of
// n sockets.
func parseSocketMeta(b []byte, n int) ([][2]string, error) {
	out := make([][2]string, 0, n)
	for range n {
		var names [2]string
		for j := range names {
			if len(b) == 0 {
				return nil, ErrXferCorrupt
			}
			l := int(b[0])
			if len(b) < 1+l {
				return nil, ErrXferCorrupt
			}
			names[j] = string(b[1 : 1+l])
			b = b[1+l:]
		}
		if len(b) < 4 {
			return nil, ErrXferCorrupt
		}
		b = b[4:]
		out = append(out, names)
	}
	return out, nil
}
