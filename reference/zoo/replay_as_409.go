package zoo

import (
	"net/http"

	"github.com/idemcheck/idemcheck/reference"
)

// replayAs409 is the check-then-act flow (naive.go) with a middleware's
// idea of a replay: a request whose key is already stored gets the stored
// body under status 409 Conflict, and no Retry-After; a request whose key
// is not stored yet is handled as if it were the first. The key is
// written only once the answer is known, so nothing marks it in flight.
//
// Incident: yoyowallet/django-idempotency-key#61 (and #25): a duplicate
// that arrives while the first is still being processed is processed
// again, and a duplicate that arrives after it gets 409 with the first
// response in the body instead of that response
// (idempotency_key/middleware.py, process_view: retrieve_data, then the
// stored response with its status set to the conflict code;
// process_response stores the response afterwards). Concurrent duplicates
// both charge (M1, found by concurrent-duplicates); a client that retries
// after the first answer is told to retry, and is told so until the key
// expires: it never learns that it paid (M6).
var replayAs409 = Variant{
	Name: "replay-as-409",
	Bug:  "no in-flight record, and a completed key is answered 409 (the stored body, no Retry-After) instead of replayed",
	New: withoutSweeper(hooked(func(s *reference.Server) reference.Hooks {
		return reference.Hooks{Charge: checkThenAct{s: s, answer: conflictReplay}.charge}
	})),
}

// conflictReplay answers a finished key with its stored body as a 409.
func conflictReplay(rec *reference.Record) reference.Answer {
	return reference.Answer{Result: &reference.Result{Status: http.StatusConflict, Body: rec.Result.Body}}
}
