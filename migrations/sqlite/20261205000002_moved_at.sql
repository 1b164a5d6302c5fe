-- When a link began to answer through its permanent redirect; see
-- migrations/mysql/20261205000002_moved_at.sql. Only moved links have an entry.
ALTER TABLE sites ADD COLUMN moved_at INTEGER;
CREATE INDEX IF NOT EXISTS sites_moved ON sites (moved_at, id) WHERE moved_at IS NOT NULL;
