package target

import (
	"fmt"
	"slices"
	"strings"
)

// Stores are the services a target may list under needs: the stores real
// idempotency libraries keep their keys in. The harness starts a throwaway
// server of each one the target lists (process mode) or a container
// (container mode), puts a toxiproxy link between every replica and it
// (replicaN->postgres, replicaN->redis, replicaN->mysql), and hands the
// replica its address through the variables each row names.
var Stores = []string{"postgres", "redis", "mysql"}

// Store is one of Stores.
type Store = string

// checkNeeds refuses a service the harness cannot start, and a store
// listed twice.
func (t *Target) checkNeeds() error {
	for i, n := range t.Needs {
		field := fmt.Sprintf("needs[%d]", i)
		if !slices.Contains(Stores, n) {
			return bad(field, "expected one of [%s], got %q", strings.Join(Stores, ", "), n)
		}
		if slices.Index(t.Needs, n) != i {
			return bad(field, "%q is listed twice", n)
		}
	}
	return nil
}

// NeedsStore reports whether the target asked for store s.
func (t *Target) NeedsStore(s Store) bool { return slices.Contains(t.Needs, s) }

// NeedsPostgres says whether the target asked for a PostgreSQL database.
func (t *Target) NeedsPostgres() bool { return t.NeedsStore("postgres") }

// StoreNames lists the stores the target asked for, in Stores order (the
// order links and crash points are drawn in, whatever the file's order).
func (t *Target) StoreNames() []Store {
	var out []Store
	for _, s := range Stores {
		if t.NeedsStore(s) {
			out = append(out, s)
		}
	}
	return out
}
