// Package gatewaysim is a simulated payment gateway: the subset of Stripe's
// /v1/charges and PaymentIntents APIs that a payment service uses, a
// ledger of every money
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
//   - [New] with a [Config] (provider profile, TTL, no-idempotency mode,
//     seed, clock, logger), then serve [Sim.Handler], the provider's API
//     (the data plane, the address a server is given), e.g.
//     httptest.NewServer(sim.Handler()), and, for a harness in another
//     process, [Sim.ControlHandler], the control API (/_sim/...), on a
//     listener of its own that the server is never told of. On the
//     provider's address /_sim/... gets the provider's 404, and every
//     request that is not the provider's API is an [EventForeign] event
//     ([Sim.HandlerVia] names the path it came by).
//   - cmd/gateway-sim runs the same handlers as a process (--addr,
//     --control-addr, --via); [Client] drives its control API from
//     another process.
//   - [Sim.Reset] empties ledger, keys and faults; [Sim.Close] ends event
//     streams so a server can shut down.
//
// # The Stripe subset
//
//   - POST /v1/charges, form-encoded as stripe-go sends it or JSON: amount,
//     currency, source (token, or source[number] with Stripe's test cards),
//     customer, description, metadata[...]; the order the ledger records
//     is where the Trace in force finds it (metadata[order_id] unless
//     set: any metadata key, the description, or the amount and currency
//     the harness expects; trace.go).
//   - GET /v1/charges/{id}; GET /v1/charges/search with
//     query=metadata['order_id']:'ord_1' (field:value AND field:value).
//   - POST /v1/payment_intents (amount, currency, payment_method,
//     confirm, metadata[...], description, customer, payment_method_types[],
//     and the rest of stripe-go's create params); with confirm=true it
//     moves money. POST /v1/payment_intents/{id}/confirm moves money for
//     one created without. pm_card_visa succeeds; pm_card_chargeDeclined,
//     pm_card_chargeDeclinedInsufficientFunds, ... decline as their tok_
//     namesakes do. Statuses: requires_payment_method,
//     requires_confirmation, succeeded (latest_charge names the charge).
//   - GET /v1/payment_intents/{id}; GET /v1/payment_intents/search with
//     the query language of charge search.
//   - Errors are Stripe error objects: 400 invalid_request_error naming the
//     param, 401 without API key, 402 card_error (carrying the
//     PaymentIntent, requires_payment_method, for a PaymentIntent), 404
//     unknown resource, 409 key in flight, 400 idempotency_error for a
//     reused key, 400 payment_intent_unexpected_state for a confirm of a
//     succeeded PaymentIntent, 429 lock_timeout for a confirm while
//     another confirm of it waits out latency, 500 api_error for injected
//     outages.
//
// Files: provider.go (the seam: a Profile, the provider's idempotency
// semantics as data, and the dialect and operation interfaces),
// provider_<name>.go (one per profile: its routes, keys, errors, headers
// and operations), charge_flow.go (the one flow every money-moving POST
// takes, in any dialect, over one ledger), and Stripe's own:
// stripe_api.go (GET and search handlers), charge_request.go and
// intent_request.go (parameters), intent.go (PaymentIntents), search.go.
//
// # Provider profiles
//
// Config.Provider names the provider the simulator speaks ([Profiles],
// [ProfileNamed]); each is one file, provider_<name>.go, over the one flow
// and the one ledger:
//
//   - stripe (the default): the Stripe subset above.
//   - checkout: Checkout.com's POST /payments (amount, currency,
//     reference, source {type: token|card|id}; 201 Authorized or
//     Declined), GET /payments/{id}, GET /payments?reference=...;
//     Cko-Idempotency-Key, and only a 2xx result is kept: after a 4xx or
//     5xx (also a charge-then-fail) the same key pays again.
//   - adyen: Adyen's Checkout API POST /v71/payments (amount {value,
//     currency}, reference, merchantAccount, paymentMethod; 200 with
//     resultCode Authorised or Refused and the pspReference);
//     Idempotency-Key of at most 64 characters (longer: 422), echoed; a
//     duplicate in flight gets a 422 with Transient-Error: true.
//   - none: Stripe's wire format without idempotency (Config.NoIdempotency).
//
// A Profile carries the provider's idempotency semantics as data
// ([Idempotency]); the declining test cards are Stripe's numbers in every
// dialect. A payment's merchant reference is recorded (Charge.Reference)
// and a Trace can attribute by it (reference).
//
// # Idempotency
//
// Keys are scoped per API key (Authorization: Bearer, or basic-auth user)
// and bound to their request's route and parameters (one key cannot both
// create and confirm), the same for charges and PaymentIntents; each is
// forgotten on its own clock (idempotency.go): an answered key
// Config.IdempotencyTTL after its first request, a key in flight never,
// a key whose order a KeepKeys names (a payment in recovery: keep_keys.go, POST /_sim/keep-keys) not before that ends. A
// key replays the stored response byte for byte with Idempotent-Replayed:
// true. A
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
//     A confirmed PaymentIntent is one entry, its charge, with
//     Charge.PaymentIntent naming it (and Event.PaymentIntent on its
//     charge or decline event).
//
// # Faults
//
//   - [Fault] = [FaultKind] + [Match] (order id, n-th request, seeded
//     probability) + Latency + Times; a fault applies to the money-moving
//     requests only (a charge, a PaymentIntent create with confirm=true, a
//     confirm); [Sim.AddFault], [Sim.RemoveFault],
//     [Sim.ClearFaults], [Sim.Faults]; /_sim/faults (GET, POST, DELETE).
//   - Kinds: [Decline], [FailBeforeCharge], [ChargeThenFail],
//     [ChargeThenDrop], [ChargeThenHang], [Latency].
//   - [Sim.Release], [Sim.ReleaseAll], [Sim.Holds], POST /_sim/release?hold=ID:
//     let a withheld (charge-then-hang) response go.
//
// # Events
//
//   - [Event]: charge, decline, fault, hold, release, replay, reset,
//     foreign (a request that is not the provider's API); Seq is
//     monotonic for the life of the Sim.
//   - [Sim.Subscribe], [Sim.SubscribeSince]: unbounded per-subscriber queues,
//     so the gateway never blocks and the harness never misses an event.
//   - [Sim.WaitEvent]: wait on a condition, including events that already
//     happened since the last Reset; tests synchronise with it, never sleep.
//   - GET /_sim/events: SSE (?since=SEQ) or long-poll (?wait=5s);
//     [Client.StreamEvents], [Client.WaitEvent].
package gatewaysim
