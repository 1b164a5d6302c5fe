-- The queue. Times are Unix milliseconds taken from the database's clock (see crates/queue/src/sql.rs).
-- The same schema as migrations/mysql, in SQLite's dialect.

CREATE TABLE IF NOT EXISTS sites (
    id                   INTEGER PRIMARY KEY,
    url                  TEXT    NOT NULL,
    url_key              BLOB    NOT NULL,
    host                 TEXT    NOT NULL,
    state                INTEGER NOT NULL DEFAULT 0,
    owner                TEXT,
    claim_token          INTEGER,
    expires_at           INTEGER,
    next_check_at        INTEGER NOT NULL,
    tries                INTEGER NOT NULL DEFAULT 0,
    attempts             INTEGER NOT NULL DEFAULT 0,
    verdict              TEXT,
    http_status          INTEGER,
    error_kind           TEXT,
    final_url            TEXT,
    redirects            INTEGER,
    latency_ms           INTEGER,
    checked_at           INTEGER,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    last_alive_at        INTEGER,
    created_at           INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS sites_url_key ON sites (url_key);
CREATE INDEX IF NOT EXISTS sites_due ON sites (state, next_check_at, id);
CREATE INDEX IF NOT EXISTS sites_token ON sites (claim_token);
CREATE INDEX IF NOT EXISTS sites_verdict ON sites (verdict, id);

CREATE TABLE IF NOT EXISTS workers (
    id           TEXT    PRIMARY KEY,
    host         TEXT    NOT NULL,
    pid          INTEGER NOT NULL,
    started_at   INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    checked      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS workers_heartbeat ON workers (heartbeat_at);

CREATE TABLE IF NOT EXISTS leases (
    name       TEXT    PRIMARY KEY,
    owner      TEXT,
    expires_at INTEGER NOT NULL DEFAULT 0,
    runs       INTEGER NOT NULL DEFAULT 0
);
