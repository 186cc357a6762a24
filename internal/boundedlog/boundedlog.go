// Package boundedlog is a log file that keeps its head and its tail: a
// soak's replica and store logs must not grow with the run. The first
// Head bytes stay as written; past them the file holds a marker line
// naming the bytes dropped so far and the last Tail bytes (up to twice
// that between compactions). Everything is on disk after every write, so
// a runner killed mid-run leaves a log that ends where the server's did.
package boundedlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"sync"
)

// Default caps: 2 MiB of head and 2 MiB of tail per log, so a run with a
// dozen logs keeps its report folder far under 50 MB whatever its length.
const (
	DefaultHead = 2 << 20
	DefaultTail = 2 << 20
)

// File is one bounded log. It is an io.Writer for a child process's
// output (exec copies through a pipe), safe for concurrent writers, and
// shared by every launch of the process it logs.
type File struct {
	head, tail int64

	mu      sync.Mutex
	f       *os.File
	size    int64  // bytes in the file
	body    int64  // where the tail region starts: head, or head + the marker
	ring    []byte // the last tail bytes written past the head
	dropped int64
}

// Create truncates path and returns its bounded log with the given caps
// (DefaultHead and DefaultTail where zero).
func Create(path string, head, tail int64) (*File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	if head <= 0 {
		head = DefaultHead
	}
	if tail <= 0 {
		tail = DefaultTail
	}
	return &File{f: f, head: head, tail: tail, body: head}, nil
}

// Write appends p; once the tail region reaches twice its cap, the file
// is compacted to head, marker and the last Tail bytes.
func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.WriteAt(p, l.size); err != nil {
		return 0, err
	}
	l.size += int64(len(p))
	if past := l.size - l.head; past > 0 {
		l.keep(p[max(0, int64(len(p))-past):])
	}
	if l.size-l.body > 2*l.tail {
		if err := l.compact(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// keep appends b to the ring and trims it to the last tail bytes.
func (l *File) keep(b []byte) {
	l.ring = append(l.ring, b...)
	if over := int64(len(l.ring)) - l.tail; over > 0 {
		l.ring = append(l.ring[:0], l.ring[over:]...)
	}
}

// compact rewrites the file as head, marker and ring.
func (l *File) compact() error {
	l.dropped += l.size - l.body - int64(len(l.ring))
	mark := []byte(Marker(l.dropped))
	if err := l.f.Truncate(l.head); err != nil {
		return err
	}
	if _, err := l.f.WriteAt(mark, l.head); err != nil {
		return err
	}
	l.body = l.head + int64(len(mark))
	if _, err := l.f.WriteAt(l.ring, l.body); err != nil {
		return err
	}
	l.size = l.body + int64(len(l.ring))
	return nil
}

// Dropped is how many bytes the log has dropped so far.
func (l *File) Dropped() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

// Close closes the file.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// Marker is the line that stands for n dropped bytes.
func Marker(n int64) string {
	return fmt.Sprintf("\n=== idemcheck: %d bytes dropped here (the log keeps its head and its tail) ===\n", n)
}

var markerRE = regexp.MustCompile(`=== idemcheck: (\d+) bytes dropped here`)

// DroppedIn reads the bytes dropped from a bounded log's contents (0 for
// a log that dropped nothing).
func DroppedIn(data []byte) int64 {
	m := markerRE.FindSubmatch(data)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// Clip is data as a bounded log with the default caps would keep it: its
// head, the marker and its tail (data itself when it fits), for logs
// read whole (a container's). Data clipped before and appended to since
// is clipped again with one marker, counting every byte dropped.
func Clip(data []byte) []byte {
	var prev int64
	if n := DroppedIn(data); n > 0 {
		mark := []byte(Marker(n))
		if i := bytes.Index(data, mark); i >= 0 {
			prev = n
			data = append(data[:i:i], data[i+len(mark):]...)
		}
	}
	if len(data) <= DefaultHead+2*DefaultTail {
		if prev == 0 || len(data) < DefaultHead {
			return data
		}
		out := append([]byte(nil), data[:DefaultHead]...)
		out = append(out, Marker(prev)...)
		return append(out, data[DefaultHead:]...)
	}
	out := append([]byte(nil), data[:DefaultHead]...)
	out = append(out, Marker(prev+int64(len(data)-DefaultHead-DefaultTail))...)
	return append(out, data[len(data)-DefaultTail:]...)
}

// ClipFile clips the log at path in place as Clip does, when nothing is
// writing it (a store between two launches, which appends its output to
// the file itself: a pipe would make a SIGKILLed server's orphaned
// children hold its exit). A missing file is not an error.
func ClipFile(path string) error {
	info, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && info.Size() <= DefaultHead+2*DefaultTail) {
		return nil
	}
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	tmp := path + ".clip"
	if err := os.WriteFile(tmp, Clip(data), info.Mode().Perm()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
