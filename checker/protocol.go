package checker

import (
	"fmt"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/history"
)

// r1 judges R1: a request without a valid key (none sent, empty, longer
// than 255, not visible ASCII, a malformed quoted form) gets exactly 400.
// Another 4xx, or a 2xx, is NON-STRICT: safe as far as the protocol goes,
// and any money it moved twice is M1's. A valid key refused with 400 (say,
// the quoted form "k" not understood) is NON-STRICT too.
func (ix *index) r1() CheckResult {
	c := newCheck("R1")
	n := 0
	for _, o := range ix.keyless {
		if !o.definitive() {
			continue
		}
		n++
		if o.Outcome == history.OK || o.Status != 400 {
			c.flag(NonStrict, onOp(o, "%s (%s) got %s, not 400", opName(o), keyProblem(o), answer(o)))
		}
	}
	for _, o := range ix.ops {
		if o.keyed && o.equal && o.Outcome == history.Fail && o.Status == 400 {
			c.flag(NonStrict, onOp(o, "%s carried the valid key %q (header %q) and got 400", opName(o), o.key, o.KeyHeader))
		}
	}
	c.Exercised = c.Exercised || n > 0
	c.Note = fmt.Sprintf("judged %d answers to requests without a valid key", n)
	return c
}

// keyProblem says what is wrong with o's key header.
func keyProblem(o *opInfo) string {
	h := o.KeyHeader
	if h == "" {
		h = o.Key
	}
	switch {
	case o.NoKey:
		return "no Idempotency-Key header"
	case h == "":
		return "an empty key"
	case len(h) > maxKeyLen:
		return fmt.Sprintf("a %d-character key", len(h))
	default:
		return fmt.Sprintf("key header %q", h)
	}
}

// r2 judges R2: a different body under a used key is refused with exactly
// 422. Another failure status is NON-STRICT (a 2xx, or a replay of the
// stored failure, is P1's FAILED), but for a refusal before processing
// (401, 403: unprocessed), which says nothing about the body.
func (ix *index) r2() CheckResult {
	c := newCheck("R2")
	n := 0
	for _, e := range ix.eps {
		first := firstAnswer(e)
		for _, o := range e.ops {
			if o.equal || o.carried || !o.definitive() {
				continue
			}
			n++
			if o.Outcome == history.Fail && o.Status != 422 && !unprocessed(o.Status) && !replaysFailure(o, first) {
				c.flag(NonStrict, onOp(o, "%s carried a different body than op %d and was refused with %d, not 422", opName(o), e.ref.ID, o.Status))
			}
		}
	}
	c.Exercised = c.Exercised || n > 0
	c.Note = fmt.Sprintf("judged %d answers to different bodies", n)
	return c
}

// waitTolerance is the share of the target's max_wait a duplicate must
// have been held before a 409 counts as "waited". The client measures from
// send to receipt and the server from its own receipt, or from when it
// found the lock taken; network latency, scheduling and a server that
// polls its lock all blur the edge. Half separates a waited 409 (seconds)
// from an immediate one (milliseconds) with room for all of that.
const waitTolerance = 0.5

// r3 judges R3, in-flight duplicates. A duplicate is a request sent while
// another request of its key epoch was in flight (the owner). Each of these
// is NON-STRICT: a 409 without Retry-After (any 409, duplicate or not); an
// immediate 409, held less than max_wait × waitTolerance while the owner was
// still in flight when it came back; a 5xx to a duplicate whose own path
// was undisturbed (see ownPathDisturbed), whatever faults were active on
// other links: the owner being slow is exactly when a duplicate must wait.
// A 5xx while this request's own path was disrupted is excused. A 409
// after the owner finished (a crashed owner's lock) or after waiting is
// fine. A replica's skewed clock excuses nothing here: a server that
// stamps its leases on one clock (its database's) waits for the owner
// whatever its replicas' clocks say, as the reference does.
func (ix *index) r3() CheckResult {
	c := newCheck("R3")
	dups := 0
	minWait := time.Duration(float64(ix.pol.MaxWait) * waitTolerance)
	for _, e := range ix.eps {
		var ownerDone time.Duration = -1 // latest completion among earlier requests
		for _, o := range e.ops {
			dup := ownerDone > o.Invoke
			if dup {
				dups++
			}
			if why := ix.inFlightAnswer(o, dup, ownerDone, minWait); why != "" {
				c.flag(NonStrict, onOp(o, "%s %s", opName(o), why))
			}
			ownerDone = max(ownerDone, o.Complete)
		}
	}
	c.Exercised = c.Exercised || dups > 0
	c.Note = fmt.Sprintf("judged %d duplicates sent while their key was in flight; a 409 counts as waited after %v (max_wait %v × %.1f)",
		dups, minWait, ix.pol.MaxWait, waitTolerance)
	return c
}

// inFlightAnswer returns what is wrong with o's answer as a duplicate, or "".
func (ix *index) inFlightAnswer(o *opInfo, dup bool, ownerDone, minWait time.Duration) string {
	waited := o.Complete - o.Invoke
	switch {
	case o.Status == 409 && o.RetryAfter == "":
		return "got 409 without Retry-After"
	case o.Status == 409 && dup && waited < minWait && ownerDone > o.Complete:
		return fmt.Sprintf("got 409 after %v while the owner was still in flight; the target waits up to %v", waited, ix.pol.MaxWait)
	case o.Status >= 500 && dup && !ix.ownPathDisturbed(o, waited >= minWait):
		return fmt.Sprintf("got %d after %v as a duplicate while the owner was in flight, with no fault on its own path", o.Status, waited)
	}
	return ""
}

// ownPathDisturbed reports whether a disruptive fault on o's own path was
// active while o was in flight, or had healed less than a recovery window
// before o was sent: a link or process of o's replica (client->replicaN,
// replicaN, replicaN->gateway, replicaN->postgres), or the gateway itself
// (for o's order, or for every order). A fault on another replica's links
// does not excuse o's answer, and a fault that only slows traffic
// (history.Slows) excuses only a 5xx that came after waiting (slow):
// slowness makes a server time out, never fail at once.
func (ix *index) ownPathDisturbed(o *opInfo, slow bool) bool {
	for _, f := range ix.faults {
		if f.Inject > o.Complete || (f.Healed && ix.recovered(f.Heal, o.Invoke) < o.Invoke) {
			continue
		}
		if f.ClassOf() == history.Slows && !slow {
			continue
		}
		if onPath(f, o) {
			return true
		}
	}
	return false
}

// onPath reports whether fault f sits on o's path.
func onPath(f history.Fault, o *opInfo) bool {
	replica := fmt.Sprintf("replica%d", o.Replica)
	switch {
	case f.Target == "gateway":
		return f.Order == "" || f.Order == o.Order
	case f.Target == replica, f.Target == "client->"+replica:
		return true
	case strings.HasPrefix(f.Target, replica+"->"):
		return true
	case !strings.Contains(f.Target, "replica"):
		return true // a shared service (the database, the whole network): everyone's path
	}
	return false
}

// r4 judges R4, the replay marker: when several 2xx in one key epoch name
// the same charge, at most one of them (the original) may lack
// Idempotent-Replayed: true. Each key epoch with unmarked replays is one
// INFORMATIONAL violation listing them.
func (ix *index) r4() CheckResult {
	c := newCheck("R4")
	replays := 0
	for _, e := range ix.eps {
		for _, group := range byCharge(e.equalOps()) {
			replays += len(group) - 1
			if unmarked := unmarkedReplays(group); len(unmarked) > 0 {
				v := onKey(e, group[0].Order, "%d replays of %s came without Idempotent-Replayed: true", len(unmarked), group[0].ChargeID)
				v.Ops = opIDs(unmarked...)
				v.Charges = []string{group[0].ChargeID}
				c.flag(Informational, v)
			}
		}
	}
	c.Exercised = c.Exercised || replays > 0
	c.Note = fmt.Sprintf("judged %d replayed successes", replays)
	return c
}

// byCharge groups the 2xx answers among ops by charge id, in first-seen order.
func byCharge(ops []*opInfo) [][]*opInfo {
	var ids []string
	groups := map[string][]*opInfo{}
	for _, o := range ops {
		if o.Outcome != history.OK || o.ChargeID == "" {
			continue
		}
		if _, seen := groups[o.ChargeID]; !seen {
			ids = append(ids, o.ChargeID)
		}
		groups[o.ChargeID] = append(groups[o.ChargeID], o)
	}
	out := make([][]*opInfo, len(ids))
	for i, id := range ids {
		out[i] = groups[id]
	}
	return out
}

// unmarkedReplays returns the unmarked answers after the first unmarked one.
func unmarkedReplays(group []*opInfo) []*opInfo {
	var unmarked []*opInfo
	for _, o := range group {
		if !o.Replayed {
			unmarked = append(unmarked, o)
		}
	}
	if len(unmarked) < 2 {
		return nil
	}
	return unmarked[1:]
}
