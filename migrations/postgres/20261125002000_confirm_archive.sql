-- Dead confirmed over time, and archived copies; see migrations/mysql/20261125002000_confirm_archive.sql.
ALTER TABLE sites
    ADD COLUMN dead_since BIGINT NULL,
    ADD COLUMN dead_streak INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN confirmed_at BIGINT NULL,
    ADD COLUMN confirm_check_at BIGINT NULL,
    ADD COLUMN archived_url TEXT NULL,
    ADD COLUMN archived_at BIGINT NULL,
    ADD COLUMN archive_checked_at BIGINT NULL;
CREATE INDEX IF NOT EXISTS sites_confirm ON sites (confirm_check_at);
