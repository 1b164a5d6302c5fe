-- Link rot over time; see migrations/mysql/20261205000001_link_rot.sql.
ALTER TABLE sites ADD COLUMN IF NOT EXISTS previous_verdict VARCHAR(16) NULL;
ALTER TABLE sites ADD COLUMN IF NOT EXISTS moved_to TEXT NULL;
ALTER TABLE verdict_changes ADD COLUMN IF NOT EXISTS previous_verdict VARCHAR(16) NULL;
UPDATE sites SET verdict_since = COALESCE(checked_at, 0)
WHERE verdict IS NOT NULL AND verdict_since IS NULL;
DROP INDEX IF EXISTS sites_verdict;
CREATE INDEX IF NOT EXISTS sites_verdict ON sites (verdict, verdict_since, id) WHERE verdict IS NOT NULL;

CREATE TABLE IF NOT EXISTS notifier (
    id         INTEGER NOT NULL PRIMARY KEY,
    since_ms   BIGINT  NOT NULL,
    after_id   BIGINT  NOT NULL,
    started_at BIGINT  NOT NULL
);

CREATE TABLE IF NOT EXISTS notify_digests (
    seq          BIGSERIAL    PRIMARY KEY,
    digest_id    VARCHAR(64)  NOT NULL,
    changes      INTEGER      NOT NULL,
    body         TEXT         NOT NULL,
    created_at   BIGINT       NOT NULL,
    attempts     INTEGER      NOT NULL DEFAULT 0,
    delivered_at BIGINT       NULL
);
CREATE INDEX IF NOT EXISTS notify_digests_pending ON notify_digests (seq) WHERE delivered_at IS NULL;
CREATE UNIQUE INDEX IF NOT EXISTS notify_digests_id ON notify_digests (digest_id);
