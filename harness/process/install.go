package process

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/idemcheck/idemcheck/target"
)

// Install runs the target's install step (go build, npm ci, pip install)
// once, before anything starts, so that a build never counts against a
// run's budget or a replica's readiness timeout. Its output goes to log;
// a failure names the command, its folder and the last lines it printed.
// A target without install: is left alone.
func Install(ctx context.Context, t *target.Target, log io.Writer) error {
	in := t.Install
	if in == nil {
		return nil
	}
	var tail bytes.Buffer
	cmd := exec.CommandContext(ctx, in.Command, in.Args...)
	cmd.Dir = in.Dir
	cmd.Stdout = io.MultiWriter(log, &tail)
	cmd.Stderr = cmd.Stdout
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("install step of %s (%s %s, in %s): %w\n%s", t.Name, in.Command,
			strings.Join(in.Args, " "), in.Dir, err, lastLines(tail.String(), 20))
	}
	return nil
}

// lastLines is the end of s, at most n lines.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
