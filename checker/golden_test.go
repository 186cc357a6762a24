package checker_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
)

// ident is what a golden test pins of a violation: which invariant, whose
// key and order, and exactly which ops and charges prove it.
type ident struct {
	Invariant, Tenant, Key, Order string
	Ops                           []int
	Charges                       []string
}

// golden is the expected judgement of one file in testdata/: the overall
// verdict and level, every check that is not PASS, and every violation in
// report order.
type golden struct {
	verdict    checker.Verdict
	level      string
	checks     map[string]checker.Verdict
	violations []ident
}

const (
	a = "tenant_a"
	b = "tenant_b"
)

var goldens = map[string]golden{
	"clean_sequential.json": {verdict: checker.Pass, level: "L1"},
	"clean_concurrent.json": {verdict: checker.Pass, level: "L2"},
	// Crashes at all ten crash points, each seen to fire, each key
	// converging: L4 on its own.
	"clean_crash_recovered.json": {verdict: checker.Pass, level: "L4"},
	"clean_expiry.json":          {verdict: checker.Pass, level: "L0"}, // one tenant: M5 not exercised
	"m1_double_charge.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"M1": checker.Failed, "M4": checker.Failed, "R1": checker.NonStrict},
		violations: []ident{
			{"M1", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1", "ch_2"}},
			{"M1", "", "", "ord_2", []int{2, 3}, []string{"ch_3", "ch_4"}},
			{"M4", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1", "ch_2"}},
			{"R1", a, "", "ord_2", []int{2}, nil},
			{"R1", a, "", "ord_2", []int{3}, nil},
		},
	},
	"m2_phantom.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"M2": checker.Failed},
		violations: []ident{
			{"M2", a, "k1", "ord_1", []int{0}, nil},
			{"M2", a, "k2", "ord_2", []int{1}, []string{"ch_2"}},
		},
	},
	"m3_false_failure.json": {
		verdict: checker.Failed, level: "L0",
		checks:     map[string]checker.Verdict{"M3": checker.Failed},
		violations: []ident{{"M3", a, "k1", "ord_1", []int{0}, []string{"ch_1"}}},
	},
	"m4_inconsistent_replay.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"M3": checker.Failed, "M4": checker.Failed},
		violations: []ident{
			{"M3", a, "k1", "ord_1", []int{0, 1}, []string{"ch_2"}},
			{"M4", a, "k1", "ord_1", []int{0, 1}, []string{"ch_2"}},
		},
	},
	"m5_tenant_leak.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"M2": checker.Failed, "M5": checker.Failed},
		violations: []ident{
			{"M2", b, "k1", "ord_b", []int{1}, []string{"ch_1"}},
			{"M5", b, "k1", "ord_b", []int{1}, []string{"ch_1"}},
		},
	},
	"m6_stuck.json": {
		verdict: checker.Failed, level: "L0",
		checks:     map[string]checker.Verdict{"M6": checker.Failed},
		violations: []ident{{"M6", a, "k1", "ord_1", []int{0, 1, 2}, nil}},
	},
	"m6_unknown_unhealed.json": {
		verdict: checker.Unknown, level: "L0",
		checks: map[string]checker.Verdict{"M6": checker.Unknown},
	},
	"m6_unknown_not_retried.json": {
		verdict: checker.Unknown, level: "L0",
		checks: map[string]checker.Verdict{"M6": checker.Unknown},
	},
	"p1_payload_accepted.json": {
		verdict: checker.Failed, level: "L0",
		checks:     map[string]checker.Verdict{"P1": checker.Failed},
		violations: []ident{{"P1", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1"}}},
	},
	"p2_equal_refused.json": {
		verdict: checker.Failed, level: "L0",
		checks:     map[string]checker.Verdict{"P2": checker.Failed},
		violations: []ident{{"P2", a, "k1", "ord_1", []int{0, 1}, nil}},
	},
	"r1_missing_key.json": {
		verdict: checker.NonStrict, level: "L0",
		checks: map[string]checker.Verdict{"R1": checker.NonStrict},
		violations: []ident{
			{"R1", a, "", "ord_1", []int{0}, nil},
			{"R1", a, "", "ord_2", []int{1}, nil},
			{"R1", a, "k4", "ord_4", []int{3}, nil},
		},
	},
	"r2_wrong_status.json": {
		verdict: checker.NonStrict, level: "L0",
		checks:     map[string]checker.Verdict{"R2": checker.NonStrict},
		violations: []ident{{"R2", a, "k1", "ord_1", []int{1}, nil}},
	},
	"r3_immediate_409.json": {
		verdict: checker.NonStrict, level: "L0",
		checks: map[string]checker.Verdict{"R3": checker.NonStrict},
		violations: []ident{
			{"R3", a, "k1", "ord_1", []int{1}, nil},
			{"R3", a, "k1", "ord_1", []int{2}, nil},
			{"R3", a, "k1", "ord_1", []int{3}, nil},
		},
	},
	"r4_no_replay_marker.json": {
		verdict: checker.Informational, level: "L0",
		checks:     map[string]checker.Verdict{"R4": checker.Informational},
		violations: []ident{{"R4", a, "k1", "ord_1", []int{1, 2}, []string{"ch_1"}}},
	},
	"e1_early_expiry.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"M1": checker.Failed, "M4": checker.Failed, "E1": checker.Failed},
		violations: []ident{
			{"M1", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1", "ch_2"}},
			{"M4", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1", "ch_2"}},
			{"E1", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1", "ch_2"}},
		},
	},
	"e2_retry_window.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"M1": checker.Failed, "M4": checker.Failed, "E2": checker.Failed},
		violations: []ident{
			{"M1", a, "k1", "ord_1", []int{0, 1, 2}, []string{"ch_1", "ch_2"}},
			{"M4", a, "k1", "ord_1", []int{0, 2}, []string{"ch_1", "ch_2"}},
			{"E2", a, "k1", "ord_1", []int{0, 2}, []string{"ch_1", "ch_2"}},
		},
	},
	// Retries past the TTL, none inside the declared window: E2 is not
	// exercised (no L5), not UNKNOWN, since a family merges many examples
	// and one whose probes missed the window must not make a run that
	// tested it elsewhere undecided.
	"e2_unknown_no_late_retry.json": {
		verdict: checker.Pass, level: "L0",
		checks: map[string]checker.Verdict{"E2": checker.Pass},
	},

	// The only fault a slow gateway, which crashes nothing: L3.
	"l4_slow_only.json": {verdict: checker.Pass, level: "L3"},
	// 429 + Retry-After to an in-flight duplicate (recorded "fail"
	// by a client that read it as definitive) is indeterminate: nothing fails.
	"r3_429_in_flight.json": {verdict: checker.Pass, level: "L0"},
	// A double charge at TTL-ε (TTL = window = 1s) is UNKNOWN; a
	// replay at TTL+ε and a new charge past the band are fine.
	"e1_ttl_edge.json": {
		verdict: checker.Unknown, level: "L0",
		checks: map[string]checker.Verdict{"M1": checker.Unknown, "M4": checker.Unknown, "E1": checker.Unknown},
	},
	// A double charge just inside the retry window's end: UNKNOWN.
	"e2_window_edge.json": {
		verdict: checker.Unknown, level: "L0",
		checks: map[string]checker.Verdict{"M1": checker.Unknown, "M4": checker.Unknown, "E2": checker.Unknown},
	},
	// The ledger stamps the charge 4ms after its request completed,
	// while a mutated retry was in flight: still the first request's.
	"attribution_clock_offset.json": {verdict: checker.Pass, level: "L0"},
	// A success body without the order is a protocol grade.
	"r5_no_order_in_response.json": {
		verdict: checker.NonStrict, level: "L0",
		checks:     map[string]checker.Verdict{"R5": checker.NonStrict},
		violations: []ident{{"R5", a, "k1", "ord_1", []int{0, 1}, nil}},
	},
	// A 503 from a replica warming up, the answer, then a 429 to a
	// concurrent probe: converged.
	"m6_trailing_retries.json": {verdict: checker.Pass, level: "L0"},
	// The duplicate raced the first request: M1's, not E1's.
	"e1_race_not_expiry.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"M1": checker.Failed, "M4": checker.Failed},
		violations: []ident{
			{"M1", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1", "ch_2"}},
			{"M4", a, "k1", "ord_1", []int{0, 1}, []string{"ch_2", "ch_1"}},
		},
	},
	// An immediate 500 to an in-flight duplicate while only the
	// owner's gateway link was slow.
	"r3_immediate_5xx.json": {
		verdict: checker.NonStrict, level: "L0",
		checks:     map[string]checker.Verdict{"R3": checker.NonStrict},
		violations: []ident{{"R3", a, "k1", "ord_1", []int{1}, nil}},
	},
	// A charge made after every request of its order had completed.
	"m1_late_charge.json": {
		verdict: checker.Failed, level: "L0",
		checks:     map[string]checker.Verdict{"M1": checker.Failed},
		violations: []ident{{"M1", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1", "ch_2"}}},
	},
	// Money without an order, and for an order no example sent.
	"a1_orphan_foreign.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"A1": checker.Failed},
		violations: []ident{
			{"A1", "", "", "", nil, []string{"ch_orphan"}},
			{"A1", "", "", "ord_nobody", nil, []string{"ch_foreign"}},
		},
	},
	"m1_keyed_and_keyless.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"M1": checker.Failed, "R1": checker.NonStrict},
		violations: []ident{
			{"M1", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1", "ch_2"}},
			{"R1", a, "", "ord_1", []int{1}, nil},
		},
	},
	"p1_racing_bodies.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"M1": checker.Failed, "P1": checker.Failed},
		violations: []ident{
			{"M1", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1", "ch_2"}},
			{"P1", a, "k1", "ord_1", []int{0, 1}, []string{"ch_2"}},
		},
	},
	"m5_one_charge_two_tenants.json": {
		verdict: checker.Failed, level: "L0",
		checks:     map[string]checker.Verdict{"M5": checker.Failed},
		violations: []ident{{"M5", b, "k1", "ord_a", []int{0, 1}, []string{"ch_1"}}},
	},
	"m6_converged_to_failure.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"M3": checker.Failed, "M6": checker.Failed},
		violations: []ident{
			{"M3", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1"}},
			{"M6", a, "k1", "ord_1", []int{1}, []string{"ch_1"}},
		},
	},
	"m6_converged_to_phantom.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"M2": checker.Failed, "M6": checker.Failed},
		violations: []ident{
			{"M2", a, "k1", "ord_1", []int{1}, nil},
			{"M6", a, "k1", "ord_1", []int{1}, nil},
		},
	},
	"p1_replayed_decline.json": {
		verdict: checker.Failed, level: "L0",
		checks:     map[string]checker.Verdict{"P1": checker.Failed},
		violations: []ident{{"P1", a, "k1", "ord_1", []int{0, 1}, nil}},
	},
	// A service with its own request shape (the order in the path, a
	// form body) that echoes USD for a charge the ledger holds in usd:
	// the same money, so not M2. A retry in another parameter order is
	// the same request (P2 exercised); a body in USD and another order's
	// path are different ones, refused with 422.
	"m2_currency_any_case.json": {verdict: checker.Pass, level: "L0"},
	// The same shape on a server keyed on the Idempotency-Key alone:
	// another order's path, and a body whose currency is USD instead of
	// usd, each get the first answer.
	"p1_other_path_or_currency.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"P1": checker.Failed},
		violations: []ident{
			{"P1", a, "k1", "ord_1_b", []int{0, 1}, []string{"ch_1"}},
			{"P1", a, "k1", "ord_1", []int{0, 2}, []string{"ch_1"}},
		},
	},
	// Nothing wrong in it, and that proves too little.
	"incomplete.json": {verdict: checker.Unknown, level: "L0"},

	// A server that forwards its client's key to the gateway and keeps no
	// record of its own: the gateway replays a retry at 5s, then forgets
	// the key at its lifetime (10.25s, the provider's 24h of a declared
	// 30-day production promise, at the recovery floor), and the retry at
	// 19.6s, inside the promise, charges again (docs/protocol.md §4).
	"m1_provider_forgot_key.json": providerForgotKey,
	// The same server under the provider's own clock per key (issue 37):
	// the gateway keeps an answered key 667ms (the provider's 24h of the
	// 30-day promise, with no recovery floor: keys a crash struck are kept
	// apart, gateway.keeps_struck), replays a retry at 0.5s and charges
	// the retry at 5s again.
	"m1_provider_forgot_answered_key.json": providerForgotKey,
	// A server correct on Stripe (it re-sends its recorded request under
	// the same gateway key after an indeterminate answer) against
	// Checkout.com, which keeps a key's result only when it answered 2xx:
	// the first attempt paid and was answered 5xx, the re-send paid again.
	"m1_checkout_resent_after_5xx.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"M1": checker.Failed},
		violations: []ident{
			{"M1", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1", "ch_2"}},
		},
	},
	// The same server against a gateway without idempotency: two
	// concurrent duplicates, two charges under one gateway key.
	"m1_gateway_without_idempotency.json": {
		verdict: checker.Failed, level: "L0",
		checks: map[string]checker.Verdict{"M1": checker.Failed, "M4": checker.Failed},
		violations: []ident{
			{"M1", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1", "ch_2"}},
			{"M4", a, "k1", "ord_1", []int{0, 1}, []string{"ch_1", "ch_2"}},
		},
	},
	// clean_crash_recovered.json recorded against a gateway without
	// idempotency: L4 is not judged (not failed), the level stops at L3.
	"l4_gateway_without_idempotency.json": {verdict: checker.Pass, level: "L3"},
}

// providerForgotKey is what a server that keeps no record of its own
// fails once the gateway forgot its key: the late retry's second charge.
var providerForgotKey = golden{
	verdict: checker.Failed, level: "L0",
	checks: map[string]checker.Verdict{"M1": checker.Failed, "M4": checker.Failed, "E2": checker.Failed, "G1": checker.Informational},
	violations: []ident{
		{"M1", a, "k1", "ord_1", []int{0, 1, 2}, []string{"ch_1", "ch_2"}},
		{"M4", a, "k1", "ord_1", []int{0, 2}, []string{"ch_1", "ch_2"}},
		{"E2", a, "k1", "ord_1", []int{0, 2}, []string{"ch_1", "ch_2"}},
		{"G1", "", "", "ord_1", nil, []string{"ch_1"}},
	},
}

// TestGolden_Histories re-checks every hand-written history in testdata/
// and pins each check's verdict and each violation's identity.
func TestGolden_Histories(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(goldens) {
		t.Errorf("testdata holds %d histories, the table %d: keep them in step", len(files), len(goldens))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			want, ok := goldens[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			r := checker.Check(load(t, f))
			assertGolden(t, r, want)
		})
	}
}

// TestGolden_PaymentIntentAnswers re-checks every golden history as a
// server charging through PaymentIntents would have recorded it: each
// ledger charge made by a PaymentIntent pi_X, and each answer naming
// pi_X instead of its charge ch_X. The judgement must be the golden's,
// check for check and violation for violation: a PaymentIntent and its
// charge are one money movement. An answer naming a PaymentIntent the
// ledger does not know (m2_phantom's pi_9) is still no such charge.
func TestGolden_PaymentIntentAnswers(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			h := asPaymentIntents(load(t, f))
			r := checker.Check(h)
			assertGolden(t, r, goldens[name])
			if name == "m2_phantom.json" && !strings.Contains(explanations(r, "M2"), "the ledger holds no charge pi_9") {
				t.Errorf("M2 on an unknown PaymentIntent: %s", explanations(r, "M2"))
			}
		})
	}
}

// asPaymentIntents rewrites h's charge ids ch_X in answers to pi_X, and
// records pi_X on the ledger charge ch_X.
func asPaymentIntents(h *history.History) *history.History {
	for i, c := range h.Charges {
		h.Charges[i].Alias = "pi_" + strings.TrimPrefix(c.ID, "ch_")
	}
	for i, o := range h.Ops {
		if rest, ok := strings.CutPrefix(o.ChargeID, "ch_"); ok {
			h.Ops[i].ChargeID = "pi_" + rest
		}
	}
	return h
}

func explanations(r checker.Result, id string) string {
	var b strings.Builder
	for _, c := range r.Checks {
		for _, v := range c.Violations {
			if c.ID == id {
				b.WriteString(v.Explanation + "\n")
			}
		}
	}
	return b.String()
}

func load(t testing.TB, path string) *history.History {
	t.Helper()
	h, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func assertGolden(t *testing.T, r checker.Result, want golden) {
	t.Helper()
	if r.Verdict != want.verdict || r.Level != want.level {
		t.Errorf("verdict %s level %s (%s), want %s %s", r.Verdict, r.Level, r.LevelNote, want.verdict, want.level)
	}
	var got []ident
	for _, c := range r.Checks {
		wantV, ok := want.checks[c.ID]
		if !ok {
			wantV = checker.Pass
		}
		if c.Verdict != wantV {
			t.Errorf("%s: %s, want %s (%s)", c.ID, c.Verdict, wantV, c.Note)
		}
		for _, v := range c.Violations {
			got = append(got, ident{v.Invariant, v.Tenant, v.Key, v.Order, v.Ops, v.Charges})
		}
	}
	if !reflect.DeepEqual(got, want.violations) {
		t.Errorf("violations:\n got %+v\nwant %+v", got, want.violations)
	}
}

// TestGolden_MergeCertifies shows why certification merges families: no
// single clean history reaches L5, together they do.
func TestGolden_MergeCertifies(t *testing.T) {
	var rs []checker.Result
	for _, f := range []string{"clean_sequential", "clean_concurrent", "clean_crash_recovered", "clean_expiry"} {
		rs = append(rs, checker.Check(load(t, "testdata/"+f+".json")))
	}
	m := checker.Merge(rs...)
	if m.Verdict != checker.Pass || m.Level != "L5" {
		t.Fatalf("merged: %s %s (%s), want PASS L5", m.Verdict, m.Level, m.LevelNote)
	}
	if m.Coverage.Histories != 4 {
		t.Errorf("merged coverage counts %d histories", m.Coverage.Histories)
	}
}

// TestGolden_MergeKeepsWorst: one failing family fails the certification.
func TestGolden_MergeKeepsWorst(t *testing.T) {
	m := checker.Merge(
		checker.Check(load(t, "testdata/clean_crash_recovered.json")),
		checker.Check(load(t, "testdata/m1_double_charge.json")),
	)
	c, _ := m.Find("M1")
	if !m.Failed() || m.Level != "L0" || c.Verdict != checker.Failed || len(c.Violations) != 2 {
		t.Fatalf("merged: %s %s, M1 %s with %d violations", m.Verdict, m.Level, c.Verdict, len(c.Violations))
	}
}

// TestMerge_OneUntestedWindowLeavesE2ToTheOthers: a family whose one
// example's probes all missed the declared window still has E2 exercised
// and passed by the examples that hit it; nothing is UNKNOWN.
func TestMerge_OneUntestedWindowLeavesE2ToTheOthers(t *testing.T) {
	missed := checker.Check(load(t, "testdata/e2_unknown_no_late_retry.json"))
	tested := checker.Check(load(t, "testdata/clean_expiry.json"))
	m := checker.Merge(missed, tested)
	e2, _ := m.Find("E2")
	if e2.Verdict != checker.Pass || !e2.Exercised {
		t.Fatalf("E2 after merge: %s exercised=%v (%s)", e2.Verdict, e2.Exercised, e2.Note)
	}
	// Its note is the judgement, not the one example's "not exercised"
	// beside it, in either order.
	for _, m := range []checker.Result{m, checker.Merge(tested, missed)} {
		if e2, _ := m.Find("E2"); strings.Contains(e2.Note, "not exercised") {
			t.Errorf("E2's note after merge: %q", e2.Note)
		}
	}
	if m.Verdict == checker.Unknown {
		t.Fatalf("merged verdict UNKNOWN: %s", m.LevelNote)
	}
}
