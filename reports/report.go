package reports

import (
	"math"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
)

// SchemaVersion is written into report.json; tooling that reads reports
// refuses versions it does not know.
const SchemaVersion = 1

// Report is everything one certification run found. It is created at the
// start of a run and finalised in a defer, so an interrupted or crashed
// run still leaves a report (Complete false).
type Report struct {
	SchemaVersion int       `json:"schema_version"`
	Target        string    `json:"target"`
	TargetFile    string    `json:"target_file,omitempty"`
	Verdict       string    `json:"verdict"` // "pass" | "fail" | "unknown"
	Level         string    `json:"level"`   // highest certification level reached, "L0".."L5"
	LevelNote     string    `json:"level_note,omitempty"`
	Strict        bool      `json:"strict"`
	Seed          uint64    `json:"seed"`
	Shard         string    `json:"shard,omitempty"` // "3/8"
	Budget        Duration  `json:"budget"`
	Started       time.Time `json:"started"`
	Duration      Duration  `json:"duration"`
	Complete      bool      `json:"complete"`
	Interrupted   string    `json:"interrupted,omitempty"` // why the run stopped early
	Replicas      int       `json:"replicas"`
	Mode          string    `json:"mode"` // "process" | "docker"
	// Tool is the idemcheck build that ran the checks (CurrentTool).
	Tool Tool `json:"tool"`
	// Gateway is how the gateway simulator kept idempotency keys in this
	// run: the key lifetime, or none (--gateway-idempotency off).
	Gateway history.Gateway `json:"gateway,omitzero"`
	// Contact is first contact's checklist: how money was traced, and
	// what a misconfiguration stopped (nil in a report written before
	// first contact, or merged from shards).
	Contact *Contact `json:"first_contact,omitempty"`
	// Seal is the report's digest and what it was made from (seal.go):
	// idemcheck verify says whether it was edited after the run.
	Seal *Seal `json:"seal,omitempty"`
	// Untrusted says that T1 harness untouched FAILED: the server reached
	// the oracle, and no other verdict of the run can be trusted.
	Untrusted string `json:"untrusted,omitempty"`
	// PeakRSS is the most memory (resident set, bytes) the idemcheck
	// process held during the run: a soak's memory stays flat.
	PeakRSS int64 `json:"peak_rss_bytes,omitempty"`

	Families   []FamilyResult    `json:"families"`
	Checks     []Check           `json:"checks"`
	Violations []Violation       `json:"violations"`
	Coverage   checker.Coverage  `json:"coverage"`
	Env        map[string]string `json:"environment"` // go and os versions; the idemcheck build is Tool
	// Logs are the replica and environment logs kept beside the report
	// (LogsDir); WriteAll finds them.
	Logs []LogFile `json:"logs,omitempty"`

	// Counterexamples are the minimal failing histories, one per failing
	// family, kept for the timeline drawing; report.json links them by
	// family. They are written to history-<family>.json beside it.
	Counterexamples map[string]*history.History `json:"-"`
}

// FamilyResult is one scenario family's run.
type FamilyResult struct {
	Name      string `json:"name"`
	Level     string `json:"level"`
	Verdict   string `json:"verdict"`   // worst check verdict in this family: PASS, NON-STRICT, ...
	Scenarios int    `json:"scenarios"` // examples played, shrinking replays included
	Seeds     int    `json:"seeds"`     // seeds tried
	FailSeed  uint64 `json:"fail_seed,omitempty"`
	// FirstFailure is how long the family ran before its first failing
	// example (before shrinking): the time-to-detection of the bug.
	FirstFailure Duration `json:"first_failure,omitempty"`
	Duration     Duration `json:"duration"`
	// Ops is how many requests the family's judged examples sent, and
	// OpsPerSecond that over its Duration: a soak's pace, per family.
	Ops          int     `json:"ops,omitempty"`
	OpsPerSecond float64 `json:"ops_per_second,omitempty"`
	// Shrunk is the minimal counterexample's size, when the family failed.
	ShrunkRequests int      `json:"shrunk_requests,omitempty"`
	ShrunkFaults   int      `json:"shrunk_faults,omitempty"`
	Incident       string   `json:"incident,omitempty"` // path of the incident file written for it
	History        string   `json:"history,omitempty"`  // path of the counterexample's history
	Steps          []string `json:"steps,omitempty"`    // the counterexample, one replayable line per step
	// Note says why the family could not run (and what budget would fit),
	// or that its failure needed the examples it ran with.
	Note string `json:"note,omitempty"`
	// NotJudged says the family was deliberately not played (Note says
	// why): its PASS certifies nothing (Grade).
	NotJudged bool `json:"not_judged,omitempty"`
}

// SetPace sets OpsPerSecond from Ops and Duration, to a tenth.
func (f *FamilyResult) SetPace() {
	if d := time.Duration(f.Duration).Seconds(); d > 0 {
		f.OpsPerSecond = math.Round(float64(f.Ops)/d*10) / 10
	}
}

// Grade is how a report renders a family's verdict: "not judged" for a
// family deliberately not played, else its verdict.
func (f FamilyResult) Grade() string {
	if f.NotJudged {
		return "not judged"
	}
	return f.Verdict
}

// Check is one row of the checks table: one check in one family.
type Check struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Family    string `json:"family"`
	Level     string `json:"level"`
	Verdict   string `json:"verdict"` // PASS, NON-STRICT, INFORMATIONAL, FAILED, UNKNOWN
	Exercised bool   `json:"exercised"`
	Note      string `json:"note,omitempty"`
}

// Violation is one piece of evidence, with the command that replays it.
type Violation struct {
	checker.Violation
	Family string `json:"family"`
	Replay string `json:"replay"` // the exact command that replays it
	// History is the recorded example this violation was found in: the
	// ops, charges and faults its ids refer to. Two examples reuse op ids
	// and have different charges, so a violation is drawn over its own
	// history only, never over another example's. WriteAll writes it
	// beside report.json (HistoryFile) and ReadDir loads it back.
	History     *history.History `json:"-"`
	HistoryFile string           `json:"history,omitempty"`
}

// Duration marshals as a Go duration string ("1m3.5s") in JSON.
type Duration time.Duration

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}
