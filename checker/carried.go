package checker

import (
	"time"

	"github.com/idemcheck/idemcheck/history"
)

// A promise is how long a server keeps a key at least. One that keeps it
// longer (a lazy sweep, a TTL longer than the one declared) still
// answers from the key's previous epoch past the promise, then forgets
// the key and answers anew. The checker's epoch opens at the first
// request past the promise, the server's at the first request it took
// after forgetting the key, and that request was sent before any request
// answered anew completed. So a request of a later epoch whose answer the
// previous epoch explains (the previous epoch's answer to its body, or a
// 422 refusing another body) and that was sent before the epoch's first
// answer anew completed is the server's previous epoch: it is carried,
// and the epoch's checks do not judge it as the epoch's own. A reference
// server keeping keys 4s under a declared ttl of 2s was judged M4 FAILED
// (the old charge replayed, then a new one) and M3 FAILED (a 422 to a new
// body, then that body charged) on exactly that. Sent after an answer
// anew, an old answer is judged as before: a server that answered anew
// and then went back to the old answer is inconsistent.

// carry marks the carried requests of e, a lineage's epoch after prev
// (whose reference body and equal requests are known), before e's own
// reference body is picked: a carried request binds nothing in e.
func carry(prev, e *epoch) {
	olds := distinctAnswers(definitives(prev.equalOps()))
	if len(olds) != 1 || prev.ref == nil {
		return
	}
	old := sameAnswer(olds[0])
	explained := func(o *opInfo) bool {
		if !o.definitive() {
			return false
		}
		if o.canon == prev.ref.canon {
			return sameAnswer(o) == old
		}
		return o.Outcome == history.Fail && o.Status == 422
	}
	// The earliest completion of an answer anew: one the previous epoch
	// does not explain, other than a 400 to another body (refused as
	// invalid before the key is read: no sign of a forgotten key).
	opened := time.Duration(-1)
	for _, o := range e.ops {
		anew := o.definitive() && !explained(o) && (o.canon == prev.ref.canon || o.Status != 400)
		if anew && (opened < 0 || o.Complete < opened) {
			opened = o.Complete
		}
	}
	for _, o := range e.ops {
		o.carried = opened >= 0 && explained(o) && o.Invoke < opened
	}
}
