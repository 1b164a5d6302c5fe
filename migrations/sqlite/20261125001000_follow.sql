-- Recursive checking and referrers; see migrations/mysql/20261125001000_follow.sql.
ALTER TABLE sites ADD COLUMN crawl INTEGER;
ALTER TABLE sites ADD COLUMN depth INTEGER;
ALTER TABLE sites ADD COLUMN found_count INTEGER NOT NULL DEFAULT 0;

CREATE TABLE IF NOT EXISTS crawls (
    id         INTEGER PRIMARY KEY,
    scopes     TEXT    NOT NULL,
    includes   TEXT    NOT NULL,
    excludes   TEXT    NOT NULL,
    max_depth  INTEGER,
    max_pages  INTEGER,
    pages      INTEGER NOT NULL DEFAULT 0,
    robots     INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS referrers (
    site_id  INTEGER NOT NULL,
    n        INTEGER NOT NULL,
    referrer TEXT    NOT NULL,
    PRIMARY KEY (site_id, n)
);

CREATE TABLE IF NOT EXISTS robots (
    origin     TEXT    NOT NULL PRIMARY KEY,
    body       TEXT,
    fetched_at INTEGER NOT NULL
);
