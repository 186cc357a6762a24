package redisstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// doc is a key's record as stored: one JSON value under the key, read and
// rewritten by the Lua scripts with cjson. Every number is a JSON string
// (Go's ",string"), so a decode and re-encode in Lua never reformats one
// (cjson writes numbers with 14 significant digits); times are Unix
// microseconds, the precision of a PostgreSQL timestamp, exact in Lua's
// doubles and in a sorted set's scores.
type doc struct {
	Tenant      string `json:"tenant"`
	KeyHash     []byte `json:"key_hash"`
	Key         string `json:"key,omitempty"`
	Fingerprint []byte `json:"fingerprint"`
	State       string `json:"state"`
	RequestID   string `json:"request_id"`
	Amount      int64  `json:"amount,string,omitempty"`
	Currency    string `json:"currency,omitempty"`
	OrderID     string `json:"order_id,omitempty"`
	Description string `json:"description,omitempty"`
	Owner       string `json:"owner,omitempty"`
	LeaseUntil  int64  `json:"lease_until,string"`
	Attempts    int    `json:"attempts,string"`
	Waiters     int    `json:"waiters,string"`
	Status      int    `json:"status,string,omitempty"`
	Body        []byte `json:"body,omitempty"`
	ChargeID    string `json:"charge_id,omitempty"`
	CreatedAt   int64  `json:"created_at,string"`
	FinishedAt  int64  `json:"finished_at,string,omitempty"`
	ExpiresAt   int64  `json:"expires_at,string"`
	ForgetAt    int64  `json:"forget_at,string"`
	Compacted   bool   `json:"compacted,omitempty"`
}

// micros is a stored time.
func micros(t time.Time) int64 { return t.UnixMicro() }

// at reads a stored time; zero stays the zero time.
func at(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us)
}

// claimDoc is the record a claim writes (reference.Store's contract).
func claimDoc(c reference.Claim) doc {
	return doc{
		Tenant: c.Tenant, KeyHash: c.KeyHash, Key: c.Key, Fingerprint: c.Fingerprint,
		State: reference.StateInProgress, RequestID: c.RequestID,
		Amount: c.Params.Amount, Currency: c.Params.Currency, OrderID: c.Params.OrderID, Description: c.Params.Description,
		Owner: c.Owner, LeaseUntil: micros(c.Now.Add(c.Lease)), Attempts: 1,
		CreatedAt: micros(c.Now), ExpiresAt: micros(c.Now.Add(c.TTL)), ForgetAt: micros(forgetAt(c)),
	}
}

// forgetAt is when a claim's key stops being bound: max(TTL, Forget) after
// the claim.
func forgetAt(c reference.Claim) time.Time { return c.Now.Add(max(c.Forget, c.TTL)) }

// encode is a record's stored value.
func encode(d doc) (string, error) {
	b, err := json.Marshal(d)
	return string(b), err
}

// decode reads a stored value into a reference.Record.
func decode(v string) (*reference.Record, error) {
	var d doc
	if err := json.Unmarshal([]byte(v), &d); err != nil {
		return nil, fmt.Errorf("redisstore: bad record: %w", err)
	}
	return &reference.Record{
		Tenant: d.Tenant, KeyHash: d.KeyHash, Key: d.Key, Fingerprint: d.Fingerprint, State: d.State,
		RequestID: d.RequestID, LeaseOwner: d.Owner, LeaseUntil: at(d.LeaseUntil), Attempts: d.Attempts,
		Params:    reference.ChargeParams{Amount: d.Amount, Currency: d.Currency, OrderID: d.OrderID, Description: d.Description},
		Result:    reference.Result{Status: d.Status, Body: d.Body, ChargeID: d.ChargeID},
		CreatedAt: at(d.CreatedAt), ExpiresAt: at(d.ExpiresAt), ForgetAt: at(d.ForgetAt), Compacted: d.Compacted,
	}, nil
}
