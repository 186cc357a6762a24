package boundedlog_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/idemcheck/idemcheck/internal/boundedlog"
)

func TestFile_KeepsHeadAndTailAndCountsTheRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "replica0.log")
	l, err := boundedlog.Create(path, 100, 50)
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for i := range 1000 {
		line := fmt.Sprintf("line %04d\n", i)
		all.WriteString(line)
		if _, err := l.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	got, _ := os.ReadFile(path)
	want := all.Bytes()
	if !bytes.HasPrefix(got, want[:100]) {
		t.Fatalf("head lost:\n%.120s", got)
	}
	mark := []byte(boundedlog.Marker(boundedlog.DroppedIn(got)))
	i := bytes.Index(got, mark)
	if i != 100 {
		t.Fatalf("marker at %d, want right after the 100-byte head:\n%s", i, got)
	}
	tailKept := got[i+len(mark):]
	if len(tailKept) < 50 || len(tailKept) > 100 || !bytes.HasSuffix(want, tailKept) {
		t.Fatalf("tail of %d bytes, want the last 50-100 bytes written: %q", len(tailKept), tailKept)
	}
	if n := boundedlog.DroppedIn(got); n != int64(len(want)-100-len(tailKept)) {
		t.Fatalf("marker says %d bytes dropped, %d were", n, len(want)-100-len(tailKept))
	}
	if int64(len(got)) > 100+int64(len(mark))+100 {
		t.Fatalf("file of %d bytes: not bounded", len(got))
	}
}

func TestFile_SmallLogIsUntouched(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, _ := boundedlog.Create(path, 0, 0)
	l.Write([]byte("ready\n"))
	l.Close()
	if got, _ := os.ReadFile(path); string(got) != "ready\n" || boundedlog.DroppedIn(got) != 0 {
		t.Fatalf("got %q", got)
	}
}

func TestFile_ConcurrentWritesStayWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, _ := boundedlog.Create(path, 64, 4096)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 500 {
				fmt.Fprintf(l, "w%d %03d\n", w, i)
			}
		})
	}
	wg.Wait()
	l.Close()
	got, _ := os.ReadFile(path)
	mark := boundedlog.Marker(boundedlog.DroppedIn(got))
	_, tail, ok := strings.Cut(string(got), mark)
	if !ok {
		t.Fatalf("no marker in a log of %d bytes", len(got))
	}
	lines := strings.Split(strings.TrimSuffix(tail, "\n"), "\n")
	for _, line := range lines[1:] { // the first may start mid-line
		var w, i int
		if n, _ := fmt.Sscanf(line, "w%d %d", &w, &i); n != 2 || len(line) != 6 {
			t.Fatalf("a torn line in the tail: %q", line)
		}
	}
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, " 499") {
		t.Errorf("the log ends with %q, want some writer's last line", last)
	}
}

func TestClip_KeepsHeadAndTail(t *testing.T) {
	small := []byte("a\nb\n")
	if got := boundedlog.Clip(small); !bytes.Equal(got, small) {
		t.Fatalf("a small log changed: %q", got)
	}
	big := bytes.Repeat([]byte("0123456789\n"), 1<<20) // 11 MiB
	got := boundedlog.Clip(big)
	n := boundedlog.DroppedIn(got)
	if !bytes.HasPrefix(got, big[:boundedlog.DefaultHead]) || !bytes.HasSuffix(got, big[len(big)-boundedlog.DefaultTail:]) ||
		n != int64(len(big)-boundedlog.DefaultHead-boundedlog.DefaultTail) {
		t.Fatalf("clipped to %d bytes, %d dropped", len(got), n)
	}
}

func TestClip_ClippedTwiceCountsEveryDroppedByte(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789\n"), 1<<20) // 11 MiB
	once := boundedlog.Clip(big)
	twice := boundedlog.Clip(append(once, big...))
	want := int64(2*len(big) - boundedlog.DefaultHead - boundedlog.DefaultTail)
	if n := boundedlog.DroppedIn(twice); n != want || bytes.Count(twice, []byte("bytes dropped here")) != 1 {
		t.Fatalf("clipped twice: %d bytes dropped in %d markers, want %d in one", n, bytes.Count(twice, []byte("bytes dropped here")), want)
	}
	if !bytes.HasSuffix(twice, big[len(big)-boundedlog.DefaultTail:]) || !bytes.HasPrefix(twice, big[:boundedlog.DefaultHead]) {
		t.Fatal("head or tail lost")
	}
}

// TestClipFile_InPlace: a log file grown past the caps by a process that
// appended to it is clipped in place to its head, the marker counting
// the bytes dropped and its tail; a small one and a missing one are left.
func TestClipFile_InPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "postgres.log")
	big := bytes.Repeat([]byte("0123456789abcdef"), (boundedlog.DefaultHead+3*boundedlog.DefaultTail)/16)
	if err := os.WriteFile(path, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := boundedlog.ClipFile(path); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if dropped := boundedlog.DroppedIn(got); dropped != int64(len(big)-boundedlog.DefaultHead-boundedlog.DefaultTail) {
		t.Errorf("dropped %d bytes of %d", dropped, len(big))
	}
	if !bytes.HasPrefix(got, big[:boundedlog.DefaultHead]) || !bytes.HasSuffix(got, big[len(big)-boundedlog.DefaultTail:]) {
		t.Error("head or tail lost")
	}
	small := filepath.Join(dir, "small.log")
	os.WriteFile(small, []byte("ready\n"), 0o644)
	if err := boundedlog.ClipFile(small); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(small); string(b) != "ready\n" {
		t.Errorf("a small log changed: %q", b)
	}
	if err := boundedlog.ClipFile(filepath.Join(dir, "none.log")); err != nil {
		t.Errorf("a missing log: %v", err)
	}
}
