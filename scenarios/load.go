package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/printer"
	"github.com/goccy/go-yaml/token"

	"github.com/idemcheck/idemcheck/builtin"
	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/internal/yamlfile"
	"github.com/idemcheck/idemcheck/target"
)

// ErrInvalid marks every error about the content of an incident file, so
// the CLI maps it to exit code 2 before anything starts.
var ErrInvalid = errors.New("invalid incident file")

// LoadIncident reads and validates an incident file.
func LoadIncident(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &yamlfile.FieldError{File: path, Msg: fmt.Sprintf("cannot read incident file: %v", err), Kind: ErrInvalid}
	}
	return ParseIncident(path, data)
}

// ParseIncident is LoadIncident for bytes already read. A file of the
// public catalogue (its folder is named public, or it cites a source)
// must cite its thread and name a built-in member as its target; any
// other file's target is checked where it is resolved (Member), since a
// counterexample written for a user's server names that server.
func ParseIncident(name string, data []byte) (*Scenario, error) {
	var sc Scenario
	if err := yamlfile.Decode(name, data, &sc, ErrInvalid); err != nil {
		return nil, err
	}
	sc.origin = &origin{name: name, data: data}
	if err := sc.Validate(); err != nil {
		return nil, yamlfile.Locate(name, data, err, ErrInvalid)
	}
	if filepath.Base(filepath.Dir(name)) == "public" && sc.Source == "" {
		return nil, yamlfile.Locate(name, data, bad("source", "expected the public thread as owner/repo#N: a file under public/ cites the incident it reproduces"), ErrInvalid)
	}
	if sc.Source != "" {
		if _, err := sc.Member(); err != nil {
			return nil, err
		}
	}
	return &sc, nil
}

// Member is the built-in member the incident names as its target. A name
// that is not one is an ErrInvalid naming the file:line of target.
func (sc *Scenario) Member() (builtin.Member, error) {
	m, err := builtin.Lookup(sc.Target)
	if err == nil {
		return m, nil
	}
	err = bad("target", "expected a built-in member (idemcheck list): one of %s; got %q", strings.Join(builtin.Names(), ", "), sc.Target)
	if sc.origin == nil {
		return m, err
	}
	return m, yamlfile.Locate(sc.origin.name, sc.origin.data, err, ErrInvalid)
}

// sourceRE is a GitHub thread: owner (letters, digits, inner hyphens, at
// most 39), repository (letters, digits, '.', '_', '-', at most 100), and
// the or pull request's number.
var sourceRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?/[A-Za-z0-9._-]{1,100}#[1-9][0-9]{0,9}$`)

func validSource(at, s string) error {
	if !sourceRE.MatchString(s) {
		return bad(at, "expected a GitHub thread as owner/repo#N, such as aws-powertools/powertools-lambda-python#638; got %q", s)
	}
	return nil
}

// Marshal writes the scenario as an incident file, which ParseIncident
// reads back as the same scenario: a string whose plain form would read
// back as something else is written double-quoted (quotePlain).
func (sc Scenario) Marshal() ([]byte, error) {
	node, err := yaml.ValueToNode(sc, yaml.IndentSequence(true))
	if err != nil {
		return nil, err
	}
	ast.Walk(quotePlain{}, node)
	var p printer.Printer
	return p.PrintNode(node), nil
}

// quotePlain double-quotes every string the encoder would write in a
// form that does not read back as itself: goccy/go-yaml v1.19.2 writes a
// tab, "? x" and ".inf" plain, and they read back as "", a mapping and
// +Inf. A string the encoder quoted itself holds its quotes in its Value
// (any string that starts with a quote is quoted), and is left as it is.
type quotePlain struct{}

func (q quotePlain) Visit(n ast.Node) ast.Visitor {
	s, ok := n.(*ast.StringNode)
	if ok && s.Token.Type != token.DoubleQuoteType && s.Token.Type != token.SingleQuoteType &&
		!strings.HasPrefix(s.Value, `"`) && !strings.HasPrefix(s.Value, "'") && !readsBack(s.Value) {
		s.Token.Type = token.DoubleQuoteType
	}
	return q
}

// readsBack reports whether the encoder's own writing of s as a value
// (plain, or a literal block for several lines) reads back as s.
func readsBack(s string) bool {
	out, err := yaml.Marshal(map[string]string{"v": s})
	var back map[string]any
	return err == nil && yaml.Unmarshal(out, &back) == nil && back["v"] == s
}

var bad = yamlfile.Bad

// Validate checks a scenario's shape and fills defaults. Indices of
// replicas and tenants are checked against the environment at run time.
func (sc *Scenario) Validate() error {
	if sc.Name == "" {
		return bad("name", "expected a name for the scenario")
	}
	if len(sc.Steps) == 0 {
		return bad("steps", "expected at least one step")
	}
	if sc.Source != "" {
		if err := validSource("source", sc.Source); err != nil {
			return err
		}
	}
	for i, a := range sc.Also {
		if err := validSource(fmt.Sprintf("also[%d]", i), a); err != nil {
			return err
		}
	}
	if sc.Class != "" && !slices.ContainsFunc(Classes, func(c Class) bool { return c.ID == sc.Class }) {
		return bad("class", "expected one of %s, got %q", strings.Join(classIDs(), ", "), sc.Class)
	}
	faults := map[string]bool{}
	sends := map[string]bool{}
	for i := range sc.Steps {
		if err := sc.Steps[i].validate(fmt.Sprintf("steps[%d]", i), i, faults, sends); err != nil {
			return err
		}
	}
	for i, e := range sc.Expect {
		if err := e.validate(fmt.Sprintf("expect[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Step) validate(at string, index int, faults, sends map[string]bool) error {
	if n := s.kinds(); n != 1 {
		return bad(at, "expected exactly one of send, wait, fault, heal, kill, restart, pause, resume, release; got %d", n)
	}
	switch {
	case s.Send != nil:
		return s.Send.validate(at+".send", index, sends)
	case s.Wait != nil:
		return s.Wait.validate(at+".wait", sends)
	case s.Fault != nil:
		return s.Fault.validate(at+".fault", faults)
	case s.Heal != "" && !faults[s.Heal]:
		return bad(at+".heal", "expected the id of an earlier fault, got %q", s.Heal)
	}
	if (s.Point != "" || s.Payment != "") && s.Fault == nil && s.Kill == nil && s.Pause == nil {
		return bad(at+".point", "only fault, kill and pause steps strike a crash point")
	}
	if s.Point != "" && !slices.Contains(checker.CrashPoints, s.Point) {
		return bad(at+".point", "expected one of %s, got %q", strings.Join(checker.CrashPoints, ", "), s.Point)
	}
	for field, r := range map[string]*int{"kill": s.Kill, "restart": s.Restart, "pause": s.Pause, "resume": s.Resume} {
		if r != nil && *r < 0 {
			return bad(at+"."+field, "expected a replica index >= 0, got %d", *r)
		}
	}
	return nil
}

func (s *Step) kinds() int {
	n := 0
	for _, set := range []bool{s.Send != nil, s.Wait != nil, s.Fault != nil, s.Heal != "", s.Kill != nil, s.Restart != nil, s.Pause != nil, s.Resume != nil, s.Release != ""} {
		if set {
			n++
		}
	}
	return n
}

// KeyForms are the shapes a Send can give its key header.
var KeyForms = []string{"", "quoted", "empty", "long", "missing", "bad-quoted", "control"}

func (s *Send) validate(at string, index int, sends map[string]bool) error {
	if s.ID == "" {
		s.ID = fmt.Sprintf("s%d", index)
	}
	if sends[s.ID] {
		return bad(at+".id", "send id %q is used twice", s.ID)
	}
	sends[s.ID] = true
	s.Defaults()
	switch {
	case s.Key == "" && s.KeyForm != "missing" && s.KeyForm != "empty":
		return bad(at+".key", "expected a symbolic key such as k1")
	case s.Order == "" && s.Body == "":
		return bad(at+".order", "expected a symbolic order such as o1")
	case s.Writing != "" && !contains(target.Styles, s.Writing):
		return bad(at+".writing", "expected one of %s, got %q", strings.Join(target.Styles, ", "), s.Writing)
	case s.Edit != "" && !strings.HasPrefix(s.Edit, "/"):
		return bad(at+".edit", "expected the JSON pointer of a static field of the target's body, such as /customer, got %q", s.Edit)
	case !contains(KeyForms, s.KeyForm):
		return bad(at+".key_form", "expected one of %s, got %q", strings.Join(KeyForms[1:], ", "), s.KeyForm)
	case s.Replica < -1:
		return bad(at+".replica", "expected a replica index, or -1 for round robin, got %d", s.Replica)
	case s.Tenant < -1:
		return bad(at+".tenant", "expected a tenant index, or -1 for none, got %d", s.Tenant)
	case s.RetryWithin < 0:
		return bad(at+".retry_within", "expected a positive number of TTLs since the first request, got %g", s.RetryWithin)
	case s.RetryWithin > 0 && s.Converge:
		return bad(at+".retry_within", "expected either converge or retry_within, not both")
	}
	return nil
}

// Defaults fills what a send step may leave out: the amount (1250) and
// the currency ("usd"). Validate applies it to a loaded file, and the
// runner to every send, since generated scenarios are not validated.
func (s *Send) Defaults() {
	if s.Amount == 0 {
		s.Amount = 1250
	}
	if s.Currency == "" {
		s.Currency = "usd"
	}
}

func (w *Wait) validate(at string, sends map[string]bool) error {
	n := 0
	for _, set := range []bool{len(w.Responses) > 0, w.Hold != "", w.Charge != "", w.For > 0, w.TTL > 0, w.Recovery} {
		if set {
			n++
		}
	}
	if n != 1 {
		return bad(at, "expected exactly one of responses, hold, charge, for, ttl, recovery; got %d", n)
	}
	for i, id := range w.Responses {
		if id != "*" && !sends[id] {
			return bad(fmt.Sprintf("%s.responses[%d]", at, i), "expected the id of an earlier send, got %q", id)
		}
	}
	switch {
	case w.From != "" && w.TTL == 0:
		return bad(at+".from", "only a ttl wait counts from a send's answer")
	case w.From != "" && !sends[w.From]:
		return bad(at+".from", "expected the id of an earlier send, got %q", w.From)
	}
	return nil
}

// validate checks the fault as package faults will build it, so a bad
// kind, link, direction or parameter is refused when the file loads,
// naming the field.
func (f *Fault) validate(at string, seen map[string]bool) error {
	if f.ID == "" {
		return bad(at+".id", "expected an id that a later heal can name")
	}
	if seen[f.ID] {
		return bad(at+".id", "fault id %q is used twice", f.ID)
	}
	seen[f.ID] = true
	if kind := strings.TrimPrefix(f.Kind, "gateway:"); f.Order != "" && !faults.TakesOrder(kind) {
		return bad(at+".order", "only gateway:<kind> and kill_in_hang faults are aimed at an order, not %q", f.Kind)
	}
	if f.Params["order"] != "" {
		return bad(at+".params.order", "name the order with the fault's order field")
	}
	_, err := f.On("postgres").Spec(f.Order).Build() // any store checks the form
	var se *faults.SpecError
	if !errors.As(err, &se) {
		return err
	}
	field := map[string]string{"kind": "kind", "target": "link", "direction": "direction", "order": "order"}[se.Field]
	if se.Field == "target" && faults.TargetOf(f.Kind) == "store" {
		field = "store"
	}
	if se.Field == "target" && faults.TargetOf(f.Kind) == "replica" {
		field = "replica"
	}
	if field == "" {
		field = "params." + se.Field
	}
	msg := se.Msg
	if se.Field == "kind" {
		msg = fmt.Sprintf("expected one of %s, got %q", strings.Join(FaultKinds(), ", "), f.Kind)
	}
	return bad(at+"."+field, "%s", msg)
}

// FaultKinds lists the fault kinds a scenario's fault step can name: the
// network kinds on a link, the kinds on a replica (clock_skew,
// db_timezone; kill, pause and restart are also steps of their own) or a
// store, and gateway:<kind> on the gateway.
func FaultKinds() []string {
	var out []string
	for _, k := range faults.Kinds() {
		switch faults.TargetOf(k) {
		case "link", "replica", "store":
			out = append(out, k)
		case "gateway":
			out = append(out, "gateway:"+k)
		}
	}
	slices.Sort(out)
	return out
}

// Checks and verdicts an Expect may name.
var (
	Verdicts = []string{"PASS", "NON-STRICT", "INFORMATIONAL", "FAILED", "UNKNOWN"}
)

func (e Expect) validate(at string) error {
	if ids := checker.CheckIDs(); !contains(ids, e.Check) {
		return bad(at+".check", "expected one of %s, got %q", strings.Join(ids, ", "), e.Check)
	}
	if !contains(Verdicts, e.Verdict) {
		return bad(at+".verdict", "expected one of %s, got %q", strings.Join(Verdicts, ", "), e.Verdict)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
