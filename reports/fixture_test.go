package reports_test

import (
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/reports"
)

const ms = time.Millisecond

// catalog is the checker's check list, in report order.
var catalog = [][3]string{
	{"M1", "no double charge", "L1"}, {"M2", "no phantom success", "L1"}, {"M3", "no false failure", "L4"},
	{"M4", "consistent replay", "L1"}, {"M5", "tenant isolation", "all"}, {"M6", "convergence", "L4"},
	{"P1", "different payload refused", "L3"}, {"P2", "equal payload recognised", "L3"},
	{"R1", "missing or invalid key gets 400", "all"}, {"R2", "different payload gets 422", "all"},
	{"R3", "in-flight duplicate waits, then 409 with Retry-After", "all"}, {"R4", "replay marker", "all"},
	{"E1", "no early expiry", "L5"}, {"E2", "retry window covered", "L5"},
}

// grading overrides one check of one family: its verdict and whether it
// was exercised.
type grading struct {
	verdict   checker.Verdict
	exercised bool
	note      string
}

// sampleReport is a failing run of a broken zoo member: crash-window
// double-charges (M1 FAILED), key-reuse answers 400 where 422 is due (R2
// NON-STRICT), late-retry could not decide E2 (UNKNOWN), and a few checks
// were never exercised.
func sampleReport() *reports.Report {
	r := &reports.Report{
		SchemaVersion: reports.SchemaVersion, Target: "release-on-error", Verdict: "fail", Level: "L0",
		LevelNote: "L1 retry-safe not reached: M1 FAILED", Seed: 7, Budget: reports.Duration(60 * time.Second),
		Started:  time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC),
		Duration: reports.Duration(58*time.Second + 412*ms), Complete: true, Replicas: 2, Mode: "process",
		Env: map[string]string{"go": "go1.26.8", "os": "linux/amd64", "postgres": "16.4"},
		Tool: reports.Tool{Version: "v0.0.0-20260314092653-13e509f18cb7+dirty", Commit: "13e509f18cb7c9d6aceff94dab74eb156fb35212",
			Modified: true, CommitTime: "2026-03-14T09:26:53Z"},
		Coverage: checker.Coverage{Histories: 412, Ops: 5210, Keys: 1800, Orders: 1750, Tenants: 830, SequentialRetries: 900, ConcurrentDuplicates: 640, Faults: 212},
		Counterexamples: map[string]*history.History{
			"crash-window": crashHistory(),
			"key-reuse":    reuseHistory(),
		},
	}
	fams := []struct {
		name, level, verdict string
		failSeed             uint64
		over                 map[string]grading
	}{
		{"protocol", "L1", "PASS", 0, map[string]grading{"R4": {checker.Informational, true, "no Idempotent-Replayed header on 31 replays"}}},
		{"concurrent-duplicates", "L2", "PASS", 0, nil},
		{"key-reuse", "L3", "NON-STRICT", 30064771081, map[string]grading{"R2": {checker.NonStrict, true, "400 instead of 422"}}},
		{"crash-window", "L4", "FAILED", 34359738375, map[string]grading{"M1": {checker.Failed, true, "judged 96 ops over 31 keys"}}},
		{"late-retry", "L5", "UNKNOWN", 0, map[string]grading{"E2": {checker.Unknown, true, "late retry never answered"}}},
	}
	for i, f := range fams {
		r.Families = append(r.Families, reports.FamilyResult{Name: f.name, Level: f.level, Verdict: f.verdict,
			Scenarios: 60 + 7*i, Seeds: 12 + i, FailSeed: f.failSeed, Duration: reports.Duration(time.Duration(9+i) * time.Second)})
		for _, c := range catalog {
			g, ok := f.over[c[0]]
			if !ok {
				// P1/P2 only key-reuse exercises; E1/E2 only late-retry.
				exercised := !(c[0][0] == 'P' && f.name != "key-reuse") && !(c[0][0] == 'E' && f.name != "late-retry")
				g = grading{checker.Pass, exercised, ""}
			}
			r.Checks = append(r.Checks, reports.Check{ID: c[0], Name: c[1], Family: f.name, Level: c[2],
				Verdict: string(g.verdict), Exercised: g.exercised, Note: g.note})
		}
	}
	cw := &r.Families[3]
	cw.ShrunkRequests, cw.ShrunkFaults, cw.Incident = 3, 2, "reports/incident-crash-window.yaml"
	cw.Steps = []string{
		"fault gateway:charge_then_fail order=ord_c1",
		"request client=1 replica=0 key=k_c1 order=ord_c1 amount=1250",
		"fault kill replica0",
		"request client=1 replica=1 key=k_c1 order=ord_c1 amount=1250 (retry)",
	}
	r.Violations = []reports.Violation{
		{Family: "crash-window", Replay: "idemcheck replay reports/incident-crash-window.yaml --target release-on-error",
			Violation: checker.Violation{Invariant: "M1", Tenant: "tenant_a", Key: "k_c1", Order: "ord_c1",
				Explanation: "order ord_c1 charged twice: ch_2 (op 1, reply lost at the gateway) and ch_3 (op 2, the retry)",
				Ops:         []int{1, 2}, Charges: []string{"ch_2", "ch_3"}, Faults: []int{0}}},
		{Family: "key-reuse", Replay: "idemcheck replay reports/incident-key-reuse.yaml --target release-on-error",
			Violation: checker.Violation{Invariant: "R2", Tenant: "tenant_b", Key: "k_r1", Order: "ord_r2",
				Explanation: "key k_r1 reused with a different amount got 400; the draft asks for 422",
				Ops:         []int{1}}},
	}
	return r
}

// crashHistory: op 1 is charged (ch_2) but the gateway's reply is lost
// (charge_then_fail) and replica0 is killed; the retry, op 2, on replica1
// is charged again (ch_3). Ops 0 and 4 are other keys.
func crashHistory() *history.History {
	op := func(id, client, replica int, key, order, purpose string, inv, done time.Duration, out history.Outcome, status int, ch string) history.Op {
		o := history.Op{ID: id, Client: client, Replica: replica, Tenant: "tenant_a", Key: key, KeyHeader: key, Order: order,
			Amount: 1250, Currency: "usd", Purpose: purpose, Invoke: inv, Complete: done, Outcome: out, Status: status, ChargeID: ch}
		if out == history.OK {
			o.RespAmount, o.RespCurrency, o.RespOrder, o.RespStatus = o.Amount, o.Currency, o.Order, "succeeded"
			o.Replayed = purpose == "retry" && id == 3
		}
		return o
	}
	return &history.History{
		Version: history.Version, Target: "release-on-error", Family: "crash-window", Seed: 34359738375, Replicas: 2,
		Policy: history.Policy{TTL: 24 * time.Hour, RetryWindow: time.Hour, RecoveryWindow: 2 * time.Second, MaxWait: time.Second},
		Ops: []history.Op{
			op(0, 0, 0, "k_c0", "ord_c0", "first", 0, 120*ms, history.OK, 201, "ch_1"),
			op(1, 1, 0, "k_c1", "ord_c1", "first", 150*ms, 650*ms, history.Info, 502, ""),
			op(2, 1, 1, "k_c1", "ord_c1", "retry", 700*ms, 900*ms, history.OK, 201, "ch_3"),
			op(3, 2, 1, "k_c1", "ord_c1", "retry", 940*ms, 1010*ms, history.OK, 201, "ch_3"),
			op(4, 0, 1, "k_c2", "ord_c2", "first", 200*ms, 480*ms, history.Fail, 402, ""),
			op(5, 2, 0, "k_c1", "ord_c1", "duplicate", 300*ms, 640*ms, history.Info, 0, ""),
		},
		Faults: []history.Fault{
			{ID: 0, Name: "gateway:charge_then_fail", Target: "replica0->gateway", Inject: 140 * ms, Heal: 400 * ms, Healed: true, Order: "ord_c1"},
			{ID: 1, Name: "kill", Target: "replica0", Inject: 420 * ms, Heal: 760 * ms, Healed: true},
			{ID: 2, Name: "latency", Target: "client->replica1", Params: map[string]string{"latency": "80ms"}, Inject: 680 * ms, Heal: 980 * ms, Healed: true},
			{ID: 3, Name: "reset_peer", Target: "replica1->postgres", Inject: 860 * ms, Healed: false},
		},
		Charges: []history.Charge{
			{ID: "ch_1", Order: "ord_c0", Amount: 1250, Currency: "usd", Status: "succeeded", IdempotencyKey: "req_1", APIKey: "sk_test_sut", At: 60 * ms},
			{ID: "ch_d", Order: "ord_c2", Amount: 1250, Currency: "usd", Status: "failed", IdempotencyKey: "req_d", APIKey: "sk_test_sut", At: 300 * ms},
			{ID: "ch_2", Order: "ord_c1", Amount: 1250, Currency: "usd", Status: "succeeded", IdempotencyKey: "req_2", APIKey: "sk_test_sut", At: 310 * ms},
			{ID: "ch_3", Order: "ord_c1", Amount: 1250, Currency: "usd", Status: "succeeded", IdempotencyKey: "req_3", APIKey: "sk_test_sut", At: 820 * ms},
		},
		End: 1100 * ms, Complete: true,
	}
}

// reuseHistory: key k_r1 first for ord_r1, then reused for ord_r2 with a
// different amount and refused with 400 instead of 422.
func reuseHistory() *history.History {
	return &history.History{
		Version: history.Version, Target: "release-on-error", Family: "key-reuse", Seed: 30064771081, Replicas: 2,
		Ops: []history.Op{
			{ID: 0, Client: 0, Replica: 0, Tenant: "tenant_b", Key: "k_r1", KeyHeader: "k_r1", Order: "ord_r1", Amount: 500, Currency: "eur",
				Purpose: "first", Invoke: 0, Complete: 90 * ms, Outcome: history.OK, Status: 201, ChargeID: "ch_r1",
				RespAmount: 500, RespCurrency: "eur", RespOrder: "ord_r1", RespStatus: "succeeded"},
			{ID: 1, Client: 0, Replica: 1, Tenant: "tenant_b", Key: "k_r1", KeyHeader: `"k_r1"`, Order: "ord_r2", Amount: 700, Currency: "eur",
				Purpose: "mutated:amount", Invoke: 120 * ms, Complete: 150 * ms, Outcome: history.Fail, Status: 400},
		},
		Faults:  []history.Fault{},
		Charges: []history.Charge{{ID: "ch_r1", Order: "ord_r1", Amount: 500, Currency: "eur", Status: "succeeded", IdempotencyKey: "req_r1", At: 40 * ms}},
		End:     200 * ms, Complete: true,
	}
}

// passingReport is the reference server's clean run: one family, every
// check passing.
func passingReport() *reports.Report {
	r := &reports.Report{SchemaVersion: reports.SchemaVersion, Target: "reference", Verdict: "pass", Level: "L2",
		Seed: 1, Budget: reports.Duration(10 * time.Second), Duration: reports.Duration(9*time.Second + 870*ms), Complete: true, Replicas: 2,
		Families: []reports.FamilyResult{{Name: "concurrent-duplicates", Level: "L2", Verdict: "PASS", Scenarios: 41, Seeds: 9}}}
	for _, c := range catalog[:2] {
		r.Checks = append(r.Checks, reports.Check{ID: c[0], Name: c[1], Family: "concurrent-duplicates", Level: c[2], Verdict: "PASS", Exercised: true})
	}
	return r
}
