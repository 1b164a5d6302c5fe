-- Verdict history for continuous monitoring (see crates/queue/src/history.rs): the same table
-- as migrations/mysql, in PostgreSQL's dialect. A row only when a site's verdict changes, not
-- per check; pruned by age, keeping each site's latest row.

CREATE TABLE IF NOT EXISTS verdict_changes (
    id          BIGSERIAL    PRIMARY KEY,
    site_id     BIGINT       NOT NULL,
    -- The check that found the new verdict (its `sites.checked_at`), Unix milliseconds.
    changed_at  BIGINT       NOT NULL,
    verdict     VARCHAR(16)  NOT NULL,
    http_status INTEGER      NULL,
    error_kind  VARCHAR(32)  NULL
);
-- A site's history, and its latest verdict (the write-back compares with it).
CREATE INDEX IF NOT EXISTS verdict_changes_site ON verdict_changes (site_id, id);
-- Pruning by age.
CREATE INDEX IF NOT EXISTS verdict_changes_age ON verdict_changes (changed_at);
