package certify_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/builtin"
	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/search"
	"github.com/idemcheck/idemcheck/target"
)

// binDir builds reference-server once per test binary.
func binDir(t *testing.T) string {
	t.Helper()
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(m) == 0 && os.Getenv("PG_BIN") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no PostgreSQL server binaries on CI: .ci/run must install postgresql")
		}
		t.Skip("no PostgreSQL server binaries: install postgresql or set PG_BIN")
	}
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-o", dir, "github.com/idemcheck/idemcheck/cmd/reference-server").CombinedOutput()
	if err != nil {
		t.Fatalf("go build reference-server: %v\n%s", err, out)
	}
	return dir
}

func member(t *testing.T, name, dir string) *target.Target {
	t.Helper()
	m, err := builtin.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := m.Target(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// e2eScenario is the end-to-end acceptance run in one timeline: concurrent
// duplicates split across both replicas, a reset on the replica→gateway
// link under a request, and a SIGKILL inside charge-then-hang followed by
// retries after the recovery window.
const e2eScenario = `
name: harness-acceptance
family: mixed
steps:
  - fault: {id: slow, kind: "gateway:slow", params: {latency: 250ms}}
  - send: {id: d0, client: 0, replica: 0, tenant: 0, key: dup, order: o_dup, amount: 700, async: true}
  - send: {id: d1, client: 1, replica: 1, tenant: 0, key: dup, order: o_dup, amount: 700, async: true}
  - send: {id: d2, client: 2, replica: 0, tenant: 0, key: dup, order: o_dup, amount: 700, async: true}
  - send: {id: d3, client: 3, replica: 1, tenant: 0, key: dup, order: o_dup, amount: 700, async: true}
  - wait: {responses: [d0, d1, d2, d3]}
  - heal: slow
  - send: {id: d_after, client: 0, replica: 1, tenant: 0, key: dup, order: o_dup, amount: 700}
  - fault: {id: rst, kind: reset_peer, link: "replica0->gateway", direction: downstream}
  - send: {id: r0, client: 4, replica: 0, tenant: 1, key: rst, order: o_rst, amount: 900}
  - heal: rst
  - send: {id: r1, client: 4, replica: 0, tenant: 1, key: rst, order: o_rst, amount: 900}
  - fault: {id: hang, kind: "gateway:charge_then_hang", order: o_crash}
  - send: {id: c0, client: 5, replica: 1, tenant: 0, key: crash, order: o_crash, amount: 1100, async: true}
  - wait: {hold: o_crash}
  - kill: 1
  - release: o_crash
  - wait: {responses: [c0]}
  - restart: 1
  - heal: hang
  - send: {id: c1, client: 5, replica: 0, tenant: 0, key: crash, order: o_crash, amount: 1100}
  - wait: {recovery: true}
  - send: {id: c2, client: 5, replica: 1, tenant: 0, key: crash, order: o_crash, amount: 1100}
  - send: {id: r2, client: 4, replica: 1, tenant: 1, key: rst, order: o_rst, amount: 900}
`

func TestE2E_ReferencePassesNaiveDoubleCharges(t *testing.T) {
	dir := binDir(t)
	sc, err := scenarios.ParseIncident("e2e.yaml", []byte(e2eScenario))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	start := time.Now()
	ex, err := certify.Replay(ctx, member(t, "reference", dir), sc, certify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reference: %s in %s, %d ops, %d charges", ex.Result.Verdict, time.Since(start).Round(time.Millisecond), len(ex.History.Ops), len(ex.History.Charges))
	if ex.Err != nil {
		t.Fatalf("scenario did not play to the end: %v", ex.Err)
	}
	for _, c := range ex.Result.Checks {
		if !c.Verdict.Acceptable() {
			t.Errorf("reference: %s %s %s: %v %s", c.ID, c.Name, c.Verdict, c.Violations, c.Note)
		}
	}
	if n := succeeded(ex, "o_crash"); n != 1 {
		t.Errorf("crash order charged %d times in the ledger, want 1", n)
	}

	start = time.Now()
	naive, err := certify.Replay(ctx, member(t, "naive", dir), sc, certify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("naive: %s in %s", naive.Result.Verdict, time.Since(start).Round(time.Millisecond))
	m1, _ := naive.Result.Find("M1")
	if m1.Verdict != checker.Failed || len(m1.Violations) == 0 {
		t.Fatalf("naive: M1 = %s, want FAILED with the two charges named; %s", m1.Verdict, m1.Note)
	}
	if v := m1.Violations[0]; len(v.Charges) < 2 || !strings.Contains(v.Order, "o_") {
		t.Fatalf("naive: M1 violation names %d charges (%v) for order %q, want two", len(v.Charges), v.Charges, v.Order)
	}
}

func succeeded(ex *search.Example, sym string) int {
	n := 0
	for _, c := range ex.History.Charges {
		if strings.HasSuffix(c.Order, "_"+sym) && c.Succeeded() {
			n++
		}
	}
	return n
}
