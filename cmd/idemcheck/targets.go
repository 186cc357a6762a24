package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/idemcheck/idemcheck/builtin"
	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/target"
)

// resolveTarget takes a built-in name or a target file path. In container
// mode a built-in runs the reference-server image, so no host binary is
// needed: only the command's base name is used inside the image.
func resolveTarget(arg string, docker bool) (*target.Target, error) {
	if arg == "" {
		return nil, usageErr("--target is required: a built-in name (idemcheck list) or a target file")
	}
	if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") || strings.Contains(arg, "/") {
		if _, err := os.Stat(arg); err != nil && !strings.Contains(arg, ".y") {
			return nil, usageErr("--target %s: no such file", arg)
		}
		t, err := target.Load(arg)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: err}
		}
		return t, nil
	}
	m, err := builtin.Lookup(arg)
	if err != nil {
		return nil, usageErr("--target: %v", err)
	}
	binDir := ""
	if docker {
		binDir = "/usr/local/bin"
	}
	t, err := m.Target(binDir)
	if errors.Is(err, builtin.ErrNoBinary) {
		return nil, &exitError{code: exitEnv, err: err}
	}
	if err != nil {
		return nil, usageErr("--target: %v", err)
	}
	return t, nil
}

// installTarget runs a target file's install step (process.Install) before
// anything starts and outside any budget; a failure is an environment
// error (exit 3) that names the command and ends with what it printed.
func installTarget(ctx context.Context, tg *target.Target) error {
	if err := process.Install(ctx, tg, io.Discard); err != nil {
		return &exitError{code: exitEnv, err: err}
	}
	return nil
}
