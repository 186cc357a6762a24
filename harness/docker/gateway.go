package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// gatewayCtl is gatewaysim.Controller over the simulator container's
// control API. One SSE stream follows every event into a local log; a
// subscriber is a cursor into that log, so it never blocks the stream and
// never drops an event (the unbounded queue the in-process Sim also has).
// With a retention (ForgetAfter) the log forgets an event that long after
// it happened, as the Sim forgets its own, once every subscriber has
// taken it.
type gatewayCtl struct {
	c   *gatewaysim.Client
	log *slog.Logger

	mu      sync.Mutex
	events  []gatewaysim.Event // the log, from its base-th event on
	base    int                // events forgotten from the front
	retain  time.Duration      // 0: forget nothing
	cursors map[*cursor]struct{}
	changed chan struct{} // closed and replaced when events grows or the log ends
	ended   bool

	cancel context.CancelFunc
	done   chan struct{}
}

var _ gatewaysim.Controller = (*gatewayCtl)(nil)

// controlTimeout bounds one control call; faults and releases are tiny.
const controlTimeout = 10 * time.Second

func newGatewayCtl(c *gatewaysim.Client, log *slog.Logger) *gatewayCtl {
	ctx, cancel := context.WithCancel(context.Background())
	g := &gatewayCtl{c: c, log: log, cursors: map[*cursor]struct{}{}, changed: make(chan struct{}), cancel: cancel, done: make(chan struct{})}
	go g.follow(ctx)
	return g
}

// follow keeps the stream open, resuming after the last event it has
// when the connection drops.
func (g *gatewayCtl) follow(ctx context.Context) {
	defer close(g.done)
	defer g.end()
	for ctx.Err() == nil {
		err := g.c.StreamEvents(ctx, g.lastSeq(), func(ev gatewaysim.Event) bool {
			g.append(ev)
			return true
		})
		if ctx.Err() != nil {
			return
		}
		g.log.Debug("gateway event stream ended; resuming", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (g *gatewayCtl) lastSeq() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.events) == 0 {
		return 0
	}
	return g.events[len(g.events)-1].Seq
}

func (g *gatewayCtl) append(ev gatewaysim.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.events); n > 0 && ev.Seq <= g.events[n-1].Seq {
		return // replayed after a reconnect
	}
	g.events = append(g.events, ev)
	g.forgetLocked(ev.Time)
	close(g.changed)
	g.changed = make(chan struct{})
}

// cursor is a subscriber's place in the log: the number of the next
// event it takes, counting every event the log ever held.
type cursor struct{ i int }

// forgetLocked drops the events that happened more than the retention
// before now and that every subscriber has taken; g.mu held.
func (g *gatewayCtl) forgetLocked(now time.Time) {
	if g.retain <= 0 {
		return
	}
	n := gatewaysim.EventsBefore(g.events, now.Add(-g.retain))
	for c := range g.cursors {
		n = min(n, c.i-g.base)
	}
	clear(g.events[:n])
	g.events = g.events[n:]
	g.base += n
}

func (g *gatewayCtl) end() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ended = true
	close(g.changed)
	g.changed = make(chan struct{})
}

// next takes c's next event, or returns a channel that is closed when
// there may be one.
func (g *gatewayCtl) next(c *cursor) (ev gatewaysim.Event, ok bool, wait <-chan struct{}, ended bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := c.i - g.base; i < len(g.events) {
		c.i++
		return g.events[i], true, nil, false
	}
	return gatewaysim.Event{}, false, g.changed, g.ended
}

// SubscribeSince delivers every event with a Seq above since, from the
// local log (what a retention has not forgotten), until the returned
// cancel is called; then the channel closes.
func (g *gatewayCtl) SubscribeSince(since int64) (<-chan gatewaysim.Event, func()) {
	out, stop := make(chan gatewaysim.Event), make(chan struct{})
	g.mu.Lock()
	c := &cursor{i: g.base}
	g.cursors[c] = struct{}{}
	g.mu.Unlock()
	go func() {
		defer close(out)
		defer func() {
			g.mu.Lock()
			delete(g.cursors, c)
			g.mu.Unlock()
		}()
		for {
			ev, ok, wait, ended := g.next(c)
			if !ok {
				if ended {
					return
				}
				select {
				case <-wait:
					continue
				case <-stop:
					return
				}
			}
			if ev.Seq <= since {
				continue
			}
			select {
			case out <- ev:
			case <-stop:
				return
			}
		}
	}()
	var once sync.Once
	return out, func() { once.Do(func() { close(stop) }) }
}

// LastSeq asks the simulator container for its latest Seq: the SSE log
// may lag behind it, which is exactly what a barrier waits out.
func (g *gatewayCtl) LastSeq(ctx context.Context) (int64, error) {
	return g.c.LastSeq(ctx)
}

// Ledger reads the container's ledger.
func (g *gatewayCtl) Ledger(ctx context.Context) ([]gatewaysim.Charge, error) {
	return g.c.Ledger(ctx)
}

// Release releases one hold; an empty id is refused (it would release
// every hold).
func (g *gatewayCtl) Release(holdID string) error {
	if holdID == "" {
		return fmt.Errorf("release: %w: empty hold id", gatewaysim.ErrUnknownHold)
	}
	return g.release(holdID)
}

func (g *gatewayCtl) release(holdID string) error {
	ctx, cancel := context.WithTimeout(context.Background(), controlTimeout)
	defer cancel()
	return g.c.Release(ctx, holdID)
}

// Holds lists the container's withheld responses.
func (g *gatewayCtl) Holds(ctx context.Context) ([]gatewaysim.Hold, error) { return g.c.Holds(ctx) }

// ReleaseAll releases every hold.
func (g *gatewayCtl) ReleaseAll() error { return g.release("") }

// AddFault installs a fault rule in the container.
func (g *gatewayCtl) AddFault(f gatewaysim.Fault) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), controlTimeout)
	defer cancel()
	return g.c.AddFault(ctx, f)
}

// RemoveFault uninstalls a fault rule; one already spent is no error.
func (g *gatewayCtl) RemoveFault(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), controlTimeout)
	defer cancel()
	if err := g.c.RemoveFault(ctx, id); err != nil && !errors.Is(err, gatewaysim.ErrUnknownFault) {
		return err
	}
	return nil
}

// SetTrace sets the container's trace.
func (g *gatewayCtl) SetTrace(ctx context.Context, t gatewaysim.Trace) error {
	return g.c.SetTrace(ctx, t)
}

// Faults lists the container's installed fault rules.
func (g *gatewayCtl) Faults(ctx context.Context) ([]gatewaysim.FaultStatus, error) {
	return g.c.Faults(ctx)
}

// Expect tells the container which order an amount pays for.
func (g *gatewayCtl) Expect(ctx context.Context, e gatewaysim.Expectation) error {
	return g.c.Expect(ctx, e)
}

// KeepKeys keeps the container's keys of the orders in recovery.
func (g *gatewayCtl) KeepKeys(ctx context.Context, k gatewaysim.KeepKeys) error {
	return g.c.KeepKeys(ctx, k)
}

// ForgetAfter passes a soak's retention on to the container (POST
// /_sim/forget), as the ledger does to an in-process gateway, and keeps
// the local log to it too. A call that fails is logged: the container
// then keeps everything, as before, which costs memory, not a verdict.
func (g *gatewayCtl) ForgetAfter(d time.Duration) {
	g.mu.Lock()
	g.retain = max(d, 0)
	g.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), controlTimeout)
	defer cancel()
	if err := g.c.ForgetAfter(ctx, d); err != nil {
		g.log.Warn("gateway forget-after", "retain", d, "err", err)
	}
}

var _ gatewaysim.Forgetter = (*gatewayCtl)(nil)

// close releases holds (a held handler would block the SUT's shutdown)
// and stops the stream.
func (g *gatewayCtl) close() {
	if err := g.ReleaseAll(); err != nil {
		g.log.Warn("gateway release all", "err", err)
	}
	g.cancel()
	<-g.done
}
