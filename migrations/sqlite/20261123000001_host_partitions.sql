-- Host partitions, leased like sites; see migrations/mysql/20261123000001_host_partitions.sql.

CREATE TABLE IF NOT EXISTS parts (
    id         INTEGER PRIMARY KEY,
    owner      TEXT,
    token      INTEGER,
    expires_at INTEGER NOT NULL DEFAULT 0,
    draining   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS parts_token ON parts (token);

INSERT OR IGNORE INTO parts (id)
WITH RECURSIVE d (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM d WHERE i < 31)
SELECT a.i * 32 + b.i FROM d AS a CROSS JOIN d AS b;

CREATE TABLE IF NOT EXISTS hosts (
    host              TEXT    PRIMARY KEY,
    part              INTEGER NOT NULL,
    backoff_until     INTEGER NOT NULL DEFAULT 0,
    last_throttled_at INTEGER,
    last_status       INTEGER,
    retry_after_ms    INTEGER,
    throttled         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS hosts_part ON hosts (part, backoff_until);
