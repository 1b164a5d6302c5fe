-- When a link began to answer through its permanent redirect (crates/queue/src/complete.rs):
-- set when sites.moved_to changes, NULL when the link is not moved. `crawler-report --moved`
-- pages through sites_moved, and `--moved --changed-since` (the newly moved) is a range of it.
-- Its entry moves only when a link's move begins or ends.
ALTER TABLE sites ADD COLUMN moved_at BIGINT NULL, ADD KEY sites_moved (moved_at, id);
