package dockerenv

import (
	"context"
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
type gatewayCtl struct {
	c   *gatewaysim.Client
	log *slog.Logger

	mu      sync.Mutex
	events  []gatewaysim.Event
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
	g := &gatewayCtl{c: c, log: log, changed: make(chan struct{}), cancel: cancel, done: make(chan struct{})}
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
	close(g.changed)
	g.changed = make(chan struct{})
}

func (g *gatewayCtl) end() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ended = true
	close(g.changed)
	g.changed = make(chan struct{})
}

// next returns event i, or a channel that is closed when there may be one.
func (g *gatewayCtl) next(i int) (ev gatewaysim.Event, ok bool, wait <-chan struct{}, ended bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i < len(g.events) {
		return g.events[i], true, nil, false
	}
	return gatewaysim.Event{}, false, g.changed, g.ended
}

// Subscribe delivers every event that arrives after the call (and
// possibly a few emitted just before it, which callers filter anyway)
// until the returned cancel is called; then the channel closes.
func (g *gatewayCtl) Subscribe() (<-chan gatewaysim.Event, func()) {
	g.mu.Lock()
	start := len(g.events)
	g.mu.Unlock()
	out, stop := make(chan gatewaysim.Event), make(chan struct{})
	go func() {
		defer close(out)
		for i := start; ; {
			ev, ok, wait, ended := g.next(i)
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
			select {
			case out <- ev:
				i++
			case <-stop:
				return
			}
		}
	}()
	var once sync.Once
	return out, func() { once.Do(func() { close(stop) }) }
}

// WaitEvent returns the first event of the run for which pred is true,
// waiting for it if it has not happened yet.
func (g *gatewayCtl) WaitEvent(ctx context.Context, pred func(gatewaysim.Event) bool) (gatewaysim.Event, error) {
	for i := 0; ; {
		ev, ok, wait, ended := g.next(i)
		if ok {
			if pred(ev) {
				return ev, nil
			}
			i++
			continue
		}
		if ended {
			return gatewaysim.Event{}, gatewaysim.ErrClosed
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return gatewaysim.Event{}, fmt.Errorf("gatewaysim: wait for event: %w", ctx.Err())
		}
	}
}

// Release releases one hold ("" releases all).
func (g *gatewayCtl) Release(holdID string) error {
	ctx, cancel := context.WithTimeout(context.Background(), controlTimeout)
	defer cancel()
	return g.c.Release(ctx, holdID)
}

// ReleaseAll releases every hold; an error is logged, as the in-process
// Sim's ReleaseAll cannot fail.
func (g *gatewayCtl) ReleaseAll() {
	if err := g.Release(""); err != nil {
		g.log.Warn("gateway release all", "err", err)
	}
}

// AddFault installs a fault. The Controller interface has no error here
// (the in-process Sim cannot fail); a failed call is logged and returns
// an id that RemoveFault ignores, and the scenario then sees no fault.
func (g *gatewayCtl) AddFault(f gatewaysim.Fault) string {
	ctx, cancel := context.WithTimeout(context.Background(), controlTimeout)
	defer cancel()
	id, err := g.c.AddFault(ctx, f)
	if err != nil {
		g.log.Error("gateway add fault", "kind", f.Kind, "err", err)
		return ""
	}
	return id
}

// RemoveFault uninstalls a fault; unknown ids are a no-op, as on Sim.
func (g *gatewayCtl) RemoveFault(id string) {
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), controlTimeout)
	defer cancel()
	_ = g.c.RemoveFault(ctx, id)
}

// close releases holds (a held handler would block the SUT's shutdown)
// and stops the stream.
func (g *gatewayCtl) close() {
	g.ReleaseAll()
	g.cancel()
	<-g.done
}
