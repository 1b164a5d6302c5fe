-- Each site's host partition, and an index by host. SQLite has no SHA-256 in SQL: sites seeded
-- before partitions existed stay in partition 0 (one worker at a time asks them, which is
-- polite, only less spread); the seed computes the partition of every new site.
ALTER TABLE sites ADD COLUMN part INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS sites_host ON sites (host);
