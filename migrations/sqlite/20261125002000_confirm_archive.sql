-- Dead confirmed over time, and archived copies; see migrations/mysql/20261125002000_confirm_archive.sql.
ALTER TABLE sites ADD COLUMN dead_since INTEGER;
ALTER TABLE sites ADD COLUMN dead_streak INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sites ADD COLUMN confirmed_at INTEGER;
ALTER TABLE sites ADD COLUMN confirm_check_at INTEGER;
ALTER TABLE sites ADD COLUMN archived_url TEXT;
ALTER TABLE sites ADD COLUMN archived_at INTEGER;
ALTER TABLE sites ADD COLUMN archive_checked_at INTEGER;
CREATE INDEX IF NOT EXISTS sites_confirm ON sites (confirm_check_at);
