package mysqlstore

import (
	"database/sql"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// columns are a record's columns, in row's order.
const columns = `tenant, key_hash, idem_key, fingerprint, state, request_id, amount, currency, order_id,
	description, lease_owner, lease_until, attempts, response_status, response_body, charge_id,
	created_at, expires_at, forget_at, compacted`

// row receives a record's columns; the nullable ones are those a claim or
// a compaction leaves NULL.
type row struct {
	tenant, state, requestID                      string
	keyHash, fingerprint, body                    []byte
	key, currency, orderID, desc, owner, chargeID sql.NullString
	amount                                        sql.NullInt64
	status                                        sql.NullInt32
	attempts                                      int
	leaseUntil, createdAt, expiresAt, forgetAt    time.Time
	compacted                                     bool
}

func (r *row) dest() []any {
	return []any{&r.tenant, &r.keyHash, &r.key, &r.fingerprint, &r.state, &r.requestID, &r.amount, &r.currency,
		&r.orderID, &r.desc, &r.owner, &r.leaseUntil, &r.attempts, &r.status, &r.body, &r.chargeID,
		&r.createdAt, &r.expiresAt, &r.forgetAt, &r.compacted}
}

func (r *row) record() *reference.Record {
	return &reference.Record{
		Tenant: r.tenant, KeyHash: r.keyHash, Key: r.key.String, Fingerprint: r.fingerprint, State: r.state,
		RequestID: r.requestID, LeaseOwner: r.owner.String, LeaseUntil: r.leaseUntil, Attempts: r.attempts,
		Params: reference.ChargeParams{Amount: r.amount.Int64, Currency: r.currency.String, OrderID: r.orderID.String,
			Description: r.desc.String},
		Result:    reference.Result{Status: int(r.status.Int32), Body: r.body, ChargeID: r.chargeID.String},
		CreatedAt: r.createdAt, ExpiresAt: r.expiresAt, ForgetAt: r.forgetAt, Compacted: r.compacted,
	}
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scan(s scanner) (*reference.Record, error) {
	var r row
	if err := s.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.record(), nil
}

// pk is a row's primary key.
type pk struct {
	tenant  string
	keyHash []byte
}

// matchKeys is a WHERE clause matching the rows of keys, and its
// arguments: an OR of primary-key equalities, which the range optimizer
// reads as point lookups. keys is not empty.
func matchKeys(keys []pk) (string, []any) {
	where := make([]byte, 0, len(keys)*40)
	args := make([]any, 0, 2*len(keys))
	for i, k := range keys {
		if i > 0 {
			where = append(where, " OR "...)
		}
		where = append(where, "(tenant = ? AND key_hash = ?)"...)
		args = append(args, k.tenant, k.keyHash)
	}
	return string(where), args
}
