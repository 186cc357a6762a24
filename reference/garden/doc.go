// Package garden is the other half of self-validation: correct servers
// that make choices the reference does not, each legitimate, each one
// that a harness tuned only to the reference might wrongly fail. They must
// never FAIL (PASS or NON-STRICT). Like the zoo, each member reuses the
// reference (here: the whole reference server, wrapped), so the only
// difference from it is the choice.
//
// # API
//
//   - Lookup(name) and Names(): the registry cmd/reference-server also
//     serves from (--variant NAME), after the zoo's.
//   - Variants use zoo.Variant and zoo.Server, so one binary serves both.
//
// # Members
//
// opaque_keys.go: the key header is an opaque string; the quoted form is
// another key. in_flight_429.go: 429 + Retry-After to a duplicate in
// flight. exact_ttl.go: keys forgotten exactly at the TTL, which is also
// the retry window it promises. stripe_body.go: a Stripe-shaped response
// body, the order under metadata.order_id. own_shape.go: a request shape
// of its own (a path with the order, a form body). redis_store.go: the keys in
// Redis (reference/redisstore). mysql_store.go: the keys in MySQL
// (reference/mysqlstore). order_in_path.go: the order in the path only
// (zoo.OrderInPath). anonymous_shared.go: requests without credentials
// taken into one shared namespace (zoo.Anonymous). looks_up_first.go:
// every re-send looked up by its order first, on every provider
// (zoo.Hooked). garden.go: the registry and the shared wrapper.
//
// builtin.Members (kind "garden") says which family exercises each choice;
// the self-validation test holds the garden to "never FAILED".
package garden
