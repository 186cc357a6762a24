// Package history is the record of one run: every client operation, every
// injected fault and every ledger charge, on one monotonic clock, in one
// versioned JSON document. The recorder writes it, the checker judges it,
// reports draw it, and `idemcheck replay` re-checks it.
//
// # Document
//
//   - History: run metadata (target, family, seed, replicas), the target's
//     declared Policy, and the Ops, Faults and Charges; End and Complete
//     say when and whether recording finished.
//   - Op: one request (tenant, key as meant and as sent, body, order) with
//     its Invoke and Complete offsets, Outcome and the judged part of the
//     response.
//   - Fault: one injected fault from Inject to Heal (Healed false if it was
//     still active when recording stopped); Fired is when it first struck
//     (zero: armed, never seen to fire; Recorder.Fire stamps it).
//     Params[ParamCrashPoint] ("crash_point") names the crash-window crash
//     point the fault belongs to (crashwave.Table): set it on every
//     fault a crash point injects (the hang and the kill of kill-in-hang,
//     the pause of pause-in-hang, the kill of kill-after-response).
//     Class is what the fault can do to a payment (Crash, Slows, Business,
//     Disturbs), declared by its fault kind; ClassOf reads it, and for a
//     fault recorded without one, the class its name had (legacy.go, the
//     only place that classes faults by name).
//   - Charge: one gateway ledger entry, the ground truth for money.
//   - Optional fields, all absent from older version 1 documents and read
//     as zero: Op.Method, Op.Path and Op.ContentType (the request as sent;
//     absent, the body is JSON to one path), Fault.Fired, Fault.Class,
//     Fault.Scope, History.OtherOrders and History.ClockOffset
//     (deprecated: nothing writes them; a document that has them loads
//     and is judged as before), History.Unstruck (the crash-wave
//     payments whose strike did not happen, and why), History.Gateway
//     (how long the gateway kept idempotency keys, or that it kept
//     none), Policy.Production
//     (the production promise and provider key lifetime a target
//     declared).
//
// Every time is a time.Duration offset from the recording's base time and
// is encoded in JSON as integer nanoseconds (1s is 1000000000).
//
// # Outcomes
//
// Classify maps a status to OK (2xx), Fail (a definitive 4xx) or Info
// (indeterminate: 5xx, the retryable 408, 409, 423, 425 and 429, no
// response); ClassifyAnswer also makes any failure carrying Retry-After
// indeterminate. The client never interprets a response beyond that. The
// checker re-reads Status and RetryAfter, so a history recorded before a
// status became retryable is judged by today's rule.
//
// # Reading and writing
//
// Write and WriteFile encode indented JSON; Read and ReadFile decode it and
// refuse a document of another Version or with a field this build does not
// know, rather than guess at its meaning.
//
// # Recording
//
// Recorder stamps ops, faults and charges against one base time from many
// goroutines; Snapshot returns the history so far.
package history
