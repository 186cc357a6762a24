-- The MySQL (MariaDB 10.6+, InnoDB) form of the reference's one table: one
-- row per (tenant, idempotency key), for the key's whole life, with the
-- same states and columns as the PostgreSQL migration
-- (reference/migrations/0001_idempotency_keys.sql):
--   in_progress     claimed; request_id recorded; the owner holds the lease
--   needs_recovery  the outcome is unknown; whoever takes the lease next
--                   re-sends request_id to the gateway
--   succeeded       the gateway charged: response replayed until forget_at
--   failed          the gateway declined or rejected: replayed likewise
-- Past expires_at a finished row is compacted into a tombstone; past
-- forget_at it is deleted.
--
-- Every key, id and text is binary (VARBINARY, BLOB): compared byte for
-- byte, never by a collation that would take 'USD' for 'usd' or ignore a
-- trailing space, and read back exactly as written. Times are DATETIME(6),
-- always UTC, microseconds as PostgreSQL keeps them. No waiter count: the
-- store does not notify, the hub polls.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    tenant          VARBINARY(64)   NOT NULL,
    key_hash        VARBINARY(64)   NOT NULL,
    idem_key        VARBINARY(255),
    fingerprint     VARBINARY(64)   NOT NULL,
    state           VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    request_id      VARBINARY(255)  NOT NULL,
    amount          BIGINT,
    currency        VARBINARY(16),
    order_id        VARBINARY(255),
    description     BLOB,
    lease_owner     VARBINARY(255),
    lease_until     DATETIME(6)     NOT NULL,
    attempts        INT             NOT NULL DEFAULT 1,
    response_status SMALLINT,
    response_body   MEDIUMBLOB,
    charge_id       VARBINARY(255),
    created_at      DATETIME(6)     NOT NULL,
    finished_at     DATETIME(6),
    expires_at      DATETIME(6)     NOT NULL,
    forget_at       DATETIME(6)     NOT NULL,
    compacted       BOOLEAN         NOT NULL DEFAULT FALSE,
    PRIMARY KEY (tenant, key_hash),
    -- the sweeper's recovery scan (unresolved rows by lease expiry)
    KEY idempotency_keys_lease (state, lease_until),
    -- the sweeper's expiry scan (finished rows by their next transition)
    KEY idempotency_keys_expiry (state, compacted, expires_at),
    CONSTRAINT idempotency_keys_state
        CHECK (state IN ('in_progress', 'needs_recovery', 'succeeded', 'failed')),
    CONSTRAINT idempotency_keys_result
        CHECK ((state IN ('succeeded', 'failed')) = (response_status IS NOT NULL))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin
