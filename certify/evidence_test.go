package certify_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/families"
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/reports"
)

// lateEvents is an environment whose gateway events reach the harness
// 50-200ms after they happened, as a loaded SSE stream delivers them: a
// verdict must not depend on how fast evidence travels.
type lateEvents struct{ harness.Env }

func (e lateEvents) GatewayController() gatewaysim.Controller {
	return lateController{e.Env.GatewayController()}
}

type lateController struct{ gatewaysim.Controller }

// SubscribeSince delays every event by 50-200ms, in order.
func (c lateController) SubscribeSince(since int64) (<-chan gatewaysim.Event, func()) {
	in, cancel := c.Controller.SubscribeSince(since)
	out, stop := make(chan gatewaysim.Event), make(chan struct{})
	go func() {
		defer close(out)
		for ev := range in {
			delay := time.NewTimer(50*time.Millisecond + rand.N(150*time.Millisecond))
			select {
			case <-delay.C:
			case <-stop:
				delay.Stop()
				return
			}
			select {
			case out <- ev:
			case <-stop:
				return
			}
		}
	}()
	return out, func() { close(stop); cancel() }
}

// TestEvidence_LateLedgerEventsChangeNoVerdict: with every ledger event
// delivered 50-200ms late, the reference still passes (no "the ledger
// holds no charge" for a charge still in flight to the harness) and the
// naive server still fails M1 (no second charge lost in transit).
func TestEvidence_LateLedgerEventsChangeNoVerdict(t *testing.T) {
	dir := binDir(t)
	for _, c := range []struct {
		member string
		want   checker.Verdict
	}{{"reference", checker.Pass}, {"naive", checker.Failed}} {
		t.Run(c.member, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			tg := member(t, c.member, dir)
			env, err := process.Start(ctx, tg, harness.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer env.Close()
			rep, err := certify.Run(ctx, tg, certify.Options{Env: lateEvents{env}, Families: families.MustSelect("concurrent-duplicates"), Budget: 8 * time.Second, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[checker.Verdict]string{checker.Pass: "pass", checker.Failed: "fail"}[c.want]; rep.Verdict != want {
				t.Fatalf("%s: verdict %s, want %s; violations %+v", c.member, rep.Verdict, want, rep.Violations)
			}
			m1 := verdictOf(rep.Checks, "M1")
			if want := string(c.want); m1 != want {
				t.Errorf("%s: M1 %s, want %s", c.member, m1, want)
			}
			if c.want == checker.Pass {
				if m2 := verdictOf(rep.Checks, "M2"); m2 != string(checker.Pass) {
					t.Errorf("reference: M2 %s, want PASS with late events", m2)
				}
			}
		})
	}
}

// verdictOf is the worst verdict a report gives check id over its families.
func verdictOf(checks []reports.Check, id string) string {
	worst := checker.Verdict("absent")
	for _, c := range checks {
		if c.ID != id {
			continue
		}
		if worst == "absent" {
			worst = checker.Verdict(c.Verdict)
		}
		worst = checker.Worst(worst, checker.Verdict(c.Verdict))
	}
	return string(worst)
}
