package faults

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/target"
)

// Spec is a fault as data, the form scenario and incident files use:
//
//	kind: latency
//	target: replica0->gateway
//	direction: downstream
//	params: {latency: 200ms, jitter: 20ms}
//
// and its one-line string form "latency:replica0->gateway:downstream:latency=200ms,jitter=20ms"
// (kind:target[:direction][:key=value,...]). Kinds, targets and params:
//
//	latency     link  [direction]  latency (required), jitter, toxicity
//	timeout     link  [direction]  timeout (0 = hold open), toxicity
//	reset_peer  link  [direction]  timeout, toxicity
//	slicer      link  [direction]  average_size (required), size_variation, delay, toxicity
//	limit_data  link  [direction]  bytes (required), toxicity
//	bandwidth   link  [direction]  rate (KB/s, required), toxicity
//	down        link
//	kill, pause, restart             replicaN
//	clock_skew                       replicaN   offset (required, signed: +2s, -1s)
//	db_timezone                      replicaN   zone (required, IANA, not UTC)
//	store_restart, store_kill        postgres, redis or mysql
//	kill_in_hang                     replicaN   order (required)
//	decline, fail_before_charge, charge_then_fail,
//	charge_then_drop, charge_then_hang, slow   gateway
//	            order, nth, probability, times, latency (required for slow)
//
// A direction is upstream, downstream (the default) or both. Durations are
// Go durations (200ms, 1.5s).
type Spec struct {
	Kind      string            `yaml:"kind" json:"kind"`
	Target    string            `yaml:"target" json:"target"`
	Direction string            `yaml:"direction,omitempty" json:"direction,omitempty"`
	Params    map[string]string `yaml:"params,omitempty" json:"params,omitempty"`
}

// SpecError names the spec, the field that is wrong and what was expected.
// It wraps ErrBadSpec.
type SpecError struct {
	Spec  string
	Field string // "kind", "target", "direction" or a param name
	Msg   string
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("fault %q: %s: %s", e.Spec, e.Field, e.Msg)
}

// Unwrap makes every SpecError an ErrBadSpec.
func (e *SpecError) Unwrap() error { return ErrBadSpec }

// Parse reads a one-line spec and builds its fault.
func Parse(s string) (Fault, error) {
	sp, err := ParseSpec(s)
	if err != nil {
		return nil, err
	}
	return sp.Build()
}

// ParseSpec splits a one-line spec into a Spec without checking kind-
// specific rules (Build does).
func ParseSpec(s string) (Spec, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return Spec{}, &SpecError{Spec: s, Field: "kind", Msg: "want kind:target[:direction][:key=value,...]"}
	}
	sp := Spec{Kind: parts[0], Target: parts[1]}
	for _, p := range parts[2:] {
		if err := sp.parsePart(s, p); err != nil {
			return Spec{}, err
		}
	}
	return sp, nil
}

func (sp *Spec) parsePart(s, part string) error {
	if !strings.Contains(part, "=") {
		if sp.Direction != "" || sp.Params != nil {
			return &SpecError{Spec: s, Field: "direction", Msg: fmt.Sprintf("unexpected %q: the direction comes once, before the params", part)}
		}
		sp.Direction = part
		return nil
	}
	if sp.Params != nil {
		return &SpecError{Spec: s, Field: "params", Msg: "params come once, comma-separated"}
	}
	sp.Params = map[string]string{}
	for _, kv := range strings.Split(part, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return &SpecError{Spec: s, Field: "params", Msg: fmt.Sprintf("want key=value, got %q", kv)}
		}
		if _, dup := sp.Params[k]; dup {
			return &SpecError{Spec: s, Field: k, Msg: "given twice"}
		}
		sp.Params[k] = v
	}
	return nil
}

// String is the one-line form; Parse(sp.String()) builds the same fault.
func (sp Spec) String() string {
	out := sp.Kind + ":" + sp.Target
	if sp.Direction != "" {
		out += ":" + sp.Direction
	}
	if len(sp.Params) == 0 {
		return out
	}
	keys := make([]string, 0, len(sp.Params))
	for k := range sp.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	kvs := make([]string, len(keys))
	for i, k := range keys {
		kvs[i] = k + "=" + sp.Params[k]
	}
	return out + ":" + strings.Join(kvs, ",")
}

// builder builds one kind of fault from a checked spec.
type builder struct {
	target  string   // "link", "replica", "store" or "gateway"
	allowed []string // params the kind accepts
	build   func(r *reader) Fault
}

var toxicParamsAllowed = []string{"toxicity"}

// builders holds every fault kind; each kind's own file registers it in
// its init, as toxiproxy's toxics do, so a new fault kind is one new file.
var builders = map[string]builder{}

// register adds a fault kind; a kind registered twice is a programming
// error caught at start-up.
func register(kind string, b builder) {
	if _, dup := builders[kind]; dup {
		panic("faults: kind registered twice: " + kind)
	}
	builders[kind] = b
}

// Kinds lists every fault kind a spec may name, sorted, for help texts.
func Kinds() []string {
	out := make([]string, 0, len(builders))
	for k := range builders {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TargetOf says what a kind acts on: "link", "replica", "store" or "gateway" ("" for
// an unknown kind).
func TargetOf(kind string) string { return builders[kind].target }

// TakesOrder says whether a kind can be aimed at one order (it takes the
// order param): the gateway kinds, and kill_in_hang, which kills inside
// that order's gateway hold.
func TakesOrder(kind string) bool { return slices.Contains(builders[kind].allowed, "order") }

// Build checks the spec against its kind and returns the fault. Errors
// are *SpecError naming the field.
func (sp Spec) Build() (Fault, error) {
	b, ok := builders[sp.Kind]
	if !ok {
		return nil, sp.errf("kind", "unknown kind %q (want one of %s)", sp.Kind, strings.Join(Kinds(), ", "))
	}
	r := &reader{spec: sp}
	if err := r.target(b.target); err != nil {
		return nil, err
	}
	if err := r.direction(b.target == "link" && sp.Kind != "down"); err != nil {
		return nil, err
	}
	allowed := b.allowed
	if b.target == "link" && sp.Kind != "down" {
		allowed = append(slices.Clone(allowed), toxicParamsAllowed...)
	}
	if err := r.onlyParams(allowed); err != nil {
		return nil, err
	}
	f := b.build(r)
	if r.err != nil {
		return nil, r.err
	}
	return f, nil
}

func (sp Spec) errf(field, format string, args ...any) *SpecError {
	return &SpecError{Spec: sp.String(), Field: field, Msg: fmt.Sprintf(format, args...)}
}

// reader reads a spec's target, direction and params, keeping the first
// error so that builders stay one expression each.
type reader struct {
	spec    Spec
	link    harness.Link
	replica int
	dir     harness.Direction
	err     error
}

var replicaRE = regexp.MustCompile(`^replica(\d+)$`)

func (r *reader) target(kind string) error {
	t := r.spec.Target
	switch kind {
	case "link":
		l, err := harness.ParseLink(t)
		if err != nil {
			return r.spec.errf("target", "want a link (client->replicaN, replicaN->gateway, replicaN->STORE with STORE one of %s), got %q", strings.Join(target.Stores, ", "), t)
		}
		r.link = l
	case "replica":
		m := replicaRE.FindStringSubmatch(t)
		if m == nil {
			return r.spec.errf("target", "want a replica (replica0, replica1, ...), got %q", t)
		}
		r.replica, _ = strconv.Atoi(m[1])
	case "store":
		if !slices.Contains(target.Stores, t) {
			return r.spec.errf("target", "want a store (%s), got %q", strings.Join(target.Stores, ", "), t)
		}
	case "gateway":
		if t != "gateway" {
			return r.spec.errf("target", "want gateway, got %q", t)
		}
	}
	return nil
}

func (r *reader) direction(allowed bool) error {
	d := r.spec.Direction
	switch {
	case d == "":
		return nil
	case !allowed:
		return r.spec.errf("direction", "%s takes no direction, got %q", r.spec.Kind, d)
	case d == string(harness.Upstream), d == string(harness.Downstream), d == string(Both):
		r.dir = harness.Direction(d)
		return nil
	}
	return r.spec.errf("direction", "want upstream, downstream or both, got %q", d)
}

func (r *reader) onlyParams(allowed []string) error {
	for k := range r.spec.Params {
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return r.spec.errf(k, "%s takes no params", r.spec.Kind)
			}
			return r.spec.errf(k, "unknown param for %s (want %s)", r.spec.Kind, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func (r *reader) raw(k string, required bool) (string, bool) {
	v, ok := r.spec.Params[k]
	if !ok && required && r.err == nil {
		r.err = r.spec.errf(k, "required for %s", r.spec.Kind)
	}
	return v, ok
}

func (r *reader) fail(k, format string, args ...any) {
	if r.err == nil {
		r.err = r.spec.errf(k, format, args...)
	}
}

func (r *reader) str(k string, required bool) string {
	v, _ := r.raw(k, required)
	return v
}

func (r *reader) duration(k string, required bool) time.Duration {
	v, ok := r.raw(k, required)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		r.fail(k, "want a duration such as 200ms or 1.5s, got %q", v)
	}
	return d
}

func (r *reader) integer(k string, required bool) int64 {
	v, ok := r.raw(k, required)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		r.fail(k, "want a non-negative integer, got %q", v)
	}
	return n
}

func (r *reader) float(k string, lo, hi float64) float64 {
	v, ok := r.raw(k, false)
	if !ok {
		return 0
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || x < lo || x > hi {
		r.fail(k, "want a number in [%g, %g], got %q", lo, hi, v)
	}
	return x
}

func (r *reader) toxicity() float32 { return float32(r.float("toxicity", 0, 1)) }

// signedDuration reads a required duration that may be negative ("+2s",
// "-1s", "2s").
func (r *reader) signedDuration(k string) time.Duration {
	v, ok := r.raw(k, true)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d == 0 {
		r.fail(k, "want a non-zero duration such as +2s or -1s, got %q", v)
	}
	return d
}
