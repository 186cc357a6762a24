package garden

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/zoo"
)

// ErrUnknown is returned by Lookup for a name that is not in the garden.
var ErrUnknown = errors.New("unknown garden variant")

// variants is the registry; each member lives in its own file.
var variants = []zoo.Variant{opaqueKeys, inFlight429, exactTTL, stripeBody, ownShape, redisStore, mysqlStore, orderInPath, anonymousShared, looksUpFirst}

// Lookup finds a garden member by name.
func Lookup(name string) (zoo.Variant, error) {
	for _, v := range variants {
		if v.Name == name {
			return v, nil
		}
	}
	return zoo.Variant{}, fmt.Errorf("%w %q: expected one of %s", ErrUnknown, name, strings.Join(Names(), ", "))
}

// Names lists the garden's members.
func Names() []string {
	names := make([]string, len(variants))
	for i, v := range variants {
		names[i] = v.Name
	}
	return names
}

// wrapped is the reference server with its handler wrapped: the
// reference's claim flow, recovery and sweeper, with one choice changed
// at the HTTP edge.
type wrapped struct {
	*reference.Server
	wrap func(next http.Handler) http.Handler
}

// Handler is the reference's handler inside the member's wrapper.
func (w wrapped) Handler() http.Handler { return w.wrap(w.Server.Handler()) }

// newWrapped builds a member from the reference and a wrapper.
func newWrapped(cfg reference.Config, wrap func(next http.Handler) http.Handler) (zoo.Server, error) {
	s, err := reference.New(cfg)
	if err != nil {
		return nil, err
	}
	return wrapped{Server: s, wrap: wrap}, nil
}

// onStore is the reference itself on a store adapter of its own (the
// choice is the store): it refuses to start when check says the store
// configured is another (--store), rather than run as something it is not.
func onStore(name, bug string, check func(reference.Store) error) zoo.Variant {
	return zoo.Variant{Name: name, Bug: bug, New: func(cfg reference.Config) (zoo.Server, error) {
		if err := check(cfg.Store); err != nil {
			return nil, err
		}
		s, err := reference.New(cfg)
		if err != nil {
			return nil, err
		}
		return s, nil
	}}
}
