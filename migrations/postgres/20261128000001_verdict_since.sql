-- When the site's current verdict began; see migrations/mysql/20261128000001_verdict_since.sql.
ALTER TABLE sites ADD COLUMN verdict_since BIGINT NULL;
