-- Verdict history for continuous monitoring (see crates/queue/src/history.rs): a row only when a
-- site's verdict changes, not per check, so `sites` stays one row per URL and this table grows
-- with the changes alone; pruned by age, keeping each site's latest row.

CREATE TABLE IF NOT EXISTS verdict_changes (
    id          BIGINT       NOT NULL AUTO_INCREMENT,
    site_id     BIGINT       NOT NULL,
    -- The check that found the new verdict (its `sites.checked_at`), Unix milliseconds.
    changed_at  BIGINT       NOT NULL,
    verdict     VARCHAR(16)  NOT NULL,
    http_status INT          NULL,
    error_kind  VARCHAR(32)  NULL,
    PRIMARY KEY (id),
    -- A site's history, and its latest verdict (the write-back compares with it).
    KEY verdict_changes_site (site_id, id),
    -- Pruning by age.
    KEY verdict_changes_age (changed_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
