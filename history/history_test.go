package history_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/history"
)

func sample() *history.History {
	return &history.History{
		Version: history.Version, Target: "reference", Family: "crash", Seed: 42, Replicas: 2,
		Policy:  history.Policy{TTL: 10 * time.Second, RetryWindow: 20 * time.Second, RecoveryWindow: 2 * time.Second, MaxWait: time.Second},
		Tenants: []string{"tenant_a"},
		Ops: []history.Op{{
			ID: 0, Client: 1, Replica: 1, Tenant: "tenant_a", Key: "k1", KeyHeader: `"k1"`, Order: "ord_1",
			Amount: 1250, Currency: "usd", Body: `{"amount":1250}`, Purpose: "first",
			Invoke: 5 * time.Millisecond, Complete: 80 * time.Millisecond, Outcome: history.OK, Status: 201,
			ChargeID: "ch_1", RespAmount: 1250, RespCurrency: "usd", RespOrder: "ord_1", RespStatus: "succeeded",
			Replayed: true, RetryAfter: "1",
		}},
		Faults: []history.Fault{{
			ID: 0, Name: "kill", Target: "replica0", Params: map[string]string{"signal": "KILL"},
			Inject: time.Second, Heal: 2 * time.Second, Healed: true, Order: "ord_1",
		}},
		Charges:  []history.Charge{{ID: "ch_1", Order: "ord_1", Amount: 1250, Currency: "usd", Status: "succeeded", IdempotencyKey: "req_1", APIKey: "sk", At: 40 * time.Millisecond}},
		End:      3 * time.Second,
		Complete: true,
	}
}

func TestHistory_RoundTrip(t *testing.T) {
	want := sample()
	var buf bytes.Buffer
	if err := want.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := history.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip changed the history:\n got %+v\nwant %+v", got, want)
	}
}

func TestHistory_RoundTripFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.json")
	want := sample()
	if err := want.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("file round trip changed the history")
	}
}

func TestHistory_DurationsAreNanoseconds(t *testing.T) {
	var buf bytes.Buffer
	if err := sample().Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"ttl": 10000000000`) {
		t.Fatalf("ttl not encoded as integer nanoseconds:\n%s", buf.String())
	}
}

func TestHistory_RefusesOtherVersion(t *testing.T) {
	for _, doc := range []string{`{"version": 2, "ops": []}`, `{"ops": []}`} {
		_, err := history.Read(strings.NewReader(doc))
		if err == nil || !strings.Contains(err.Error(), "version") {
			t.Errorf("%s: err %v, want a version refusal", doc, err)
		}
	}
}

func TestHistory_RefusesUnknownField(t *testing.T) {
	docs := []string{
		`{"version": 1, "surprise": true}`,
		`{"version": 1, "ops": [{"id": 0, "idempotency": "k"}]}`,
	}
	for _, doc := range docs {
		_, err := history.Read(strings.NewReader(doc))
		if err == nil || !strings.Contains(err.Error(), "unknown field") {
			t.Errorf("%s: err %v, want an unknown-field refusal", doc, err)
		}
	}
}

func TestHistory_ReadFileNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, []byte(`{"version": 9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := history.ReadFile(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err %v does not name %s", err, path)
	}
	if _, err := history.ReadFile(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Fatal("a missing file must be an error")
	}
}

func TestClassify(t *testing.T) {
	cases := map[int]history.Outcome{
		200: history.OK, 201: history.OK, 299: history.OK,
		400: history.Fail, 402: history.Fail, 422: history.Fail, 404: history.Fail,
		409: history.Info, 408: history.Info, 423: history.Info, 425: history.Info, 429: history.Info, 500: history.Info, 502: history.Info, 503: history.Info, 0: history.Info,
	}
	for status, want := range cases {
		if got := history.Classify(status); got != want {
			t.Errorf("Classify(%d) = %s, want %s", status, got, want)
		}
	}
}

func TestClassifyAnswer_RetryAfterMakesAFailureIndeterminate(t *testing.T) {
	if history.ClassifyAnswer(402, "1") != history.Info || history.ClassifyAnswer(402, "") != history.Fail {
		t.Error("a 402 with Retry-After is indeterminate, without it definitive")
	}
	if history.ClassifyAnswer(201, "1") != history.OK {
		t.Error("a 2xx names a charge whatever its headers")
	}
}

func TestCharge_Succeeded(t *testing.T) {
	if !(history.Charge{Status: "succeeded"}).Succeeded() || (history.Charge{Status: "failed"}).Succeeded() {
		t.Fatal("only a succeeded charge moved money")
	}
}

func TestRecorder_FireKeepsTheFirstStrike(t *testing.T) {
	rec := history.NewRecorder(history.History{})
	id := rec.Inject(history.Fault{Name: "kill", Target: "replica0", Params: map[string]string{history.ParamCrashPoint: "kill-after-response"}})
	armed := rec.Inject(history.Fault{Name: "gateway:charge_then_drop", Target: "gateway"})
	rec.Fire(id)
	first := rec.Snapshot(true).Faults[0].Fired
	rec.Fire(id)
	h := rec.Snapshot(true)
	if !h.Faults[0].HasFired() || h.Faults[0].Fired != first {
		t.Fatalf("fired %v then %v", first, h.Faults[0].Fired)
	}
	if h.Faults[armed].HasFired() {
		t.Fatal("a fault that never struck must not read as fired")
	}
}

// TestRead_Version1WithoutFiredStillReads: Fired is optional; a version 1
// document written before it existed is read, with every fault unfired.
func TestRead_Version1WithoutFiredStillReads(t *testing.T) {
	doc := `{"version":1,"ops":[],"faults":[{"id":0,"name":"kill","target":"replica0","inject":5,"heal":9,"healed":true}],"charges":[],"end":10,"complete":true}`
	h, err := history.Read(strings.NewReader(doc))
	if err != nil || h.Faults[0].HasFired() {
		t.Fatalf("%v %+v", err, h)
	}
}

// TestRead_Version1WithoutClassStillReads: Class is optional; a fault
// recorded without one is read with none and judged by the class its
// name had (ClassOf), Disturbs for a name never classed.
func TestRead_Version1WithoutClassStillReads(t *testing.T) {
	doc := `{"version":1,"ops":[],"faults":[` +
		`{"id":0,"name":"kill","target":"replica0","inject":5,"heal":9,"healed":true},` +
		`{"id":1,"name":"gateway:slow","target":"gateway","inject":5,"heal":9,"healed":true},` +
		`{"id":2,"name":"gateway:decline","target":"gateway","inject":5,"heal":9,"healed":true},` +
		`{"id":3,"name":"pause","target":"replica0","inject":5,"heal":9,"healed":true}],"charges":[],"end":10,"complete":true}`
	h, err := history.Read(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []history.Class{history.Crash, history.Slows, history.Business, history.Disturbs}
	for i, f := range h.Faults {
		if f.Class != "" || f.ClassOf() != want[i] {
			t.Errorf("%s: class %q, read as %q, want %q", f.Name, f.Class, f.ClassOf(), want[i])
		}
	}
}

// TestFault_RecordedClassWins: a recorded class is the class, whatever
// the name, and it survives a round trip.
func TestFault_RecordedClassWins(t *testing.T) {
	h := &history.History{Version: history.Version, Faults: []history.Fault{{Name: "kill", Class: history.Disturbs}}}
	var buf bytes.Buffer
	if err := h.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := history.Read(&buf)
	if err != nil || got.Faults[0].ClassOf() != history.Disturbs {
		t.Fatalf("%v %+v", err, got)
	}
}

// A PaymentIntent id names the charge its confirmation made: the succeeded
// one when a declined confirmation came first. Other ids are themselves.
func TestChargeIDs_ResolvePaymentIntents(t *testing.T) {
	ids := history.ChargeIDsOf([]history.Charge{
		{ID: "ch_1", Status: "succeeded"},
		{ID: "ch_2", Status: "failed", Alias: "pi_2"},
		{ID: "ch_3", Status: "succeeded", Alias: "pi_2"},
		{ID: "ch_4", Status: "failed", Alias: "pi_4"},
		{ID: "ch_3", Status: "succeeded", Alias: "pi_2"}, // a record read twice
	})
	for id, want := range map[string]string{"ch_1": "ch_1", "pi_2": "ch_3", "ch_2": "ch_2", "pi_4": "ch_4", "pi_9": "pi_9", "": ""} {
		if got := ids.Resolve(id); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", id, got, want)
		}
	}
}
