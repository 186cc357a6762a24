-- One row per (tenant, idempotency key), for the key's whole life:
--   in_progress     claimed; request_id recorded; the owner holds the lease
--   needs_recovery  the outcome is unknown (indeterminate answer, or the
--                   owner's lease ran out); whoever takes the lease next
--                   re-sends request_id to the gateway
--   succeeded       the gateway charged: response replayed until forget_at
--   failed          the gateway declined or rejected: replayed likewise
-- After expires_at (created_at + TTL) a finished row is compacted in place
-- into a tombstone (key text and request fields dropped; fingerprint,
-- response and charge id kept); after forget_at it is deleted and the key
-- may be used again.
--
-- waiters counts duplicates that registered to wait on an unresolved key:
-- finishing or releasing a key NOTIFYs only when someone waits, so the
-- common path (no duplicate in flight) pays for no notification.
CREATE TABLE idempotency_keys (
    tenant          text        NOT NULL,
    key_hash        bytea       NOT NULL,
    idem_key        text,
    fingerprint     bytea       NOT NULL,
    state           text        NOT NULL,
    request_id      text        NOT NULL,
    amount          bigint,
    currency        text,
    order_id        text,
    description     text,
    lease_owner     text,
    lease_until     timestamptz NOT NULL,
    attempts        integer     NOT NULL DEFAULT 1,
    waiters         integer     NOT NULL DEFAULT 0,
    response_status smallint,
    response_body   bytea,
    charge_id       text,
    created_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    expires_at      timestamptz NOT NULL,
    forget_at       timestamptz NOT NULL,
    compacted       boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (tenant, key_hash),
    CONSTRAINT idempotency_keys_state
        CHECK (state IN ('in_progress', 'needs_recovery', 'succeeded', 'failed')),
    CONSTRAINT idempotency_keys_result
        CHECK ((state IN ('succeeded', 'failed')) = (response_status IS NOT NULL))
);

-- The sweeper's recovery scan: only unresolved rows, a handful at any time.
CREATE INDEX idempotency_keys_unresolved ON idempotency_keys (lease_until)
    WHERE state IN ('in_progress', 'needs_recovery');

-- The sweeper's expiry scan: expires_at is the next transition of a finished
-- row (compaction, then deletion once it holds forget_at).
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)
    WHERE state IN ('succeeded', 'failed');
