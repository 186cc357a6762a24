package target

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// ErrInvalid marks every error about the content of a target file, so the
// CLI can map it to exit code 2 (bad target file) before anything starts.
var ErrInvalid = errors.New("invalid target")

// FieldError names the place in a target file that is wrong and what was
// expected there. Its Error is "file:line: field: message".
type FieldError struct {
	File  string
	Line  int // 0 when the field is absent from the file
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
}

func (e *FieldError) Unwrap() error { return ErrInvalid }

// Load reads, decodes and validates a target file. Unknown fields, wrong
// types and missing or out-of-range values are all errors that name the
// file, the line and the field.
func Load(path string) (*Target, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &FieldError{File: path, Msg: fmt.Sprintf("cannot read target file: %v", err)}
	}
	return Parse(path, data)
}

// Parse is Load for bytes already read; name is used in errors.
func Parse(name string, data []byte) (*Target, error) {
	var t Target
	if err := yaml.UnmarshalWithOptions(data, &t, yaml.Strict()); err != nil {
		return nil, decodeError(name, data, err)
	}
	t.File = name
	file, _ := parser.ParseBytes(data, 0)
	if err := t.Validate(); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.File, fe.Line = name, lineOf(file, fe.Field)
		}
		return nil, err
	}
	return &t, nil
}

func decodeError(name string, data []byte, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		tk := ye.GetToken()
		return &FieldError{File: name, Line: tk.Position.Line, Msg: ye.GetMessage()}
	}
	if line, field := findBadDuration(data); line > 0 {
		return &FieldError{File: name, Line: line, Field: field, Msg: fmt.Sprintf("expected a duration such as 500ms, 30s or 24h: %v", err)}
	}
	return &FieldError{File: name, Msg: err.Error()}
}

// durationFields are the keys whose values must parse as time.Duration.
var durationFields = map[string]bool{"ttl": true, "retry_window": true, "recovery_window": true, "max_wait": true, "timeout": true}

// findBadDuration locates the first duration value that does not parse:
// the YAML decoder reports such errors without a position.
func findBadDuration(data []byte) (line int, field string) {
	file, err := parser.ParseBytes(data, 0)
	if err != nil || len(file.Docs) == 0 {
		return 0, ""
	}
	var found *ast.MappingValueNode
	ast.Walk(visitorFunc(func(n ast.Node) bool {
		mv, ok := n.(*ast.MappingValueNode)
		if !ok || found != nil {
			return found == nil
		}
		if durationFields[mv.Key.String()] {
			if _, err := time.ParseDuration(strings.Trim(mv.Value.String(), `"'`)); err != nil {
				found = mv
			}
		}
		return true
	}), file.Docs[0])
	if found == nil {
		return 0, ""
	}
	return found.Value.GetToken().Position.Line, strings.TrimPrefix(found.GetPath(), "$.")
}

type visitorFunc func(ast.Node) bool

func (f visitorFunc) Visit(n ast.Node) ast.Visitor {
	if f(n) {
		return f
	}
	return nil
}

// lineOf finds the line of a dotted field path ("policy.ttl",
// "start.args[1]") in the parsed file, 0 when it is not there.
func lineOf(file *ast.File, field string) int {
	if file == nil || field == "" {
		return 0
	}
	for f := field; f != ""; f = parent(f) {
		p, err := yaml.PathString("$." + f)
		if err != nil {
			continue
		}
		if n, err := p.FilterFile(file); err == nil && n != nil {
			return nodeLine(n, f != field)
		}
	}
	return 0
}

// nodeLine is the line of n. For a missing field reported at its parent,
// a block mapping's first token is on the line after the parent's key: the
// key's line is the one a reader wants.
func nodeLine(n ast.Node, isParent bool) int {
	line := n.GetToken().Position.Line
	if m, ok := n.(*ast.MappingNode); ok && isParent && !m.IsFlowStyle && line > 1 {
		return line - 1
	}
	return line
}

func parent(field string) string {
	i := strings.LastIndexAny(field, ".[")
	if i < 0 {
		return ""
	}
	return field[:i]
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// Defaults of the optional fields, chosen to match the reference server.
const (
	DefaultReplicas       = 2
	DefaultReadyPath      = "/healthz"
	DefaultReadyTimeout   = 30 * time.Second
	DefaultRecoveryWindow = 30 * time.Second
	DefaultMaxWait        = 5 * time.Second
)

// DefaultTenants are used when a target names none: two, so that tenant
// isolation (M5) is always exercised.
var DefaultTenants = []string{"tenant_a", "tenant_b"}

// Validate fills defaults and checks every field. Its errors are
// *FieldError with Field set (File and Line are filled by Parse).
func (t *Target) Validate() error {
	t.defaults()
	for _, check := range []func() error{t.checkName, t.checkStart, t.checkNeeds, t.checkReady, t.checkProtocol, t.checkPolicy, t.checkTenants, t.checkTemplates} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (t *Target) defaults() {
	if t.Replicas == 0 {
		t.Replicas = DefaultReplicas
	}
	if t.Ready.Path == "" {
		t.Ready.Path = DefaultReadyPath
	}
	if t.Ready.Timeout == 0 {
		t.Ready.Timeout = DefaultReadyTimeout
	}
	p := &t.Protocol
	p.Path = orDefault(p.Path, "/v1/charges")
	p.KeyHeader = orDefault(p.KeyHeader, "Idempotency-Key")
	p.AuthHeader = orDefault(p.AuthHeader, "Authorization")
	p.AuthScheme = orDefault(p.AuthScheme, "Bearer")
	p.ReplayHeader = orDefault(p.ReplayHeader, "Idempotent-Replayed")
	f := &p.Fields
	f.Amount, f.Currency = orDefault(f.Amount, "amount"), orDefault(f.Currency, "currency")
	f.OrderID, f.ID, f.Status = orDefault(f.OrderID, "order_id"), orDefault(f.ID, "id"), orDefault(f.Status, "status")
	if t.Policy.RetryWindow == 0 {
		t.Policy.RetryWindow = t.Policy.TTL
	}
	if t.Policy.RecoveryWindow == 0 {
		t.Policy.RecoveryWindow = DefaultRecoveryWindow
	}
	if t.Policy.MaxWait == 0 {
		t.Policy.MaxWait = DefaultMaxWait
	}
	if len(t.Tenants) == 0 {
		t.Tenants = append([]string(nil), DefaultTenants...)
	}
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

func bad(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

func (t *Target) checkName() error {
	if !nameRE.MatchString(t.Name) {
		return bad("name", "expected 1-63 lowercase letters, digits, '.', '_' or '-', got %q", t.Name)
	}
	return nil
}

func (t *Target) checkStart() error {
	if t.Image == "" && strings.TrimSpace(t.Start.Command) == "" {
		return bad("start.command", "expected the command that starts one replica (or an image: for container mode)")
	}
	if t.Replicas < 1 || t.Replicas > 16 {
		return bad("replicas", "expected 1 to 16 replicas, got %d", t.Replicas)
	}
	return nil
}

func (t *Target) checkNeeds() error {
	for i, n := range t.Needs {
		if n != "postgres" {
			return bad(fmt.Sprintf("needs[%d]", i), "expected one of [postgres], got %q", n)
		}
	}
	return nil
}

func (t *Target) checkReady() error {
	if !strings.HasPrefix(t.Ready.Path, "/") {
		return bad("ready.path", "expected an absolute HTTP path such as /healthz, got %q", t.Ready.Path)
	}
	if t.Ready.Timeout < 0 {
		return bad("ready.timeout", "expected a positive duration, got %s", t.Ready.Timeout)
	}
	return nil
}

var headerRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

func (t *Target) checkProtocol() error {
	p := t.Protocol
	if !strings.HasPrefix(p.Path, "/") {
		return bad("protocol.path", "expected an absolute HTTP path such as /v1/charges, got %q", p.Path)
	}
	for field, h := range map[string]string{"protocol.key_header": p.KeyHeader, "protocol.auth_header": p.AuthHeader, "protocol.replay_header": p.ReplayHeader} {
		if !headerRE.MatchString(h) {
			return bad(field, "expected an HTTP header name, got %q", h)
		}
	}
	return nil
}

func (t *Target) checkPolicy() error {
	p := t.Policy
	switch {
	case p.TTL <= 0:
		return bad("policy.ttl", "expected the positive duration for which a key deduplicates (e.g. 24h), got %s", p.TTL)
	case p.RetryWindow < 0:
		return bad("policy.retry_window", "expected a positive duration, got %s", p.RetryWindow)
	case p.RecoveryWindow < 0:
		return bad("policy.recovery_window", "expected a positive duration, got %s", p.RecoveryWindow)
	case p.MaxWait < 0:
		return bad("policy.max_wait", "expected a positive duration, got %s", p.MaxWait)
	}
	return nil
}

func (t *Target) checkTenants() error {
	seen := map[string]bool{}
	for i, tn := range t.Tenants {
		field := fmt.Sprintf("tenants[%d]", i)
		if tn == "" || strings.ContainsAny(tn, " \t\r\n") {
			return bad(field, "expected a non-empty token without spaces, got %q", tn)
		}
		if seen[tn] {
			return bad(field, "tenant %q is listed twice", tn)
		}
		seen[tn] = true
	}
	if len(t.Tenants) < 2 {
		return bad("tenants", "expected at least two tenants so that tenant isolation can be checked, got %d", len(t.Tenants))
	}
	return nil
}

// checkTemplates renders the start section with sample values, so a broken
// template fails at load time instead of after PostgreSQL has started.
func (t *Target) checkTemplates() error {
	_, err := t.Render(Vars{ListenAddr: "127.0.0.1:1", Port: 1, DatabaseURL: "postgres://x", GatewayURL: "http://x", GatewayAPIKey: "sk", TTL: time.Hour, MaxWait: time.Second, WorkDir: "/tmp"})
	if err == nil {
		return nil
	}
	field, msg, _ := strings.Cut(err.Error(), ": ")
	return bad(field, "bad template: %s", msg)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
