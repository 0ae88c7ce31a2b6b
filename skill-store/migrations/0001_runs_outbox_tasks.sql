-- Scheduled runs: one row per (job, scheduled instant), whoever ran or skipped it.
CREATE TABLE skills_runs (
    id          BIGSERIAL PRIMARY KEY,
    job         TEXT NOT NULL,
    scheduled   TIMESTAMPTZ NOT NULL,
    replica     TEXT NOT NULL,
    generation  BIGINT NOT NULL DEFAULT 0,
    started     TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    finished    TIMESTAMPTZ,
    lease_until TIMESTAMPTZ,
    outcome     TEXT NOT NULL,
    message     TEXT,
    UNIQUE (job, scheduled)
);
CREATE INDEX skills_runs_recent ON skills_runs (id DESC);
CREATE INDEX skills_runs_running ON skills_runs (job) WHERE outcome = 'running';

-- The webhook outbox: one row per delivery, one idempotency key each.
CREATE TABLE skills_deliveries (
    id              BIGSERIAL PRIMARY KEY,
    run_id          BIGINT REFERENCES skills_runs (id) ON DELETE SET NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    url             TEXT NOT NULL,
    body            JSONB NOT NULL,
    state           TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt    TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    lease_until     TIMESTAMPTZ,
    created         TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    finished        TIMESTAMPTZ
);
CREATE INDEX skills_deliveries_due ON skills_deliveries (next_attempt) WHERE state = 'pending';

-- Every delivery attempt, with the HTTP status or the error.
CREATE TABLE skills_delivery_attempts (
    delivery_id BIGINT NOT NULL REFERENCES skills_deliveries (id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,
    replica     TEXT NOT NULL,
    at          TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    status      INTEGER,
    error       TEXT,
    PRIMARY KEY (delivery_id, attempt)
);

-- Forked tasks (`context: fork`), leased by the replica running them.
CREATE TABLE skills_tasks (
    id          BIGSERIAL PRIMARY KEY,
    skill       TEXT NOT NULL,
    replica     TEXT NOT NULL,
    status      TEXT NOT NULL,
    outcome     JSONB,
    reason      TEXT,
    created     TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    finished    TIMESTAMPTZ,
    lease_until TIMESTAMPTZ NOT NULL
);
