-- Link rot over time (crates/queue/src/changes.rs, notify.rs; docs/reports.md):
-- - sites.previous_verdict: the verdict the current one replaced (NULL for a site's first),
--   written by the statement that writes the verdict, so a change is as durable as the
--   verdict; verdict_changes.previous_verdict the same for the verdicts replaced since.
-- - sites.moved_to: where a permanent redirect (301, 308) sends the link, not counting one that
--   only adds or removes a trailing slash, goes from http to https, or changes the host's case.
-- - sites_verdict becomes (verdict, verdict_since, id): reports page through a verdict in the
--   order its sites got it, and `--changed-since` and the notifier read a range of it. The
--   entry moves only when the verdict begins, as before, so the write-back costs no more.
--   Rows from before verdict_since (20261128000001) get the time of their last check.
ALTER TABLE sites ADD COLUMN previous_verdict VARCHAR(16) NULL, ADD COLUMN moved_to TEXT NULL;
ALTER TABLE verdict_changes ADD COLUMN previous_verdict VARCHAR(16) NULL;
UPDATE sites SET verdict_since = COALESCE(checked_at, 0)
WHERE verdict IS NOT NULL AND verdict_since IS NULL;
ALTER TABLE sites DROP KEY sites_verdict, ADD KEY sites_verdict (verdict, verdict_since, id);

-- The notifier's place in the changes (crawler-reap --notify): the last change put in a
-- digest, by (verdict_since, site id). One row, id 1.
CREATE TABLE IF NOT EXISTS notifier (
    id         INT     NOT NULL,
    since_ms   BIGINT  NOT NULL,
    after_id   BIGINT  NOT NULL,
    started_at BIGINT  NOT NULL,
    PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- Digests made and not yet acknowledged, and those acknowledged (pruned with the history): a
-- digest's body is stored before it is sent, so every resend is the same digest.
CREATE TABLE IF NOT EXISTS notify_digests (
    seq          BIGINT       NOT NULL AUTO_INCREMENT,
    -- The digest's id in its body and its Idempotency-Key header.
    digest_id    VARCHAR(64)  NOT NULL,
    changes      INT          NOT NULL,
    body         MEDIUMTEXT   NOT NULL,
    created_at   BIGINT       NOT NULL,
    attempts     INT          NOT NULL DEFAULT 0,
    delivered_at BIGINT       NULL,
    PRIMARY KEY (seq),
    UNIQUE KEY notify_digests_id (digest_id),
    KEY notify_digests_pending (delivered_at, seq)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
