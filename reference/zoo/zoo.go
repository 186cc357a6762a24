package zoo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/idemcheck/idemcheck/reference"
)

// Server is what cmd/reference-server serves: an HTTP handler, the
// background work (notification listener, sweeper) that Run drives until
// its context ends, and a readiness signal. *reference.Server is one.
type Server interface {
	Handler() http.Handler
	Run(ctx context.Context) error
	Ready() <-chan struct{}
}

// Variant is one entry of the registry: a name, the defect in one line, and
// a constructor over the reference's configuration (the same flags and
// environment serve every variant).
type Variant struct {
	Name string
	Bug  string
	New  func(cfg reference.Config) (Server, error)
}

// ErrUnknown is returned by Lookup for a name that is not registered.
var ErrUnknown = errors.New("unknown variant")

// variants is the registry, the reference first. Each broken variant lives
// in its own file, named after it.
var variants = []Variant{
	{Name: "reference", Bug: "none", New: newReference},
	reachesOracle,
	naive, noFingerprint, rawFingerprint, inprocessMutex, releaseOnError, staleLeaseNewID,
	sweeperFailsInProgress, shortExpiry, globalKeys, noWait409, noRecovery,
	sweeperRecharges, crashBlind, shortRetention, passthroughKey, redisGetSet, redisShortLock,
	redisLastWriterWins, redisReadBackLock, redisSetexClaim, replayAs409, lockWait500,
	leaseIsRetention, failureExpiresWithLock, releaseNon2xx, timeInGatewayKey, releaseWrongKey,
	tzNaiveExpiry, lookAlikeKey, routeTemplateKey, anonymousNamespace,
	keyBeforeAuth, resendAfter5xx, adyenLongKey, orgScopedKeys, lostReclaim409, storeIfDelivered,
}

// Lookup finds a variant by name; an unknown name's error lists the valid ones.
func Lookup(name string) (Variant, error) {
	for _, v := range variants {
		if v.Name == name {
			return v, nil
		}
	}
	return Variant{}, fmt.Errorf("%w %q: expected one of %s", ErrUnknown, name, strings.Join(Names(), ", "))
}

// Names lists the registered variants, the reference first.
func Names() []string {
	names := make([]string, len(variants))
	for i, v := range variants {
		names[i] = v.Name
	}
	return names
}

func newReference(cfg reference.Config) (Server, error) {
	s, err := reference.New(cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// hooked builds a variant from the reference server: hooks gives the
// overrides of its flow, the variant's bug.
func hooked(hooks func(s *reference.Server) reference.Hooks) func(reference.Config) (Server, error) {
	return func(cfg reference.Config) (Server, error) {
		s, err := reference.New(cfg)
		if err != nil {
			return nil, err
		}
		s.SetHooks(hooks(s))
		return s, nil
	}
}

// Hooked is hooked for the garden: a correct member that sets one of the
// reference's choices through its hooks.
func Hooked(hooks func(s *reference.Server) reference.Hooks) func(reference.Config) (Server, error) {
	return hooked(hooks)
}

// serving builds a variant that is the reference behind serve (a wrapper
// of its handler at the HTTP edge), with the overrides hooks gives (nil:
// none).
func serving(serve func(*reference.Server) Server, hooks func(*reference.Server) reference.Hooks) func(reference.Config) (Server, error) {
	return func(cfg reference.Config) (Server, error) {
		s, err := reference.New(cfg)
		if err != nil {
			return nil, err
		}
		if hooks != nil {
			s.SetHooks(hooks(s))
		}
		return serve(s), nil
	}
}

// withoutSweeper builds a variant that runs no background sweeper.
func withoutSweeper(build func(reference.Config) (Server, error)) func(reference.Config) (Server, error) {
	return func(cfg reference.Config) (Server, error) {
		cfg.SweepInterval = -1
		return build(cfg)
	}
}
