// Command gateway-sim runs the simulated payment gateway (package
// gatewaysim) as a process: point a service's Stripe backend URL at it
// (--addr, the provider's API) and drive faults and read the ledger through
// /_sim/ on another listener (--control-addr), which the service is never
// told of: on --addr, /_sim/... gets the provider's 404.
//
//	gateway-sim --addr 127.0.0.1:12111 --control-addr 127.0.0.1:12112 [--provider stripe|checkout|adyen|none] [--ttl 24h] [--forget-after 2m] [--no-idempotency] [--seed N] [--verbose]
//
// It prints "gateway-sim listening on http://HOST:PORT" and "gateway-sim
// control on http://HOST:PORT" once both accept connections (with HOST:0
// the port is the one the kernel chose) and shuts down cleanly on SIGINT or
// SIGTERM, releasing held responses and ending event streams first.
//
// It imports only gateway-sim.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// shutdownGrace bounds how long in-flight requests (latency faults) may
// take to finish on shutdown.
const shutdownGrace = 10 * time.Second

// exitUsage is the exit code for bad flags (README.md, "Exit codes").
const exitUsage = 2

// via is a --via flag: another address serving the provider's API, whose
// foreign requests (gatewaysim.EventForeign) name the path they came by.
type via struct{ name, addr string }

// options are the command-line flags.
type options struct {
	addr          string
	controlAddr   string
	vias          []via
	ttl           time.Duration
	forgetAfter   time.Duration
	noIdempotency bool
	provider      string
	seed          int64
	verbose       bool
	trace         gatewaysim.Trace
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(exitUsage)
	case err != nil:
		fmt.Fprintln(os.Stderr, "gateway-sim:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("gateway-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:12111", "the provider API's listen address, for the service (host:port; port 0 picks a free one)")
	fs.StringVar(&o.controlAddr, "control-addr", "127.0.0.1:12112", "the control API's (/_sim/) listen address, for the harness alone (host:port; port 0 picks a free one)")
	fs.DurationVar(&o.ttl, "ttl", 0, "idempotency key TTL (default the provider's key lifetime: 24h; Adyen 744h)")
	fs.Func("forget-after", "forget a charge and an event this long after it happened, as newer ones come: a soak's gateway does not grow with its length (a duration >= 0; default 0 keeps everything; POST /_sim/forget sets it too)", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("want a duration >= 0 such as 2m (0 keeps everything), got %q", v)
		}
		o.forgetAfter = d
		return nil
	})
	fs.BoolVar(&o.noIdempotency, "no-idempotency", false, "ignore Idempotency-Key, like a gateway without idempotency support (the provider none)")
	fs.Func("provider", "the payment provider to speak: "+strings.Join(gatewaysim.ProviderNames(), ", ")+" (default stripe)", func(v string) error {
		_, err := gatewaysim.ProfileNamed(v)
		o.provider = v
		return err
	})
	fs.Func("via", "NAME=ADDR: also serve the provider's API on ADDR, naming NAME (a replica's link) in what it records of requests that are not the API; repeatable", func(v string) error {
		name, addr, ok := strings.Cut(v, "=")
		if !ok || name == "" || addr == "" {
			return fmt.Errorf("want NAME=ADDR, got %q", v)
		}
		o.vias = append(o.vias, via{name, addr})
		return nil
	})
	fs.Int64Var(&o.seed, "seed", 1, "seed for probability faults and charge ids")
	fs.BoolVar(&o.verbose, "verbose", false, "log every decision to stderr")
	fs.Func("trace", "where requests name their order: metadata[KEY], description:PATTERN or amount (default metadata[order_id])", func(v string) error {
		t, err := gatewaysim.ParseTrace(v)
		o.trace = t
		return err
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gateway-sim: unexpected arguments %q\n", fs.Args())
		return o, errUsage
	}
	return o, nil
}

// run serves the simulator until ctx ends, then shuts down.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	sim := gatewaysim.New(gatewaysim.Config{
		IdempotencyTTL: o.ttl, NoIdempotency: o.noIdempotency, Provider: o.provider, Seed: o.seed, Logger: logger(o.verbose, stderr), Trace: o.trace,
	})
	sim.ForgetAfter(o.forgetAfter)
	listeners := []struct {
		what, addr string
		h          http.Handler
	}{{"", o.addr, sim.Handler()}, {"control", o.controlAddr, sim.ControlHandler()}}
	for _, v := range o.vias {
		listeners = append(listeners, struct {
			what, addr string
			h          http.Handler
		}{"via " + v.name, v.addr, sim.HandlerVia(v.name)})
	}
	var lns []net.Listener
	for _, l := range listeners {
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			for _, open := range lns {
				open.Close()
			}
			return fmt.Errorf("listen %s: %w", l.what, err)
		}
		lns = append(lns, ln)
	}
	srvs := make([]*http.Server, len(lns))
	served := make(chan error, len(lns))
	for i, ln := range lns {
		srvs[i] = &http.Server{Handler: listeners[i].h, ReadHeaderTimeout: 10 * time.Second}
		go func() { served <- srvs[i].Serve(ln) }()
	}
	fmt.Fprintf(stdout, "gateway-sim listening on http://%s\n", lns[0].Addr())
	fmt.Fprintf(stdout, "gateway-sim control on http://%s\n", lns[1].Addr())
	for i, v := range o.vias {
		fmt.Fprintf(stdout, "gateway-sim via %s on http://%s\n", v.name, lns[2+i].Addr())
	}
	select {
	case err := <-served:
		return errors.Join(fmt.Errorf("serve: %w", err), shutdown(srvs, sim))
	case <-ctx.Done():
	}
	return shutdown(srvs, sim)
}

// shutdown lets held responses go and ends event streams (handlers that
// would otherwise never return), then drains the servers.
func shutdown(srvs []*http.Server, sim *gatewaysim.Sim) error {
	sim.Close()
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	var errs []error
	for _, srv := range srvs {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shutdown: %w", err))
		}
	}
	return errors.Join(errs...)
}

func logger(verbose bool, w io.Writer) *slog.Logger {
	if !verbose {
		return nil
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
