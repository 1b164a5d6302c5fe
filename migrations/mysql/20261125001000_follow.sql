-- Recursive checking (`crawler-seed --follow`, crates/queue/src/follow.rs) and referrers
-- (crates/queue/src/referrers.rs).
--
-- A site with a `crawl` is a page of that crawl: when it is alive HTML, the worker reads it and
-- adds its links; `depth` is its distance in links from a start page. The page's `crawl` is
-- cleared when its links are added (fenced by its claim), so its links are added once.
-- `found_count` counts the pages (or files) a link was found on; `referrers` keeps the first
-- of them (crawler_queue::referrers::KEPT), numbered in the order they were found.
ALTER TABLE sites
    ADD COLUMN crawl       BIGINT NULL,
    ADD COLUMN depth       INT    NULL,
    ADD COLUMN found_count INT    NOT NULL DEFAULT 0;

CREATE TABLE IF NOT EXISTS crawls (
    id         BIGINT  NOT NULL AUTO_INCREMENT,
    -- One `KIND VALUE` a line (crawler_links::Scope): a link in any of them is followed.
    scopes     TEXT    NOT NULL,
    -- `--include`/`--exclude` for discovered links, one regular expression a line.
    includes   TEXT    NOT NULL,
    excludes   TEXT    NOT NULL,
    max_depth  INT     NULL,
    max_pages  BIGINT  NULL,
    -- Pages taken for following so far, fleet-wide (counted only under a max_pages).
    pages      BIGINT  NOT NULL DEFAULT 0,
    -- Whether followed pages obey robots.txt (`--ignore-robots` clears it).
    robots     TINYINT NOT NULL DEFAULT 1,
    created_at BIGINT  NOT NULL,
    PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS referrers (
    site_id  BIGINT NOT NULL,
    -- 1 for the first page the link was found on, 2 for the second…
    n        INT    NOT NULL,
    -- A page's URL, or FILE:LINE for `--links-in`, or a sitemap's URL.
    referrer TEXT   NOT NULL,
    PRIMARY KEY (site_id, n)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- robots.txt, fetched once per origin for the fleet; `body` NULL when there is none (allow all).
CREATE TABLE IF NOT EXISTS robots (
    origin     VARCHAR(300) COLLATE utf8mb4_bin NOT NULL,
    body       MEDIUMTEXT   NULL,
    fetched_at BIGINT       NOT NULL,
    PRIMARY KEY (origin)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
