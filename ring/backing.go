//go:build unix

package ring

import (
	"encoding/binary"
	"os"
	"syscall"
)

const (
	backingMagic  = "GOHARNG1"
	backingHeader = 64
)

// backing is a ring area kept in a shared file mapping (see doc.go for
// the layout). Owned by its Ring; Ring.mu guards writes to it.
type backing struct {
	mem []byte // header followed by the area
}

func (b *backing) sync(head, tail uint64) {
	binary.LittleEndian.PutUint64(b.mem[16:], head)
	binary.LittleEndian.PutUint64(b.mem[24:], tail)
}

// SetBackingFile moves the ring's area into the file at path. Events
// already in the file are kept when it holds a valid ring of the same
// size; any other non-empty file is renamed to path.bak first. Call it
// after the size is set and before the ring is used. Not thread safe.
func (r *Ring) SetBackingFile(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.store != nil {
		return &ConfigError{Msg: "'backing-file' already specified for ring '" + r.Name + "' (was '" + r.storePath + "')."}
	}
	total := (backingHeader + int(r.size) + 4095) &^ 4095
	if st, err := os.Stat(path); err == nil && st.Size() > 0 && !validBacking(path, r.size) {
		_ = os.Remove(path + ".bak")
		_ = os.Rename(path, path+".bak")
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return &ConfigError{Msg: "cannot open backing-file '" + path + "' for ring '" + r.Name + "': " + errText(err) + "."}
	}
	defer f.Close()
	if err := f.Truncate(int64(total)); err != nil {
		return &ConfigError{Msg: "could not adjust size of backing-file for ring '" + r.Name + "': " + errText(err) + "."}
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, total, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return &ConfigError{Msg: "failed to use '" + path + "' as a backing file for ring '" + r.Name + "': " + errText(err) + "."}
	}
	area := mem[backingHeader : backingHeader+int(r.size)]
	head := binary.LittleEndian.Uint64(mem[16:])
	tail := binary.LittleEndian.Uint64(mem[24:])
	if string(mem[:8]) != backingMagic || binary.LittleEndian.Uint64(mem[8:]) != r.size ||
		!chainOK(area, r.size, head, tail) {
		// A fresh file, or one we renamed away: start empty, then move
		// the events the ring already holds into the mapping.
		clear(mem[:backingHeader])
		copy(mem, backingMagic)
		binary.LittleEndian.PutUint64(mem[8:], r.size)
		var used uint64
		for pos := r.head; pos < r.tail; {
			l, ll := r.lenAtLocked(pos)
			a, b := r.partsLocked(pos, ll+l)
			used += uint64(copy(area[used:], a))
			used += uint64(copy(area[used:], b))
			pos += ll + l
		}
		head, tail = 0, used
	}
	r.area, r.head, r.tail = area, head, tail
	r.store = &backing{mem: mem}
	r.store.sync(head, tail)
	r.storePath = path
	return nil
}

// validBacking reports whether path holds a ring of area size size whose
// events chain from head to tail.
func validBacking(path string, size uint64) bool {
	data, err := os.ReadFile(path)
	if err != nil || len(data) < backingHeader+int(size) || string(data[:8]) != backingMagic ||
		binary.LittleEndian.Uint64(data[8:]) != size {
		return false
	}
	return chainOK(data[backingHeader:backingHeader+int(size)], size,
		binary.LittleEndian.Uint64(data[16:]), binary.LittleEndian.Uint64(data[24:]))
}

// chainOK walks the records from head and reports whether they end
// exactly at tail.
func chainOK(area []byte, size, head, tail uint64) bool {
	if tail < head || tail-head > size {
		return false
	}
	probe := &Ring{area: area, size: size}
	for pos := head; pos < tail; {
		l, ll := probe.lenAtLocked(pos)
		if l > size || pos+ll+l > tail {
			return false
		}
		pos += ll + l
	}
	return true
}

func errText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	return err.Error()
}

// Unmap releases the backing file mapping. The ring must not be used
// afterwards.
func (r *Ring) Unmap() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.store == nil {
		return nil
	}
	err := syscall.Munmap(r.store.mem)
	r.store = nil
	r.area = nil
	return err
}
