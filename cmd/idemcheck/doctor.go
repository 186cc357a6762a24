package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/idemcheck/idemcheck/certify"
)

// runDoctor is `idemcheck doctor`: first contact alone. It starts the
// target as certify does, sends a handful of requests, reads the
// gateway's ledger and prints a checklist with the fix for each ✗.
// Exit 0: certify can run; 2: a bad target file; 3: the environment
// could not be set up, or certify would stop at first contact.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("doctor", "doctor --target <built-in | file.yaml>",
		"idemcheck doctor --target ./my-server.yaml", stderr)
	tgt := fs.String("target", "", "target to check (a built-in name or a target file)")
	dbURL := fs.String("database-url", "", "use this PostgreSQL instead of a throwaway cluster")
	docker := fs.Bool("docker", false, "start the target in containers, as certify --docker would (make images first)")
	var gateway gatewaySwitch
	gateway.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tg, err := resolveTarget(*tgt, *docker)
	if err != nil {
		return err
	}
	if err := installTarget(ctx, tg); err != nil {
		return err
	}
	cleanLeftovers(stderr)
	opts := certify.Options{DatabaseURL: *dbURL, NoGatewayIdempotency: gateway.off}
	if inDocker(*docker, tg) {
		opts.Launch, opts.Mode = dockerLauncher(), "docker"
	}
	start := time.Now()
	c, err := certify.Doctor(ctx, tg, opts)
	if err != nil {
		return &exitError{code: exitEnv, err: err}
	}
	fmt.Fprintf(stdout, "%s: first contact in %s\n", tg.Name, time.Since(start).Round(100*time.Millisecond))
	c.WriteText(stdout)
	if it, blocked := c.Blocking(); blocked {
		fmt.Fprintf(stdout, "certify would stop here: %s\n", it.Check)
		return &exitError{code: exitEnv, err: errSilent}
	}
	fmt.Fprintf(stdout, "certify can run: idemcheck certify --target %s\n", *tgt)
	return nil
}
