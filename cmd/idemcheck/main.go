// Command idemcheck certifies servers that implement idempotency keys for
// payments: can this server ever charge a customer twice?
//
//	idemcheck init --openapi api.yaml --command "./bin/server" --out my-server.yaml
//	idemcheck certify --target reference
//	idemcheck run concurrent-duplicates --target ./my-server.yaml
//	idemcheck replay scenarios/incidents/concurrent-double-charge.yaml --target naive
//	idemcheck list
//	idemcheck demo
//	idemcheck merge --report-dir report shard-1 shard-2
//	idemcheck version
//
// Exit codes: 0 every check passed (NON-STRICT allowed unless --strict),
// 1 a check FAILED, 2 bad usage or a bad target/scenario file, 3 the
// environment could not be set up or a check could not be decided, 4 a
// replayed incident did not reproduce its expected verdicts.
//
// It is the top of the stage order (history lowest; checker on history;
// target, client, the harness and the runner in scenarios; reports on
// history and checker; certify on all of those) and may import any
// package; nothing imports it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes, documented in README.md ("Exit codes").
const (
	exitPass          = 0
	exitFail          = 1
	exitUsage         = 2
	exitEnv           = 3
	exitNotReproduced = 4 // replay: an incident's expected verdicts did not hold against its own target
)

// exitError carries an exit code with the error that caused it.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	servePprof(os.Stderr)
	limitMemory()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(report(err, os.Stderr))
}

func report(err error, stderr io.Writer) int {
	if err == nil {
		return exitPass
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err != errSilent {
			fmt.Fprintln(stderr, "idemcheck:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "idemcheck:", err)
	return exitUsage
}

// errSilent is an exit whose reason was already printed.
var errSilent = errors.New("")

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"init", "write a starter target file, from an OpenAPI 3 document or a template", runInit},
		{"doctor", "first contact: start a target, send a handful of requests, print a checklist", runDoctor},
		{"certify", "run the conformance families against a target and write reports", runCertify},
		{"run", "run one family against a target (for developing a server)", runFamily},
		{"replay", "replay one incident file exactly and print its verdicts", runReplay},
		{"list", "list built-in targets, families and incidents", runList},
		{"demo", "certify the reference and two broken servers", runDemo},
		{"merge", "merge the reports of certify --shard runs into one", runMerge},
		{"version", "print the version and commit this binary was built from", runVersion},
		{"verify", "say whether a report.json was edited after its run (its seal)", runVerify},
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		if len(args) == 0 {
			return &exitError{code: exitUsage, err: errSilent}
		}
		return nil
	}
	var names []string
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
		names = append(names, c.name)
	}
	return usageErr("unknown command %q: expected one of %s (see idemcheck --help)", args[0], strings.Join(names, ", "))
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "idemcheck: a chaos and conformance harness for payment idempotency keys")
	fmt.Fprintln(w, "\nUsage: idemcheck <command> [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'idemcheck <command> --help' for a command's flags and an example.")
	fmt.Fprintln(w, "Exit codes: 0 pass, 1 a check FAILED, 2 bad usage or file, 3 environment could not be set up")
	fmt.Fprintln(w, "or a check could not be decided, 4 a replayed incident did not reproduce.")
}
