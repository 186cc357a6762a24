package checker_test

import (
	"testing"

	"github.com/idemcheck/idemcheck/checker"
)

// TestP1_RefusedCredentialsAreNoStoredAnswer: two requests without
// credentials under one key, with different bodies, both refused 401, are
// each refused for their credentials: the second is no replay of a stored
// failure.
func TestP1_RefusedCredentialsAreNoStoredAnswer(t *testing.T) {
	b := newBuilder()
	b.op("", "k1", "oa", 0, 10*ms, 401, "")
	other := b.op("", "k1", "ob", 20*ms, 30*ms, 401, "")
	other.Body = bodyOf("ob", 4200, "usd")
	if c, _ := checker.Check(b.history()).Find("P1"); c.Verdict != checker.Pass || !c.Exercised {
		t.Errorf("P1 %s (exercised %v): %v", c.Verdict, c.Exercised, c.Violations)
	}
	b = newBuilder()
	b.op("t1", "k1", "oa", 0, 10*ms, 402, "")
	other = b.op("t1", "k1", "ob", 20*ms, 30*ms, 402, "")
	other.Body = bodyOf("ob", 4200, "usd")
	if c, _ := checker.Check(b.history()).Find("P1"); c.Verdict != checker.Failed {
		t.Errorf("P1 %s for a replayed decline: want FAILED", c.Verdict)
	}
}

// TestR2_RefusedCredentialsSayNothingOfTheBody: a different body refused
// 401 for its credentials is no R2 deviation.
func TestR2_RefusedCredentialsSayNothingOfTheBody(t *testing.T) {
	b := newBuilder()
	b.op("", "k1", "oa", 0, 10*ms, 401, "")
	other := b.op("", "k1", "ob", 20*ms, 30*ms, 401, "")
	other.Body = bodyOf("ob", 4200, "usd")
	if c, _ := checker.Check(b.history()).Find("R2"); c.Verdict != checker.Pass {
		t.Errorf("R2 %s: %v", c.Verdict, c.Violations)
	}
}
