package harness

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/target"
)

// Link names one network path that runs through toxiproxy. It reads as
// "from->to": "client->replica0" carries the harness's requests to replica
// 0, "replica0->gateway" that replica's calls to the gateway simulator,
// "replica0->postgres" its database connections. Every replica has its own
// links, so a fault can cut one replica off while the others carry on. The
// string is also the toxiproxy proxy name and the Target recorded in the
// history.
type Link string

// ClientLink is the path from the harness's client to replica i.
func ClientLink(i int) Link { return Link(fmt.Sprintf("client->replica%d", i)) }

// FromClient reports whether l is a ClientLink: the harness's own
// requests run through it.
func (l Link) FromClient() bool { i := l.Replica(); return i >= 0 && l == ClientLink(i) }

// GatewayLink is the path from replica i to the gateway simulator.
func GatewayLink(i int) Link { return Link(fmt.Sprintf("replica%d->gateway", i)) }

// StoreLink is the path from replica i to one of the target's stores
// (target.Stores): "replica0->postgres", "replica1->redis".
func StoreLink(i int, store string) Link { return Link(fmt.Sprintf("replica%d->%s", i, store)) }

// PostgresLink is StoreLink(i, "postgres").
func PostgresLink(i int) Link { return StoreLink(i, "postgres") }

// Links lists every link of an Env with the given replicas and stores:
// per replica its client link, its gateway link, then one per store.
func Links(replicas int, stores []string) []Link {
	var out []Link
	for i := range replicas {
		out = append(out, ClientLink(i), GatewayLink(i))
		for _, s := range stores {
			out = append(out, StoreLink(i, s))
		}
	}
	return out
}

var linkRE = regexp.MustCompile(`^(?:client->replica(\d+)|replica(\d+)->(gateway|` + strings.Join(target.Stores, "|") + `))$`)

// ParseLink checks that s is a well-formed link name. Whether the replica
// exists, and whether the target has that store, is the Env's business
// (ErrUnknownLink at use).
func ParseLink(s string) (Link, error) {
	if !linkRE.MatchString(s) {
		return "", fmt.Errorf("%w: %q (want client->replicaN, replicaN->gateway or replicaN->STORE, STORE one of %s)", ErrUnknownLink, s, strings.Join(target.Stores, ", "))
	}
	return Link(s), nil
}

// Replica is the index of the replica at one end of the link, -1 for a
// malformed link.
func (l Link) Replica() int {
	m := linkRE.FindStringSubmatch(string(l))
	if m == nil {
		return -1
	}
	digits := m[1] + m[2]
	i, err := strconv.Atoi(digits)
	if err != nil {
		return -1
	}
	return i
}

// Direction is which way along a Link a toxic acts, in toxiproxy's terms:
// Upstream is the bytes the "from" side sends (requests: the client's to a
// replica, a replica's to the gateway), Downstream the bytes coming back
// (responses). Latency on the downstream of replica0->gateway therefore
// delays the gateway's answers after it has decided.
type Direction string

// The two directions of a link.
const (
	Upstream   Direction = "upstream"
	Downstream Direction = "downstream"
)

// ParseDirection accepts "upstream" and "downstream".
func ParseDirection(s string) (Direction, error) {
	switch d := Direction(s); d {
	case Upstream, Downstream:
		return d, nil
	}
	return "", fmt.Errorf("direction %q: want upstream or downstream", s)
}
