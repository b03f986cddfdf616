package http1

import "io"

// crByte is the CR written before a bare LF of chunked framing.
var crByte = [1]byte{'\r'}

// Forward streams the rest of a body from src (refilled from r) to dst, one
// Write per buffer's worth, holding nothing but src's buffer. It returns the
// bytes written. It is the goroutine-per-connection driver of Body; an
// event loop calls Body.Scan itself. Bytes after the body stay in src.
//
// For BodyUntilClose and BodyTunnel it copies until r reports io.EOF, which
// ends the body without error.
func Forward(dst io.Writer, src *Buffer, r io.Reader, b *Body) (int64, error) {
	var written int64
	for !b.Done() {
		if b.NeedCR() {
			m, err := dst.Write(crByte[:])
			written += int64(m)
			if err != nil {
				return written, err
			}
			b.WroteCR()
		}
		if src.Len() == 0 {
			_, err := src.Fill(r)
			if err != nil {
				if err == io.EOF {
					return written, b.EOF()
				}
				return written, err
			}
			continue
		}
		p := src.Bytes()
		n, _, err := b.Scan(p)
		if n > 0 {
			m, werr := dst.Write(p[:n])
			written += int64(m)
			src.Discard(m)
			if werr != nil {
				return written, werr
			}
			if m != n {
				return written, io.ErrShortWrite
			}
		}
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// Complete reports how much of buf, which starts with a head of hlen bytes
// described by b, is needed to end the message, and whether the whole
// message is already there. It also stops (not complete) before a bare LF
// of chunked framing, which Forward then sends as CRLF. When complete, buf[:n] is the whole message and
// may go out with one Write (or, with a rewritten head, one writev of the
// new head and buf[hlen:n]). When not, buf[:n] is all of it that is
// present; b has scanned those bytes and Forward continues from there.
func Complete(buf []byte, hlen int, b *Body) (n int, complete bool, err error) {
	m, done, err := b.Scan(buf[hlen:])
	return hlen + m, done, err
}
