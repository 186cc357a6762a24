package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/idemcheck/idemcheck/target/openapi"
)

// initFlags are the flags of init.
type initFlags struct {
	openapi, operation, command, out, name string
	amount, currency, orderID              string
	force                                  bool
}

// runInit writes a starter target file: a commented template, or one
// read from an OpenAPI 3 document's charge operation (openapi.Init). It
// writes to stdout or --out, never over a file without --force, and
// prints the next step on stderr.
func runInit(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var f initFlags
	fs := newFlagSet("init", "init [--openapi spec.yaml] [--operation ID] [--command \"...\"] [--out FILE [--force]]",
		`idemcheck init --openapi api.yaml --command "./bin/server --port={{.Port}}" --out target.yaml`, stderr)
	fs.StringVar(&f.openapi, "openapi", "", "an OpenAPI 3 document (YAML or JSON) to read the charge operation from; without it, a commented template")
	fs.StringVar(&f.operation, "operation", "", "the charge operation's operationId (default: the one operation with an Idempotency-Key header)")
	fs.StringVar(&f.command, "command", "", "the command line that starts one replica, as a shell would split it (fills start.command and start.args)")
	fs.StringVar(&f.out, "out", "", "write the target file here (default: stdout)")
	fs.BoolVar(&f.force, "force", false, "overwrite --out if it exists")
	fs.StringVar(&f.name, "name", "", "the target's name (default: from the document's title)")
	fs.StringVar(&f.amount, "amount", "", "the property `path` that holds the amount (amount.value or /amount/value), where the document has several candidates")
	fs.StringVar(&f.currency, "currency", "", "the property `path` that holds the currency, where the document has several candidates")
	fs.StringVar(&f.orderID, "order-id", "", "the property `path` that holds the order id (metadata.order_id), or the path parameter, where the document has several candidates")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("init: unexpected argument %q (flags come as --name value)", fs.Arg(0))
	}
	if f.operation != "" && f.openapi == "" {
		return usageErr("init: --operation needs --openapi")
	}
	if f.out != "" && !f.force {
		if _, err := os.Stat(f.out); err == nil {
			return usageErr("init: --out %s exists: pass --force to overwrite it", f.out)
		}
	}
	res, err := openapi.Init(openapi.Options{Spec: f.openapi, Operation: f.operation, Command: f.command, Name: f.name,
		Amount: f.amount, Currency: f.currency, OrderID: f.orderID, Out: f.out})
	if err != nil {
		if errors.Is(err, openapi.ErrSpec) || errors.Is(err, openapi.ErrCommand) {
			return &exitError{code: exitUsage, err: err}
		}
		return err
	}
	for _, n := range res.Notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	if f.out == "" {
		_, err := stdout.Write(res.YAML)
		fmt.Fprintln(stderr, "Next: save it as a file (--out target.yaml), then run idemcheck doctor --target target.yaml")
		return err
	}
	if err := os.WriteFile(f.out, res.YAML, 0o644); err != nil {
		return &exitError{code: exitEnv, err: fmt.Errorf("init: %w", err)}
	}
	next := f.out
	if !strings.HasSuffix(next, ".yaml") && !strings.HasSuffix(next, ".yml") && !strings.Contains(next, "/") {
		next = "./" + next // a bare name would be taken for a built-in target
	}
	fmt.Fprintf(stderr, "wrote %s\nNext: idemcheck doctor --target %s\n", f.out, next)
	return nil
}
