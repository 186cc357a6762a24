package families

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

func init() {
	register(Family{Name: "protocol", Level: "L1", Rank: 60, Gen: genProtocol,
		Doc: "missing, empty, over-long, quoted and malformed keys; sequential retries, some after the same request was refused for its credentials"})
}

func genProtocol(t *rapid.T, tg *target.Target, replicas int) scenarios.Scenario {
	var b builder
	tenant := rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant")
	amount := drawAmount(t)
	form := rapid.SampledFrom(scenarios.KeyForms[1:]).Draw(t, "key_form")
	b.send(scenarios.Send{ID: "odd", Replica: -1, Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, KeyForm: form, Purpose: "key-form:" + form})
	// One payment, one key form: the quoted form is the same key to a
	// server that parses sf-strings and a different one to a server that
	// treats the header as opaque (as Stripe does); both are legitimate,
	// so a payment never mixes forms and the quoted one is graded on its
	// own keys, under R1 only.
	form = rapid.SampledFrom([]string{"", "quoted"}).Draw(t, "payment_key_form")
	// A client whose token was refused (expired, missing) re-authenticates
	// and sends the payment again with the same key: the refusal came
	// before any processing and must bind nothing. Not drawn where the
	// target takes requests without credentials: there the first attempt
	// is a payment of its own.
	if !tg.Protocol.Anonymous && rapid.IntRange(0, 2).Draw(t, "refused_credentials_first") == 0 {
		b.send(scenarios.Send{ID: "unauthenticated", Client: 1, Replica: rapid.IntRange(0, replicas-1).Draw(t, "replica"), Tenant: noPrincipal, Key: "k1", Order: "o1", Amount: amount, KeyForm: form, Purpose: "refused-credentials"})
	}
	retries := rapid.IntRange(1, 3).Draw(t, "sequential_retries")
	for i := 0; i < retries; i++ {
		b.send(scenarios.Send{ID: fmt.Sprintf("r%d", i), Client: 1, Replica: rapid.IntRange(0, replicas-1).Draw(t, "replica"), Tenant: tenant, Key: "k1", Order: "o1", Amount: amount, KeyForm: form, Purpose: "sequential-retry"})
	}
	return b.scenario("protocol")
}
