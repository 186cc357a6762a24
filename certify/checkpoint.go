package certify

import (
	"context"
	"maps"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/reports"
)

// DefaultCheckpointEvery is how often a run hands its report so far to
// Options.Checkpoint: a runner killed by its CI time limit or the
// out-of-memory killer still leaves every violation found up to a minute
// before.
const DefaultCheckpointEvery = 30 * time.Second

// checkpoints calls opts.Checkpoint with the report so far every
// CheckpointEvery until the returned stop is called.
func (c *certification) checkpoints(ctx context.Context) (stop func()) {
	every := c.opts.CheckpointEvery
	if c.opts.Checkpoint == nil || every <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				c.opts.Checkpoint(c.snapshot())
			}
		}
	}()
	return func() { cancel(); <-done }
}

// snapshot is the report of the run so far, marked incomplete: every
// family's examples judged until now, the checks they decided and the
// violations kept with their histories. It reads only what the families
// share under their aggregates' locks; the families go on meanwhile.
func (c *certification) snapshot() *reports.Report {
	snap := *c.rep
	snap.Families, snap.Checks, snap.Violations = nil, nil, nil
	snap.Counterexamples = map[string]*history.History{}
	snap.Complete, snap.Verdict = false, "unknown"
	snap.Duration = reports.Duration(time.Since(snap.Started))
	snap.Interrupted = "in progress: a checkpoint of the run so far"
	var merged checker.Merger
	for _, fr := range c.families {
		res := fr.agg.result()
		part := &familyRun{FamilyResult: reports.FamilyResult{Name: fr.fam.Name, Level: fr.fam.Level, Verdict: string(res.Verdict), Scenarios: fr.agg.count(),
			Note: "in progress"}, fam: fr.fam, agg: fr.agg}
		snap.Families = append(snap.Families, part.FamilyResult)
		addFamily(&snap, part, res)
		merged.Add(res)
	}
	all := merged.Result()
	snap.Level, snap.LevelNote, snap.Coverage = all.Level, all.LevelNote, all.Coverage
	snap.Env = maps.Clone(c.rep.Env)
	return &snap
}
