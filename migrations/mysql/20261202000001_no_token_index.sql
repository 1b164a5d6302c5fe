-- MySQL reads a claim's rows by id, never by token (crates/queue/src/queue.rs, `Stamped`): its
-- claim picks the ids before it stamps them, and every later read and write names them. So the
-- index by token goes: every claim moved an entry of it for each site, and every seeded site
-- added one. Idempotent (MySQL 8 has no DROP INDEX IF EXISTS): dropped only where it is there.
SET @crawler_drop_token = (
    SELECT IF(COUNT(*) > 0, 'ALTER TABLE sites DROP KEY sites_token', 'DO 0')
    FROM information_schema.statistics
    WHERE table_schema = DATABASE() AND table_name = 'sites' AND index_name = 'sites_token'
);
PREPARE crawler_drop_token FROM @crawler_drop_token;
EXECUTE crawler_drop_token;
DEALLOCATE PREPARE crawler_drop_token;
