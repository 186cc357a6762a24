package target

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/internal/yamlfile"
)

// ErrInvalid marks every error about the content of a target file, so the
// CLI can map it to exit code 2 (bad target file) before anything starts.
var ErrInvalid = errors.New("invalid target")

// Load reads, decodes and validates a target file. Unknown fields, wrong
// types and missing or out-of-range values are all errors that name the
// file, the line and the field, and wrap ErrInvalid. Relative paths in
// start are taken from the file's folder (see resolvePaths).
func Load(path string) (*Target, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &yamlfile.FieldError{File: path, Msg: fmt.Sprintf("cannot read target file: %v", err), Kind: ErrInvalid}
	}
	t, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	if err := t.resolvePaths(path); err != nil {
		return nil, err
	}
	return t, nil
}

// Parse is Load for bytes already read; name is used in errors.
func Parse(name string, data []byte) (*Target, error) {
	var t Target
	if err := yamlfile.Decode(name, data, &t, ErrInvalid); err != nil {
		return nil, err
	}
	t.File, t.src = name, data
	if err := t.Validate(); err != nil {
		return nil, yamlfile.Locate(name, data, err, ErrInvalid)
	}
	return &t, nil
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
// *yamlfile.FieldError with Field set (File and Line are filled by Parse).
func (t *Target) Validate() error {
	t.defaults()
	for _, check := range []func() error{t.checkName, t.checkStart, t.checkNeeds, t.checkReady, t.checkProtocol, t.checkFields, t.checkShape, t.checkPolicy, t.checkGateway, t.checkTenants, t.checkTemplates} {
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
	p.Path = cmp.Or(p.Path, "/v1/charges")
	p.KeyHeader = cmp.Or(p.KeyHeader, "Idempotency-Key")
	p.AuthHeader = cmp.Or(p.AuthHeader, "Authorization")
	p.AuthScheme = cmp.Or(p.AuthScheme, "Bearer")
	p.ReplayHeader = cmp.Or(p.ReplayHeader, "Idempotent-Replayed")
	f := &p.Fields
	f.Amount, f.Currency = cmp.Or(f.Amount, "amount"), cmp.Or(f.Currency, "currency")
	f.OrderID, f.ID, f.Status = cmp.Or(f.OrderID, "order_id"), cmp.Or(f.ID, "id"), cmp.Or(f.Status, "status")
	p.Encoding = cmp.Or(p.Encoding, EncodingJSON)
	if t.Policy.RetryWindow == 0 {
		t.Policy.RetryWindow = t.Policy.TTL
	}
	if t.Policy.RecoveryWindow == 0 {
		t.Policy.RecoveryWindow = DefaultRecoveryWindow
	}
	if t.Policy.MaxWait == 0 {
		t.Policy.MaxWait = DefaultMaxWait
	}
	t.gatewayDefaults() // before the provider key lifetime's default: the profile's
	if pr := &t.Policy.Production; pr.TTL > 0 && pr.ProviderKeyLifetime == 0 {
		pr.ProviderKeyLifetime = history.DefaultProviderKeyLifetime
	}
	if len(t.Tenants) == 0 {
		t.Tenants = append([]string(nil), DefaultTenants...)
	}
}

var bad = yamlfile.Bad

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
	if t.Install != nil && strings.TrimSpace(t.Install.Command) == "" {
		return bad("install.command", "expected the command that builds or installs the server (go, npm, pip)")
	}
	if t.Replicas < 1 || t.Replicas > 16 {
		return bad("replicas", "expected 1 to 16 replicas, got %d", t.Replicas)
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
	if !slices.Contains(KeyFormats, p.KeyFormat) {
		return bad("protocol.key_format", "expected uuid (or nothing, for any string), got %q", p.KeyFormat)
	}
	if p.Trace != "" {
		if _, err := gatewaysim.ParseTrace(p.Trace); err != nil {
			return bad("protocol.trace", "%v", strings.TrimPrefix(err.Error(), gatewaysim.ErrInvalidTrace.Error()+": "))
		}
	}
	return nil
}

// KeyFormats are the values of protocol.key_format.
var KeyFormats = []string{"", KeyUUID}

// KeyUUID is protocol.key_format: uuid.
const KeyUUID = "uuid"

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
	return checkProduction(p.Production)
}

// checkProduction validates policy.production: every duration positive,
// and a retry window or a provider key lifetime only beside the
// production TTL they are weighed against.
func checkProduction(pr history.Production) error {
	switch {
	case pr.TTL < 0:
		return bad("policy.production.ttl", "expected the positive duration for which a key deduplicates in production (e.g. 720h for 30 days), got %s", pr.TTL)
	case pr.RetryWindow < 0:
		return bad("policy.production.retry_window", "expected a positive duration, got %s", pr.RetryWindow)
	case pr.ProviderKeyLifetime < 0:
		return bad("policy.production.provider_key_lifetime", "expected a positive duration (Stripe keeps keys 24h), got %s", pr.ProviderKeyLifetime)
	case pr.TTL == 0 && pr.RetryWindow > 0:
		return bad("policy.production.ttl", "expected the production TTL beside policy.production.retry_window")
	case pr.TTL == 0 && pr.ProviderKeyLifetime > 0:
		return bad("policy.production.ttl", "expected the production TTL that policy.production.provider_key_lifetime is weighed against")
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
	return t.checkOrganisations(seen)
}

// checkOrganisations checks organisations: each a name and two or more
// of the tokens under tenants (tenants lists them), no token in two.
func (t *Target) checkOrganisations(tenants map[string]bool) error {
	in := map[string]string{}
	for _, org := range slices.Sorted(maps.Keys(t.Organisations)) {
		field := "organisations." + org
		if !nameRE.MatchString(org) {
			return bad(field, "expected an organisation name of 1-63 lowercase letters, digits, '.', '_' or '-', got %q", org)
		}
		principals := t.Organisations[org]
		if len(principals) < 2 {
			return bad(field, "expected two or more principals (tokens under tenants) that share the organisation, got %d", len(principals))
		}
		for i, tn := range principals {
			field := fmt.Sprintf("%s[%d]", field, i)
			switch {
			case !tenants[tn]:
				return bad(field, "expected one of the tokens under tenants, got %q", tn)
			case in[tn] == org:
				return bad(field, "principal %q is listed twice", tn)
			case in[tn] != "":
				return bad(field, "principal %q is already in organisation %q: a principal belongs to one", tn, in[tn])
			}
			in[tn] = org
		}
	}
	return nil
}

// checkTemplates renders the start section with sample values, so a broken
// template fails at load time instead of after PostgreSQL has started.
func (t *Target) checkTemplates() error {
	_, err := t.Render(Vars{ListenAddr: "127.0.0.1:1", Port: 1, DatabaseURL: "postgres://x", RedisURL: "redis://x", MySQLDSN: "u@tcp(x)/d", MySQLURL: "mysql://x", GatewayURL: "http://x", GatewayAPIKey: "sk", TTL: time.Hour, MaxWait: time.Second, WorkDir: "/tmp"})
	if err == nil {
		return nil
	}
	field, msg, _ := strings.Cut(err.Error(), ": ")
	return bad(field, "bad template: %s", msg)
}
