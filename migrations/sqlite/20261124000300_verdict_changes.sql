-- Verdict history for continuous monitoring: the same table as migrations/mysql, in SQLite's
-- dialect.

CREATE TABLE IF NOT EXISTS verdict_changes (
    id          INTEGER PRIMARY KEY,
    site_id     INTEGER NOT NULL,
    changed_at  INTEGER NOT NULL,
    verdict     TEXT    NOT NULL,
    http_status INTEGER,
    error_kind  TEXT
);
CREATE INDEX IF NOT EXISTS verdict_changes_site ON verdict_changes (site_id, id);
CREATE INDEX IF NOT EXISTS verdict_changes_age ON verdict_changes (changed_at);
