package main

import (
	"os"
	"slices"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/internal/redisserver"
)

// Ranges of the numeric flags. A value outside its range is bad usage
// (exit 2) naming the flag, before anything starts: `--replicas -3` must
// not run a certification.
const (
	maxReplicas = 16 // the same bound a target file's replicas: has
	maxBudget   = 7 * 24 * time.Hour
	maxParallel = 64
)

// checkSeed rejects seed 0, which certify would silently turn into 1.
func checkSeed(v uint64) error {
	if v == 0 {
		return usageErr("--seed: expected a seed of 1 or more, got 0")
	}
	return nil
}

// checkBudget checks a wall-time budget: positive and at most a week.
func checkBudget(d time.Duration) error {
	if d <= 0 || d > maxBudget {
		return usageErr("--budget: expected a positive duration such as 60s (at most %s), got %s", maxBudget, d)
	}
	return nil
}

// check range-checks every numeric flag of certify and run, and the
// values of the enumerated ones.
func (f *certifyFlags) check() error {
	if f.replicas < 0 || f.replicas > maxReplicas {
		return usageErr("--replicas: expected 0 (the target's own count) to %d, got %d", maxReplicas, f.replicas)
	}
	if f.parallel < 1 || f.parallel > maxParallel {
		return usageErr("--parallel: expected 1 to %d examples in flight, got %d", maxParallel, f.parallel)
	}
	if err := checkSeed(f.seed); err != nil {
		return err
	}
	if !slices.Contains(redisserver.Fsyncs, f.redisFsync) {
		return usageErr("--redis-appendfsync: expected one of %s, got %q", strings.Join(redisserver.Fsyncs, ", "), f.redisFsync)
	}
	if f.keep != "" {
		if err := os.MkdirAll(f.keep, 0o755); err != nil {
			return usageErr("--keep-histories: expected a folder that can be written, got %q: %v", f.keep, err)
		}
	}
	return checkBudget(f.budget)
}
