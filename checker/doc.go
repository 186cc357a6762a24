// Package checker judges a recorded history (package history) against the
// invariants of the charge protocol (docs/protocol.md §6) and certifies a
// level (§7). It is pure: history in, verdicts out. It reads no clock, does
// no I/O, draws no random number, and the same history always gives the
// same Result, whatever the order of its records.
//
// # API
//
// Judging:
//   - Check(h) judges one history and returns a Result.
//   - Merge(results...) combines the results of several histories of one
//     target (families, shards) into one certification.
//   - MergeCheck(a, b) folds two results of one check: the one rule Merge
//     and reports.Merge (`idemcheck merge`) both merge a check by.
//   - Undecided(id, level, note) is a family that could not run (UNKNOWN);
//     NotJudged(id, level, note) one deliberately not played (PASS, not
//     exercised), such as crash-window against a gateway without
//     idempotency (NoProviderIdempotency).
//
// Results:
//   - Result: Checks (every check, in the order M1..M6, P1, P2, R1..R5,
//     E1, E2, A1, G1), the worst Verdict, the certification Level and LevelNote, the
//     Coverage (what the history exercised) and Source. Result.Failed,
//     Result.Find.
//   - CheckResult: one check's ID, Name, Level, Verdict, Exercised,
//     Violations and Note. (Named CheckResult, not Check: the entry point
//     is func Check, and Go gives a type and a func one namespace.)
//   - Violation: the invariant, tenant, key, order, an explanation, and the
//     op, charge and fault ids that prove it.
//   - Verdict: PASS, INFORMATIONAL, NON-STRICT, UNKNOWN, FAILED, ordered by
//     Verdict.Rank in that order; Verdict.Acceptable is true for the first
//     three.
//   - CheckIDs and CheckName read the catalog (check.go), one row per
//     check: its id, name, level, judge, and whether its FAILED is money
//     moved (MovedMoneyWrongly). LevelName names a level ("L4" →
//     "crash-safe"), from the ladder.
//   - Coverage: what was exercised, summed by Coverage.Add (and Merge),
//     including CrashFaults, CrashJudged and CrashPoints, the count per
//     crash point.
//   - CrashPoints: the names of the crash points of the crash-window
//     family, read from crashwave.Table, the one table of them. A
//     history marks the crash point a fault belongs to with
//     Fault.Params[history.ParamCrashPoint].
//
// # Fault classes
//
// The checker judges a fault by its class, never by its name: the fault
// kind declares it (package faults) and the history records it
// (history.Fault.Class). history.Fault.ClassOf reads it, and gives a
// fault recorded without one the class its name had (history/legacy.go,
// the one place that classes by name), so older histories are judged as
// before. Crash faults that fired are crash coverage (L4, G1); Slows
// faults excuse only a 5xx that came after waiting (R3); Business faults
// (a decline) disturb nothing (M6, R3 and the quiet rule ignore them);
// Disturbs faults make answers on their path indeterminate until they
// heal and the recovery window passes. Skews faults (a replica's clock
// or its sessions' zone moved) disturb nothing while in force: the
// relaunches that apply and undo them are crash faults of their own
// ("relaunch"), and the measured skew widens the band around a promise's
// end (below) and the recovery window of the quiet rule (a server whose
// leases follow a clock behind its peers' takes a key over that much
// later).
//
// # Partitions and attribution
//
// Ops are partitioned, porcupine style, by (tenant, key) and by order.
// The key is the one a server reads from the header: the quoted sf-string
// form "k" is the key k; a missing, empty, over-long (>255) or non-visible
// ASCII key is invalid, and such requests belong to no key partition.
// Payload equality compares the request as sent: its method and path (an
// order id in the path makes another request), then its body, a JSON
// body by RFC 8785 canonical equality (github.com/gowebpki/jcs), a form
// body by its decoded parameters in any order; strings compare exactly.
//
// A (tenant, key) partition is cut into epochs: an epoch runs from its first
// request for max(TTL, retry window), the span in which the target promised
// to remember the key; a request sent after that opens a new epoch (the
// server may have forgotten). A zero TTL means no expiry was declared: one
// epoch, forever. Each epoch has a reference body, the first body sent; when
// requests with different bodies raced the first one, the body the server
// accepted (2xx, else a non-422 failure) is taken as the one it saw first.
// In a later epoch, requests refused with 400 (invalid) or 422 (a server
// that still keeps the key refusing a different body) before any other
// answer bind nothing: the reference is the first body not so refused.
// A promise is a floor, and a server may keep a key longer: a request of
// a later epoch answered from the previous one (its answer to the same
// body, or a 422 to another) and sent before the epoch's first answer
// anew completed is carried (carried.go): the server's previous epoch,
// not judged as this one's and binding no reference body.
// Requests carrying the reference body (canonically) are the epoch's
// "equal" requests; the others are "mutated".
//
// Outcomes are re-read from the status: 408, 409, 423, 425, 429 and any
// failure carrying Retry-After are indeterminate, whatever an older client
// recorded.
//
// Ledger charges link to requests through the order (metadata order_id); the
// gateway's idempotency key is the server's own and is not used. The ledger
// clock is trusted to 50ms (plus History.ClockOffset): the request that
// triggered a charge is one of the order's requests in flight when the
// charge was made, give or take that slack, preferring one whose own
// non-replayed answer named the charge, then a replayed answer naming it,
// then one strictly in flight, then the earliest sent. If none was in
// flight (a server finishing after the client gave up, a sweeper) it is
// the latest request of the order sent before the charge, and M1's note
// says so; if none was sent before, the charge has no trigger. Charges for
// orders no request of the history carried are A1's to judge.
//
// # The edge of a promise
//
// The client stamps a retry when it sends it; the server measures its TTL
// from its own receipt, on its own clock. A request sent within
// max(TTL/10, 250ms) (+ |ClockOffset|) of its epoch's promise end, on
// either side, is at the edge; a replica whose clock was skewed
// (history.Fault.Skew, measured by a clock_skew fault) widens that band
// by its skew for a request it took, for every request of an epoch whose
// first request it took, and for every request when it was skewed within
// its skew of the promise's end (its sweeper may have forgotten the key
// early), and a request of the previous epoch that the server may have
// taken past that epoch's end may have opened its next epoch earlier than
// the checker's, so a later request sent more than the promise (less the
// band) after it is at the edge too, while the checker's epoch opened
// within the promise of that request's answer (boundary.go): what it got
// is never FAILED, only UNKNOWN
// (M1, M3, M4, P1, P2, M6, E1, E2 say which, in their notes), and it
// counts as no expiry probe (Coverage.EdgeRetries).
//
// # Checks (FAILED unless said otherwise)
//
//   - M1 no double charge: per order, at most one succeeded charge per epoch
//     of a (tenant, key). A second charge triggered in a later epoch (sent
//     after first request + max(TTL, retry window)) or under another
//     (tenant, key) is outside every promise: listed in the note, not
//     failed. A charge triggered by a request without a valid key, or by no
//     request, is never excused when the order has another charge. The
//     violation names both charges, both triggers and every request that
//     was answered with either charge. When both charges carry one
//     gateway key (provider.go), it says what the provider did: a gateway
//     that keeps keys (History.Gateway.KeyTTL) had forgotten the key, so
//     only the provider's idempotency had held the order, inside the
//     provider's lifetime; a gateway without idempotency ignored it.
//   - M2 no phantom success: every 2xx names a charge id the ledger holds as
//     succeeded (an answer naming a PaymentIntent names the charge its
//     confirmation made, history.ChargeIDs: every check judges it as that
//     charge; an unknown PaymentIntent is no such charge), and the
//     response's amount, currency (an ISO 4217 code, in any case), order
//     (and status, if present) are the ledger's; for an equal (or keyless)
//     request, what it
//     asked for must also be what was charged.
//   - M3 no false failure: within an epoch, once an equal request got a
//     definitive failure (a 4xx but the retryable ones), no request of the
//     epoch may have triggered a succeeded charge; and no request that got
//     a definitive failure (a mutated 422, a keyless 400) may itself have
//     triggered one. A decline is a "failed" ledger charge and moves no
//     money. Exercised only by failures to an equal request (a decline),
//     not by a 422 or a keyless 400.
//   - M4 consistent replay: within an epoch, all definitive answers to equal
//     requests are one answer: one charge id, or one failure status.
//   - M5 tenant isolation: a 2xx never names a charge whose order (in the
//     ledger or in the response) only other tenants sent, and no charge id
//     is returned to two tenants. Exercised only when two tenants used the
//     same key string.
//   - M6 convergence: for each epoch where an equal request got an
//     indeterminate answer, the final answer must be definitive and agree
//     with the ledger (a 2xx names a succeeded charge; a failure means the
//     epoch moved no money). The final answer is the one that completed
//     last or, when that one is indeterminate, the last definitive answer
//     to a request sent "quiet" (below): earlier indeterminate answers (a
//     replica warming up) and trailing ones (a 429 to a concurrent probe)
//     are tolerated. A final answer still indeterminate is FAILED if it was
//     a retry after an indeterminate answer, sent after every disruptive
//     fault injected before it had healed and the recovery window had
//     passed ("quiet"); otherwise UNKNOWN: a fault never healed, the retry
//     came too early, or nothing was retried. Exercised only by epochs with
//     a 5xx or no answer (a 409 is the protocol working). A fault of
//     class history.Business (a scripted decline) is a definitive answer,
//     not a disturbance, and is ignored here and in R3.
//   - P1 different payload refused: a mutated request never gets a 2xx,
//     never a replay of the stored failure (the same 402; a 401 or 403
//     refuses credentials before processing and stores nothing, so two
//     such refusals are no replay), and never triggers a ledger charge of
//     any status.
//   - P2 equal payload recognised: an equal request never gets 422, nor any
//     failure that differs from the epoch's first definitive answer.
//     Exercised only by equal bodies that differ byte for byte.
//   - R1 (NON-STRICT): a request without a valid key gets 400 (a 2xx or
//     another 4xx is NON-STRICT); a valid key, including the quoted form,
//     refused with 400 is NON-STRICT too.
//   - R2 (NON-STRICT): a mutated request refused with a status other than
//     422 (P1 judges 2xx and replays), but 401 or 403 (its credentials).
//   - R3 (NON-STRICT): a duplicate is a request sent while another request
//     of its epoch was in flight. NON-STRICT: any 409 without Retry-After; a
//     409 to a duplicate held less than max_wait × 0.5 while the owner was
//     still in flight (the client clock and the server's wait clock differ
//     by latency and scheduling; half separates a waited 409 from an
//     immediate one with margin); a 5xx to a duplicate whose own path (its
//     replica's process and links, the gateway for its order, shared
//     services) had no fault active or recovering, whatever other links
//     suffered; a fault that only slows (class history.Slows) excuses no
//     5xx that came back before max_wait × 0.5. A replica's skewed clock
//     (class history.Skews) excuses nothing: leases stamped on one clock
//     (the database's) hold whatever the replicas' clocks say.
//     A 409 after the owner finished (a crashed owner's lock) is fine. A
//     429 or 423 with Retry-After is a legitimate "busy" answer.
//   - R4 (INFORMATIONAL): among 2xx answers naming one charge in an epoch,
//     at most one (the original) lacks Idempotent-Replayed: true.
//   - R5 (NON-STRICT): a success body names its order. A body without it
//     (a dialect; map it by JSON pointer in the target) is not M2's.
//   - E1 no early expiry: a double charge inside one epoch whose second
//     trigger was sent within TTL of the epoch's first request, after the
//     first charge was made and after some equal request of the epoch had
//     been answered definitively (the server held the result and forgot
//     it). A duplicate sent before any answer raced the first request: M1's
//     concurrency failure, not expiry. A second charge made while no
//     request was in flight is M1's alone. Exercised by definitive retries
//     sent in [TTL/2, TTL], clear of the edge.
//   - E2 retry window covered: when retry window > TTL, a double charge
//     triggered in (TTL, retry window] is FAILED (UNKNOWN at the edge).
//     With retries past the TTL but none in that window: UNKNOWN. With no
//     retry past the TTL at all, not exercised. A retry window within the
//     TTL is covered by E1.
//   - A1 accounting (accounting.go): every succeeded ledger charge belongs
//     to an order an example sent. A charge with no order (the server did
//     not name its order where the run traces money) or for an order that neither the
//     history's requests nor History.OtherOrders name is FAILED, naming the
//     charge. Accounting (the run's reconciliation) judges the ledger's
//     unowned charges with the same rule.
//   - G1 lock held by the server (gateway.go): a gateway replay
//     (History.GatewayReplays) with no crash-class fault fired before it
//     means the server sent one charge twice on its own and only the
//     gateway's idempotency saved the order: INFORMATIONAL. Its note says
//     how long the gateway kept keys when that was less than the promise.
//   - T1 harness untouched (untouched.go): any History.Touches (a toxic,
//     a link or a gateway rule idemcheck did not set, or one it set gone,
//     found at an inject or a heal; a request for a control API on the
//     provider's address) is FAILED, naming what, when and by which link
//     or replica; exercised when History.Proofs is above zero. A FAILED
//     T1 certifies L0 whatever else holds: the rest of the run's verdicts
//     rest on an oracle the server reached, and cannot be trusted.
//
// # Not exercised, UNKNOWN, incomplete
//
// A check whose question the history never asked (one tenant for M5, no
// mutated body for P1) ends PASS with Exercised false; its note says "not
// exercised" and it earns no level. UNKNOWN is reserved for a question the
// history raised but did not answer, and is never success. An interrupted
// history (History.Complete false) or one without ops is at least UNKNOWN
// overall and certifies L0; proven violations in it still FAIL.
//
// # Levels
//
// Level is the highest rung of this ladder such that, on it and every rung
// below, each listed check is exercised and PASS, NON-STRICT or
// INFORMATIONAL, and the history holds the traffic the rung needs:
//
//	L1 retry-safe        M1 M2 M4 M5 A1  a sequential retry (sent after a definitive answer)
//	L2 concurrency-safe  M1              a concurrent duplicate
//	L3 payload-safe      P1 P2
//	L4 crash-safe        M3 M6           crashes seen to fire at every crash point
//	L5 expiry-safe       E1 E2
//
// M5 and A1 sit on L1 because tenant isolation and accounting are required
// at every level. L4 needs a crash-class fault (class history.Crash, such
// as kill, kill_in_hang, restart, gateway charge_then_fail,
// charge_then_drop, charge_then_hang) with Fault.Fired set, an M6
// judgement on a key such a fault struck (Coverage.CrashJudged), and
// every one of CrashPoints reached (all faults marked with it fired); a point never reached leaves L4 UNKNOWN and the
// LevelNote names it. Faults that were armed but never fired count for
// nothing. A history recorded against a gateway without idempotency
// (History.Gateway.NoIdempotency, Coverage.NoGatewayIdempotency) leaves L4
// not judged, whatever it holds, and the LevelNote says why
// (NoProviderIdempotency); a family not played for that reason is
// NotJudged: nothing failed, nothing certified. Protocol checks (R1..R5) grade but never block a level. No
// single family reaches L5; Merge the families of one target to certify it.
package checker
