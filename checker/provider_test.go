package checker_test

import (
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/checker"
)

// TestProvider_ForgottenKeyExplained: a double charge under one gateway
// key that the gateway had forgotten says so, with when and why, and G1's
// note says how long the gateway kept keys.
func TestProvider_ForgottenKeyExplained(t *testing.T) {
	r := checker.Check(load(t, "testdata/m1_provider_forgot_key.json"))
	m1, _ := r.Find("M1")
	if len(m1.Violations) != 1 {
		t.Fatalf("M1 violations: %+v", m1.Violations)
	}
	for _, want := range []string{`gateway key "pt_tenant_a_k1"`, "the provider forgot it by 10.35s", "keeps keys 10.25s", "24h of the declared 30 days production promise", "only the provider's idempotency had held the order"} {
		if !strings.Contains(m1.Violations[0].Explanation, want) {
			t.Errorf("M1 explanation lacks %q:\n%s", want, m1.Violations[0].Explanation)
		}
	}
	if g1, _ := r.Find("G1"); !strings.Contains(g1.Note, "keeps keys 10.25s") {
		t.Errorf("G1 note does not say how long the gateway kept keys: %s", g1.Note)
	}
}

// TestProvider_ForgottenAnsweredKeyExplained: under the provider's clock
// per key, M1 says an answered key is kept the provider's share and a
// struck key until its recovery is over, with no recovery floor, and G1
// says the same.
func TestProvider_ForgottenAnsweredKeyExplained(t *testing.T) {
	r := checker.Check(load(t, "testdata/m1_provider_forgot_answered_key.json"))
	m1, _ := r.Find("M1")
	if len(m1.Violations) != 1 {
		t.Fatalf("M1 violations: %+v", m1.Violations)
	}
	want := []string{`gateway key "pt_tenant_a_k1"`, "keeps an answered key 667ms from its first request", "the key of a payment in recovery (a request answered 5xx, timed out or reset) until its recovery is over",
		"by 767ms for a key answered at once", "24h of the declared 30 days production promise", "only the provider's idempotency had held the order"}
	for _, w := range want {
		if !strings.Contains(m1.Violations[0].Explanation, w) {
			t.Errorf("M1 explanation lacks %q:\n%s", w, m1.Violations[0].Explanation)
		}
	}
	if strings.Contains(m1.Violations[0].Explanation, "recovery floor") {
		t.Errorf("M1 names a recovery floor the run did not have:\n%s", m1.Violations[0].Explanation)
	}
	if g1, _ := r.Find("G1"); !strings.Contains(g1.Note, "keeps an answered key 667ms") {
		t.Errorf("G1 note does not say how long the gateway kept answered keys: %s", g1.Note)
	}
}

// TestProvider_NoIdempotencyExplained: against a gateway without
// idempotency, the double names the key the gateway ignored.
func TestProvider_NoIdempotencyExplained(t *testing.T) {
	r := checker.Check(load(t, "testdata/m1_gateway_without_idempotency.json"))
	m1, _ := r.Find("M1")
	if len(m1.Violations) != 1 || !strings.Contains(m1.Violations[0].Explanation, "which the gateway ignored (a provider without idempotency)") {
		t.Fatalf("M1 violations: %+v", m1.Violations)
	}
}

// TestProvider_CrashSafetyNotJudged: a history recorded against a gateway
// without idempotency withholds L4 with the reason, even merged with
// histories that reached it, and fails nothing for it.
func TestProvider_CrashSafetyNotJudged(t *testing.T) {
	off := checker.Check(load(t, "testdata/l4_gateway_without_idempotency.json"))
	if off.Verdict != checker.Pass || off.Level != "L3" || !strings.HasPrefix(off.LevelNote, "L4 crash-safe not judged: "+checker.NoProviderIdempotency) {
		t.Fatalf("got %s %s (%s)", off.Verdict, off.Level, off.LevelNote)
	}
	var rs []checker.Result
	for _, f := range []string{"clean_sequential", "clean_concurrent", "clean_expiry", "l4_gateway_without_idempotency"} {
		rs = append(rs, checker.Check(load(t, "testdata/"+f+".json")))
	}
	rs = append(rs, checker.NotJudged("M6", "L4", "not run: "+checker.NoProviderIdempotency))
	m := checker.Merge(rs...)
	if m.Verdict != checker.Pass || m.Level != "L3" || !strings.Contains(m.LevelNote, "not judged") {
		t.Fatalf("merged: %s %s (%s), want PASS L3, L4 not judged", m.Verdict, m.Level, m.LevelNote)
	}
}
