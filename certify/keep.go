package certify

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/idemcheck/idemcheck/history"
)

// keptHistories writes every history of one family to disk as it is
// judged (Options.KeepHistories): one JSON line per history, gzip
// compressed, in <dir>/<family>.jsonl.gz. Nothing is held in memory for
// it but the compressor's window. A run killed before it closes leaves a
// stream cut mid-block: every whole line before the cut reads back
// (zcat warns of the unexpected end).
type keptHistories struct {
	mu   sync.Mutex
	path string
	f    *os.File
	gz   *gzip.Writer
	enc  *json.Encoder
	err  error // the first write error; later histories are not written
}

// keepHistories opens family's file under dir, replacing one left by an
// earlier run.
func keepHistories(dir, family string) (*keptHistories, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--keep-histories %s: %w", dir, err)
	}
	path := filepath.Join(dir, family+".jsonl.gz")
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--keep-histories %s: %w", dir, err)
	}
	gz := gzip.NewWriter(f)
	return &keptHistories{path: path, f: f, gz: gz, enc: json.NewEncoder(gz)}, nil
}

// write appends h as one line; nil h (an example that made none) and a
// nil k (no --keep-histories) write nothing.
func (k *keptHistories) write(h *history.History) {
	if k == nil || h == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err == nil && k.gz != nil {
		k.err = k.enc.Encode(h)
	}
}

// close flushes and closes the file; the error names it.
func (k *keptHistories) close() error {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.gz == nil {
		return k.err
	}
	err := k.err
	if cerr := k.gz.Close(); err == nil {
		err = cerr
	}
	if cerr := k.f.Close(); err == nil {
		err = cerr
	}
	k.gz = nil
	if err != nil {
		return fmt.Errorf("--keep-histories: %s: %w", k.path, err)
	}
	return nil
}

// keepHistories opens every family's file under Options.KeepHistories.
func (c *certification) keepHistories() error {
	if c.opts.KeepHistories == "" {
		return nil
	}
	for _, fr := range c.families {
		k, err := keepHistories(c.opts.KeepHistories, fr.Name)
		if err != nil {
			c.closeKept()
			return err
		}
		fr.agg.disk = k
	}
	return nil
}

// closeKept closes the families' files; an error is logged, the run's
// verdict stands.
func (c *certification) closeKept() {
	for _, fr := range c.families {
		if err := fr.agg.disk.close(); err != nil {
			c.opts.Log.Warn("histories not kept", "family", fr.Name, "err", err)
		}
	}
}
