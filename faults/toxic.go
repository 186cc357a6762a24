package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idemcheck/idemcheck/harness"
)

// Both as a toxic fault's Direction puts the toxic on both directions of
// the link (two toxiproxy toxics, healed together).
const Both harness.Direction = "both"

// toxicSeq makes toxic names unique within the process, so two faults of
// one kind can sit on one link at once.
var toxicSeq atomic.Int64

// toxics is the state every network fault keeps: the link and the names
// of the toxiproxy toxics it installed, so Heal removes exactly those.
type toxics struct {
	mu    sync.Mutex
	link  harness.Link
	names []string
}

func directions(d harness.Direction) ([]harness.Direction, error) {
	switch d {
	case "", harness.Downstream:
		return []harness.Direction{harness.Downstream}, nil
	case harness.Upstream:
		return []harness.Direction{harness.Upstream}, nil
	case Both:
		return []harness.Direction{harness.Upstream, harness.Downstream}, nil
	}
	return nil, fmt.Errorf("direction %q: want upstream, downstream or both", d)
}

// add installs a toxic of type typ on l per direction of d; if one fails,
// those already added are removed again.
func (t *toxics) add(env Env, l harness.Link, d harness.Direction, toxicity float32, typ string, attrs map[string]any) error {
	dirs, err := directions(d)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.names) > 0 {
		return fmt.Errorf("already injected on %s", t.link)
	}
	t.link = l
	for _, dir := range dirs {
		name := fmt.Sprintf("idemcheck_%s_%s_%d", typ, dir, toxicSeq.Add(1))
		err := env.AddToxic(l, harness.Toxic{Name: name, Type: typ, Direction: dir, Attributes: attrs, Toxicity: toxicity})
		if err != nil {
			return errors.Join(err, t.removeLocked(context.Background(), env))
		}
		t.names = append(t.names, name)
	}
	return nil
}

// remove takes off every toxic add installed.
func (t *toxics) remove(ctx context.Context, env Env) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.names) == 0 {
		return ErrNotInjected
	}
	return t.removeLocked(ctx, env)
}

func (t *toxics) removeLocked(ctx context.Context, env Env) error {
	var errs []error
	for _, name := range t.names {
		errs = append(errs, env.RemoveToxic(ctx, t.link, name))
	}
	t.names = nil
	return errors.Join(errs...)
}

// toxicParams is a network fault's recorded parameters: direction,
// toxicity when partial, and the fault's own key/value pairs.
func toxicParams(d harness.Direction, toxicity float32, kv ...string) map[string]string {
	if d == "" {
		d = harness.Downstream
	}
	p := map[string]string{"direction": string(d)}
	if toxicity > 0 && toxicity < 1 {
		p["toxicity"] = strconv.FormatFloat(float64(toxicity), 'g', -1, 32)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i]] = kv[i+1]
	}
	return p
}

// millis converts a duration to toxiproxy's milliseconds, refusing what
// toxiproxy cannot express instead of silently rounding it to zero.
func millis(field string, d time.Duration) (int64, error) {
	if d < 0 || (d > 0 && d < time.Millisecond) {
		return 0, fmt.Errorf("%s %s: want 0 or at least 1ms (toxiproxy's resolution)", field, d)
	}
	return d.Milliseconds(), nil
}

func positive(field string, n int64) error {
	if n <= 0 {
		return fmt.Errorf("%s %d: want a positive number", field, n)
	}
	return nil
}

func errRange(field, want string) error { return fmt.Errorf("%s: want %s", field, want) }

func itoa(n int) string { return strconv.Itoa(n) }

func i64toa(n int64) string { return strconv.FormatInt(n, 10) }
