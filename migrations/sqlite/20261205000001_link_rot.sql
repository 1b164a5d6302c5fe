-- Link rot over time; see migrations/mysql/20261205000001_link_rot.sql.
ALTER TABLE sites ADD COLUMN previous_verdict TEXT;
ALTER TABLE sites ADD COLUMN moved_to TEXT;
ALTER TABLE verdict_changes ADD COLUMN previous_verdict TEXT;
UPDATE sites SET verdict_since = COALESCE(checked_at, 0)
WHERE verdict IS NOT NULL AND verdict_since IS NULL;
DROP INDEX IF EXISTS sites_verdict;
CREATE INDEX IF NOT EXISTS sites_verdict ON sites (verdict, verdict_since, id) WHERE verdict IS NOT NULL;

CREATE TABLE IF NOT EXISTS notifier (
    id         INTEGER PRIMARY KEY,
    since_ms   INTEGER NOT NULL,
    after_id   INTEGER NOT NULL,
    started_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS notify_digests (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    digest_id    TEXT    NOT NULL,
    changes      INTEGER NOT NULL,
    body         TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    delivered_at INTEGER
);
CREATE INDEX IF NOT EXISTS notify_digests_pending ON notify_digests (seq) WHERE delivered_at IS NULL;
CREATE UNIQUE INDEX IF NOT EXISTS notify_digests_id ON notify_digests (digest_id);
