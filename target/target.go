package target

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"text/template"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
)

// Target describes a system under test: how to start it, how it speaks the
// charge protocol, and what it promises. It is loaded from a YAML file (see
// Load) or taken from the built-in table (package builtin).
type Target struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Start says how to run one replica as a child process. Every string
	// in it is a text/template over Vars.
	Start Start `yaml:"start"`
	// Install, when set, is run once before the environment starts (see
	// Install in package harness/process): the build or install step of a
	// server whose start.command needs one (go build, npm ci, pip install).
	Install *Install `yaml:"install"`
	// Image, when set, runs replicas as containers of this image instead
	// of processes (container mode).
	Image string `yaml:"image"`
	// PostgresImage, in container mode, is the PostgreSQL image to run
	// (default idemcheck/postgres:15, built by make images). It must be
	// local: nothing is pulled.
	PostgresImage string `yaml:"postgres_image"`
	// Replicas is how many copies run at once on one database (default 2).
	Replicas int `yaml:"replicas"`
	// Needs lists the stores the server needs, of Stores: "postgres",
	// "redis", "mysql".
	Needs    []string `yaml:"needs"`
	Ready    Ready    `yaml:"ready"`
	Protocol Protocol `yaml:"protocol"`
	Policy   Policy   `yaml:"policy"`
	// Gateway names the payment provider the server charges through and
	// the API it uses (default stripe, charges): the gateway simulator
	// speaks that provider's profile.
	Gateway Gateway `yaml:"gateway"`
	// Tenants are bearer tokens, one per tenant (default tenant_a, tenant_b).
	Tenants []string `yaml:"tenants"`
	// Organisations groups tenants that are principals of one
	// organisation (an account's several API keys, a team's members): by
	// name, the tokens of Tenants it holds. A key sent by two principals
	// of one organisation is still two requests, one per principal; the
	// tenants family then sends one key from two principals of one
	// organisation in some examples. See Organisation and SharedPrincipals.
	Organisations map[string][]string `yaml:"organisations"`

	// File is where the target was loaded from ("" for built-ins); Dir is
	// its folder, absolute, against which Load resolved relative paths.
	File string `yaml:"-"`
	src  []byte // File's content, so that later checks can name a line (Refuse)
	Dir  string `yaml:"-"`
	// NoTimeFaults is set by a run that asked for no time faults
	// (certify --time-faults=false): late-retry then draws neither
	// clock_skew nor db_timezone (see families.drawClockFaults).
	NoTimeFaults bool `yaml:"-"`
	// Containers is set by a run whose replicas are containers (certify
	// --docker): relaunching one there replaces its container (seconds,
	// not a fraction of one), so late-retry draws its time faults, which
	// relaunch a replica twice, less often (see families.drawClockFaults).
	Containers bool `yaml:"-"`
}

// Start is the command line and environment of one replica.
type Start struct {
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Dir     string            `yaml:"dir"`
	Env     map[string]string `yaml:"env"`
}

// Install is a command run once, in Dir, before any replica starts. Its
// strings are not templates: it runs before any address exists.
type Install struct {
	Command string   `yaml:"command"`
	Args    []string `yaml:"args"`
	Dir     string   `yaml:"dir"`
}

// Ready is the readiness probe: GET Path must answer 2xx within Timeout.
type Ready struct {
	Path    string        `yaml:"path"`
	Timeout time.Duration `yaml:"timeout"`
}

// Protocol maps the charge protocol onto a server's dialect: where a
// charge is sent (Path, whose {order_id}, {amount} and {currency} are
// filled per request), what its body looks like (Body, written as
// Encoding), which headers carry the key, the tenant and the replay
// marker, and where a success answer keeps the judged fields (Fields).
type Protocol struct {
	Path string `yaml:"path"` // default /v1/charges
	// Body is the request body template; nil means the reference
	// protocol's body in Fields' mapping (see Template).
	Body *Body `yaml:"body"`
	// Encoding is json (default) or form (application/x-www-form-urlencoded,
	// nested fields as Stripe's bracket keys).
	Encoding  string `yaml:"encoding"`
	KeyHeader string `yaml:"key_header"` // default Idempotency-Key
	// KeyFormat is the form of the keys the client sends: "" (any
	// printable string, the default) or "uuid", for a server that
	// accepts only UUID-shaped keys (36 characters, 8-4-4-4-12 hex, as
	// Fiber's idempotency middleware checks by default).
	KeyFormat    string `yaml:"key_format"`
	AuthHeader   string `yaml:"auth_header"`   // default Authorization
	AuthScheme   string `yaml:"auth_scheme"`   // default Bearer; "" after "none" sends the token bare
	ReplayHeader string `yaml:"replay_header"` // default Idempotent-Replayed
	// Anonymous says the endpoint also takes requests without credentials
	// (a public one): the tenants family then sends some payments with no
	// auth header at all, from clients the server cannot tell apart.
	Anonymous bool   `yaml:"anonymous"`
	Fields    Fields `yaml:"fields"`
	// Trace is where the server names the order on its gateway calls,
	// in gatewaysim.ParseTrace's form: metadata[KEY], description:PATTERN
	// (with {order_id} in it) or amount (it names no order: every payment
	// of a run gets an amount of its own, and a charge is attributed by
	// amount and currency). "" means idemcheck finds it at first contact.
	Trace string `yaml:"trace"`
}

// Key is the key the client sends for k, in the form KeyFormat asks: k
// itself, or under KeyUUID a UUID-shaped key (version 8, RFC 9562's
// custom layout) made from the first 122 bits of k's SHA-256: the same k
// is the same UUID, and another is another, as the plain key would be.
func (p Protocol) Key(k string) string {
	if p.KeyFormat != KeyUUID {
		return k
	}
	h := sha256.Sum256([]byte(k))
	h[6] = h[6]&0x0f | 0x80 // version 8
	h[8] = h[8]&0x3f | 0x80 // RFC 9562 variant
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// UniqueAmountFloor is the first amount, in minor units, a run's
// payments get under an amount trace: every payment takes the next one
// (runner), and first contact's payments stay below it (contact). Well
// inside what a gateway accepts (Stripe: up to 99,999,999).
const UniqueAmountFloor = 10001

// TraceRule is the Trace as the gateway simulator takes it; ok is false
// when the target leaves it to first contact.
func (p Protocol) TraceRule() (t gatewaysim.Trace, ok bool) {
	if p.Trace == "" {
		return t, false
	}
	t, err := gatewaysim.ParseTrace(p.Trace)
	return t, err == nil
}

// Fields maps the body fields of the success response, and of the
// request when the target declares no protocol.body. Each is a bare
// top-level name ("order_id") or an RFC 6901 JSON pointer
// ("/metadata/order_id") for a server that nests it; see FieldPath.
type Fields struct {
	Amount   string `yaml:"amount"`   // default amount
	Currency string `yaml:"currency"` // default currency
	OrderID  string `yaml:"order_id"` // default order_id
	ID       string `yaml:"id"`       // default id (response)
	Status   string `yaml:"status"`   // default status (response)
}

// Policy is what the target promises; the checker judges against it.
// It is history.Policy: the same type is kept in every history.
type Policy = history.Policy

// Production is policy.production: the production TTL and retry window
// and the provider's key lifetime, against which the test-mode gateway's
// memory is compressed (history.Policy.GatewayKeyTTL).
type Production = history.Production

// Vars are the values a Start template may use.
type Vars struct {
	Replica       int    // 0-based replica index
	ListenAddr    string // host:port the replica must listen on
	Port          int
	DatabaseURL   string // the replica's link to PostgreSQL (through its proxy)
	RedisURL      string // the replica's link to Redis, redis://host:port/0 (through its proxy)
	MySQLDSN      string // the replica's link to MySQL in go-sql-driver form, user:pass@tcp(host:port)/db (through its proxy)
	MySQLURL      string // the same, as mysql://user:pass@host:port/db
	GatewayURL    string // the replica's link to the gateway (through its proxy)
	GatewayAPIKey string
	TTL           time.Duration
	MaxWait       time.Duration
	WorkDir       string // a scratch directory for this replica
	TargetDir     string // the target file's folder (Render fills it from Target.Dir)
}

// Rendered is a Start with every template executed.
type Rendered struct {
	Command string
	Args    []string
	Dir     string
	Env     []string // KEY=value, sorted by key
}

// Render executes the Start templates for one replica.
func (t *Target) Render(v Vars) (Rendered, error) {
	var r Rendered
	if v.TargetDir == "" {
		v.TargetDir = t.Dir
	}
	var err error
	if r.Command, err = expand("start.command", t.Start.Command, v); err != nil {
		return r, err
	}
	if r.Dir, err = expand("start.dir", t.Start.Dir, v); err != nil {
		return r, err
	}
	for i, a := range t.Start.Args {
		s, err := expand(fmt.Sprintf("start.args[%d]", i), a, v)
		if err != nil {
			return r, err
		}
		r.Args = append(r.Args, s)
	}
	for _, k := range slices.Sorted(maps.Keys(t.Start.Env)) {
		s, err := expand("start.env."+k, t.Start.Env[k], v)
		if err != nil {
			return r, err
		}
		r.Env = append(r.Env, k+"="+s)
	}
	return r, nil
}

func expand(field, text string, v Vars) (string, error) {
	tmpl, err := template.New(field).Option("missingkey=error").Parse(text)
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, v); err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	return b.String(), nil
}

// SharedPrincipals lists the organisations' principals as indices into
// Tenants, one list per organisation in the order of their names, each
// in the order the organisation lists them: the tenants that share an
// organisation and must still be kept apart.
func (t *Target) SharedPrincipals() [][]int {
	index := make(map[string]int, len(t.Tenants))
	for i, tn := range t.Tenants {
		index[tn] = i
	}
	var out [][]int
	for _, org := range slices.Sorted(maps.Keys(t.Organisations)) {
		var idx []int
		for _, tn := range t.Organisations[org] {
			if i, ok := index[tn]; ok {
				idx = append(idx, i)
			}
		}
		if len(idx) >= 2 {
			out = append(out, idx)
		}
	}
	return out
}
