package certify

import (
	"context"
	"time"

	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/target"
)

// Doctor starts tg's environment as certify does, makes first contact
// (package contact) and tears it down: the checklist, in seconds, of
// what a certification would find wrong with the target file before any
// family plays. An error is an environment that could not be set up; a
// checklist whose Blocked is true is a run certify would stop.
func Doctor(ctx context.Context, tg *target.Target, opts Options) (*reports.Contact, error) {
	opts.defaults()
	start := time.Now()
	env, closeEnv, err := environment(ctx, tg, opts)
	if err != nil {
		return nil, err
	}
	defer closeEnv()
	_, c, _ := firstContact(ctx, tg, env, time.Since(start))
	return c, nil
}
