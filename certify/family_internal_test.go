package certify

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/target"
)

// TestRunFamily_CrashesNotJudgedWithoutGatewayIdempotency: with the
// gateway's idempotency off, or a target whose provider is none, a family
// that crashes servers is not played (no runner, no example) and reported
// as not judged with the reason: a PASS that certifies nothing, never a
// FAILED or an UNKNOWN; the report and every replay command say the
// gateway ran without keys.
func TestRunFamily_CrashesNotJudgedWithoutGatewayIdempotency(t *testing.T) {
	for _, c := range []struct {
		why      string
		off      bool
		provider string
	}{{"--gateway-idempotency off", true, ""}, {"gateway.provider: none", false, "none"}} {
		t.Run(c.why, func(t *testing.T) {
			tg := &target.Target{Name: "t", Policy: target.Policy{TTL: time.Second, RetryWindow: 20 * time.Second, RecoveryWindow: 2 * time.Second, MaxWait: time.Second},
				Gateway: target.Gateway{Provider: c.provider}}
			opts := Options{Families: families.MustSelect("crash-window", "mixed"), NoGatewayIdempotency: c.off}
			opts.defaults()
			rep := newReport(tg, opts)
			cert := newCertification(tg, nil, rep, time.Now(), opts)
			for _, fr := range cert.families {
				cert.runFamily(context.Background(), fr)
				res := fr.result()
				m6, _ := res.Find("M6")
				if !fr.NotJudged || fr.Scenarios != 0 || res.Verdict != checker.Pass || m6.Exercised || !strings.Contains(fr.Note, checker.NoProviderIdempotency) || !strings.Contains(fr.Note, c.why) {
					t.Errorf("%s: not judged %v, %d scenarios, %s, M6 exercised %v, note %q", fr.Name, fr.NotJudged, fr.Scenarios, res.Verdict, m6.Exercised, fr.Note)
				}
				if fr.Grade() != "not judged" {
					t.Errorf("%s graded %q", fr.Name, fr.Grade())
				}
			}
			if !rep.Gateway.NoIdempotency || rep.Gateway.Provider != c.provider || !strings.HasSuffix(targetArg(rep), " --gateway-idempotency off") {
				t.Errorf("report gateway %+v, replay target %q", rep.Gateway, targetArg(rep))
			}
		})
	}
}

// TestRunFamily_PolicyWithNoRoomForTheFamilyIsUnknown: among the default
// families, one whose question the target's policy leaves no room for
// (crash-window against a promise of a second: its retries would land
// past it, exact-ttl) is not played, and its checks stay UNKNOWN naming
// the policy value to change; never a verdict on examples it could not
// judge.
func TestRunFamily_PolicyWithNoRoomForTheFamilyIsUnknown(t *testing.T) {
	tg := &target.Target{Name: "t", Policy: target.Policy{TTL: time.Second, RetryWindow: time.Second, RecoveryWindow: 2 * time.Second, MaxWait: time.Second}}
	opts := Options{Families: families.MustSelect("crash-window")}
	opts.defaults()
	c := newCertification(tg, nil, newReport(tg, opts), time.Now(), opts)
	fr := c.families[0]
	c.runFamily(context.Background(), fr)
	res := fr.result()
	m6, _ := res.Find("M6")
	if fr.Scenarios != 0 || res.Verdict != checker.Unknown || m6.Verdict != checker.Unknown || !strings.Contains(fr.Note, "policy.recovery_window") {
		t.Errorf("%d scenarios, %s, M6 %s, note %q", fr.Scenarios, res.Verdict, m6.Verdict, fr.Note)
	}
}
