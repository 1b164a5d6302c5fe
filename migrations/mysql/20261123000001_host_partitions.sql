-- Fleet-wide politeness: hosts are grouped into 1024 fixed partitions (the first two bytes of
-- SHA-256(host), mod 1024; see crates/queue/src/parts.rs), and a partition is leased to one
-- worker at a time, like a site: owner, token, expiry. A worker claims only sites of the
-- partitions it holds, so its per-host limits are the fleet's.

CREATE TABLE IF NOT EXISTS parts (
    id         SMALLINT     NOT NULL,
    owner      VARCHAR(255) NULL,
    token      BIGINT       NULL,
    expires_at BIGINT       NOT NULL DEFAULT 0,
    -- 1 while the holder hands it over: no more claims from it, given back once nothing of it
    -- is in flight, so two workers never ask one host at once.
    draining   TINYINT      NOT NULL DEFAULT 0,
    PRIMARY KEY (id),
    KEY parts_token (token)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- 0..1023 (a 32 x 32 cross join: MySQL's recursion depth defaults to 1000).
INSERT IGNORE INTO parts (id)
WITH RECURSIVE d (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM d WHERE i < 31)
SELECT a.i * 32 + b.i FROM d AS a CROSS JOIN d AS b;

-- What the fleet learned about a host, so that whoever holds it next respects it. A row exists
-- only for hosts that throttled (429/503).
CREATE TABLE IF NOT EXISTS hosts (
    host              VARCHAR(255) NOT NULL,
    part              SMALLINT     NOT NULL,
    -- Not asked before this (the server's Retry-After, capped at 30 days).
    backoff_until     BIGINT       NOT NULL DEFAULT 0,
    last_throttled_at BIGINT       NULL,
    last_status       INT          NULL,
    retry_after_ms    BIGINT       NULL,
    throttled         BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (host),
    KEY hosts_part (part, backoff_until)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
