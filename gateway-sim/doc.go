// Package gatewaysim is a simulated payment gateway: the subset of Stripe's
// /v1/charges API that a payment service uses, a ledger of every money
// movement that idemcheck treats as ground truth ("was this customer charged
// twice?"), and programmable faults at the points where payment incidents
// happen. A service built on stripe-go works against it unchanged once its
// backend URL points at the simulator.
//
// It imports no idemcheck package, so any payment service can test against
// it; harness, faults, scenarios and cmd/gateway-sim import it.
//
// # Setting up
//
//   - [New] with a [Config] (TTL, no-idempotency mode, seed, clock, logger),
//     then serve [Sim.Handler], e.g. httptest.NewServer(sim.Handler()).
//   - cmd/gateway-sim runs the same handler as a process; [Client] drives
//     its control API from another process.
//   - [Sim.Reset] empties ledger, keys and faults; [Sim.Close] ends event
//     streams so a server can shut down.
//
// # The Stripe subset
//
//   - POST /v1/charges, form-encoded as stripe-go sends it or JSON: amount,
//     currency, source (token, or source[number] with Stripe's test cards),
//     customer, description, metadata[...]; metadata[order_id] is the
//     order the ledger records.
//   - GET /v1/charges/{id}; GET /v1/charges/search with
//     query=metadata['order_id']:'ord_1' (field:value AND field:value).
//   - Errors are Stripe error objects: 400 invalid_request_error naming the
//     param, 401 without API key, 402 card_error, 404 unknown resource,
//     409 key in flight, 400 idempotency_error for a reused key, 500 api_error
//     for injected outages.
//
// # Idempotency
//
// Keys are scoped per API key (Authorization: Bearer, or basic-auth user),
// expire after Config.IdempotencyTTL from their first request, and replay
// the stored response byte for byte with Idempotent-Replayed: true. A
// decision is stored the instant it is made, before any fault withholds or
// loses the response. Requests that fail validation store nothing. Without
// latency faults a decision is one critical section, so concurrent duplicates
// replay the committed charge; during a latency fault the key is in flight
// and a duplicate gets 409.
//
// # The ledger
//
//   - [Sim.Ledger] and GET /_sim/ledger: every [Charge] (succeeded or
//     declined) in commit order, with API key, idempotency key, order id.
//
// # Faults
//
//   - [Fault] = [FaultKind] + [Match] (order id, n-th request, seeded
//     probability) + Latency + Times; [Sim.AddFault], [Sim.RemoveFault],
//     [Sim.ClearFaults], [Sim.Faults]; /_sim/faults (GET, POST, DELETE).
//   - Kinds: [Decline], [FailBeforeCharge], [ChargeThenFail],
//     [ChargeThenDrop], [ChargeThenHang], [Latency].
//   - [Sim.Release], [Sim.ReleaseAll], [Sim.Holds], POST /_sim/release?hold=ID:
//     let a withheld (charge-then-hang) response go.
//
// # Events
//
//   - [Event]: charge, decline, fault, hold, release, replay, reset; Seq is
//     monotonic for the life of the Sim.
//   - [Sim.Subscribe], [Sim.SubscribeSince]: unbounded per-subscriber queues,
//     so the gateway never blocks and the harness never misses an event.
//   - [Sim.WaitEvent]: wait on a condition, including events that already
//     happened since the last Reset; tests synchronise with it, never sleep.
//   - GET /_sim/events: SSE (?since=SEQ) or long-poll (?wait=5s);
//     [Client.StreamEvents], [Client.WaitEvent].
package gatewaysim
