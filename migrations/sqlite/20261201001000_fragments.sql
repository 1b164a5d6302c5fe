-- Fragments; see migrations/mysql/20261201001000_fragments.sql.
ALTER TABLE sites ADD COLUMN fragment TEXT;
ALTER TABLE crawls ADD COLUMN fragments INTEGER NOT NULL DEFAULT 1;

CREATE TABLE IF NOT EXISTS anchors (
    page_key    BLOB    NOT NULL PRIMARY KEY,
    page_url    TEXT    NOT NULL,
    verdict     TEXT    NOT NULL,
    http_status INTEGER,
    error_kind  TEXT,
    final_url   TEXT,
    redirects   INTEGER NOT NULL DEFAULT 0,
    anchors     TEXT,
    read_at     INTEGER NOT NULL
);
