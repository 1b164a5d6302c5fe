-- Fragments; see migrations/mysql/20261201001000_fragments.sql.
ALTER TABLE sites ADD COLUMN IF NOT EXISTS fragment VARCHAR(8) NULL;
ALTER TABLE crawls ADD COLUMN IF NOT EXISTS fragments SMALLINT NOT NULL DEFAULT 1;

CREATE TABLE IF NOT EXISTS anchors (
    page_key    BYTEA       NOT NULL,
    page_url    TEXT        NOT NULL,
    verdict     VARCHAR(16) NOT NULL,
    http_status INTEGER     NULL,
    error_kind  VARCHAR(32) NULL,
    final_url   TEXT        NULL,
    redirects   INTEGER     NOT NULL DEFAULT 0,
    anchors     TEXT        NULL,
    read_at     BIGINT      NOT NULL,
    PRIMARY KEY (page_key)
);
