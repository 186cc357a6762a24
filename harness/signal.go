package harness

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// CloseOnSignal closes e when the process gets SIGINT or SIGTERM, and
// cancels the returned context with cause ErrInterrupted so the run stops
// and its deferred report writers still run. It is signal.NotifyContext
// plus teardown, and it exists because replicas and PostgreSQL run in
// their own process groups: a Ctrl-C at the terminal reaches only the
// harness, and a Go program that dies of SIGINT runs no defers, so without
// this the children would outlive it.
//
// While the teardown runs, further signals are absorbed, so a second
// Ctrl-C cannot interrupt it half way. stop cancels the context, waits for
// a teardown that is under way, and restores default signal handling.
//
//	env, err := harness.Start(ctx, t, opts)
//	if err != nil { ... }
//	defer env.Close()
//	ctx, stop := harness.CloseOnSignal(ctx, env)
//	defer stop()
func CloseOnSignal(ctx context.Context, e *Env) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-sigc:
			e.log.Warn("signal received: tearing the environment down", "signal", sig)
			cancel(fmt.Errorf("%w: %v", ErrInterrupted, sig))
			e.Close()
		case <-ctx.Done():
		}
	}()
	stop := func() {
		cancel(context.Canceled)
		<-done
		signal.Stop(sigc)
	}
	return ctx, stop
}
