-- Soft 404s; see migrations/mysql/20261124000200_soft404.sql.
ALTER TABLE sites ADD COLUMN detail TEXT;

CREATE TABLE IF NOT EXISTS soft404_probes (
    host        TEXT    NOT NULL,
    pattern     TEXT    NOT NULL,
    probe_path  TEXT    NOT NULL,
    status      INTEGER,
    final_url   TEXT,
    redirects   INTEGER NOT NULL DEFAULT 0,
    fingerprint BLOB,
    spread      INTEGER NOT NULL DEFAULT 0,
    noindex     INTEGER NOT NULL DEFAULT 0,
    probed_at   INTEGER NOT NULL,
    PRIMARY KEY (host, pattern)
);
