-- The queue. Times are Unix milliseconds taken from the database's clock (see crates/queue/src/sql.rs).
-- Every statement is idempotent so that a migration interrupted half-way can simply run again
-- (MySQL commits DDL implicitly); indexes are declared inline because MySQL 8 has no
-- CREATE INDEX IF NOT EXISTS.

CREATE TABLE IF NOT EXISTS sites (
    id                   BIGINT       NOT NULL AUTO_INCREMENT,
    url                  TEXT         NOT NULL,
    -- First 16 bytes of SHA-256(url): a URL may be 8 KiB, too long for a unique index.
    url_key              BINARY(16)   NOT NULL,
    host                 VARCHAR(255) NOT NULL,
    -- 0 pending, 1 claimed, 2 done.
    state                TINYINT      NOT NULL DEFAULT 0,
    owner                VARCHAR(255) NULL,
    claim_token          BIGINT       NULL,
    expires_at           BIGINT       NULL,
    next_check_at        BIGINT       NOT NULL,
    -- Checks in this round that ended in a transient failure (for the retry limit); a recheck
    -- starts a new round.
    tries                INT          NOT NULL DEFAULT 0,
    -- Checks the current verdict took.
    attempts             INT          NOT NULL DEFAULT 0,
    verdict              VARCHAR(16)  NULL,
    http_status          INT          NULL,
    error_kind           VARCHAR(32)  NULL,
    final_url            TEXT         NULL,
    redirects            INT          NULL,
    latency_ms           INT          NULL,
    checked_at           BIGINT       NULL,
    consecutive_failures INT          NOT NULL DEFAULT 0,
    last_alive_at        BIGINT       NULL,
    created_at           BIGINT       NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY sites_url_key (url_key),
    -- Serves the claim: WHERE state = 0 AND next_check_at <= now ORDER BY next_check_at, id.
    -- Done rows keep next_check_at = checked_at, so the recheck scan uses it too, and the
    -- reaper scans its state = 1 part (claimed rows are few: what the fleet has in flight).
    -- No other index starts with state, so the optimizer is never tempted into a filesort.
    KEY sites_due (state, next_check_at, id),
    KEY sites_token (claim_token),
    -- Serves the report: WHERE verdict = ? AND id > ? ORDER BY id.
    KEY sites_verdict (verdict, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS workers (
    id           VARCHAR(255) NOT NULL,
    host         VARCHAR(255) NOT NULL,
    pid          BIGINT       NOT NULL,
    started_at   BIGINT       NOT NULL,
    heartbeat_at BIGINT       NOT NULL,
    checked      BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (id),
    KEY workers_heartbeat (heartbeat_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- One row per periodic job: whoever holds the row runs the job (see singleton.rs).
CREATE TABLE IF NOT EXISTS leases (
    name       VARCHAR(64)  NOT NULL,
    owner      VARCHAR(255) NULL,
    expires_at BIGINT       NOT NULL DEFAULT 0,
    runs       BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
