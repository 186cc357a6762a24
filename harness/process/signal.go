package process

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/idemcheck/idemcheck/harness"
)

// CloseOnSignal closes e when the process gets SIGINT or SIGTERM, and
// cancels the returned context with cause ErrInterrupted so the run stops
// and its deferred report writers still run. It is signal.NotifyContext
// plus teardown, and it exists because replicas and PostgreSQL run in
// their own process groups: a Ctrl-C at the terminal reaches only the
// harness, and a Go program that dies of SIGINT runs no defers, so without
// this the children would outlive it.
//
// It stays armed until stop is called, whatever happens to ctx; while the
// teardown runs, further signals are absorbed, so a second Ctrl-C cannot
// interrupt it half way. stop disarms it, waits for a teardown under way
// and restores default signal handling.
//
// Start itself should run under signal.NotifyContext: a signal during
// start-up then cancels Start, which tears down what it had started.
//
//	ctx, stopStart := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
//	defer stopStart()
//	env, err := harness.Start(ctx, t, opts)
//	if err != nil { ... }
//	defer env.Close()
//	ctx, stop := harness.CloseOnSignal(ctx, env)
//	defer stop()
func CloseOnSignal(ctx context.Context, e *Env) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	disarm, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-sigc:
			e.log.Warn("signal received: tearing the environment down", "signal", sig)
			cancel(fmt.Errorf("%w: %v", harness.ErrInterrupted, sig))
			e.Close()
		case <-disarm:
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() { close(disarm) })
		<-done
		signal.Stop(sigc)
		cancel(context.Canceled)
	}
	return ctx, stop
}
