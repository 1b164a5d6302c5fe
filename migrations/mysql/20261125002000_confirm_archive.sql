-- Dead confirmed over time, and an archived copy of each dead link (crates/queue/src/confirm.rs,
-- crates/queue/src/archive.rs).
-- dead_since: when the site's current streak of dead results began (NULL when its last verdict
-- is not dead); dead_streak: how many dead results in a row; confirmed_at: when the worker's
-- --confirm policy found the streak long enough; confirm_check_at: when an unconfirmed dead
-- site is due for its next confirming check (NULL otherwise, so its index holds only those).
-- archived_url/archived_at: the closest archived copy and its time; archive_checked_at: when it
-- was looked up (NULL: not yet).
ALTER TABLE sites
    ADD COLUMN dead_since BIGINT NULL,
    ADD COLUMN dead_streak INT NOT NULL DEFAULT 0,
    ADD COLUMN confirmed_at BIGINT NULL,
    ADD COLUMN confirm_check_at BIGINT NULL,
    ADD COLUMN archived_url TEXT NULL,
    ADD COLUMN archived_at BIGINT NULL,
    ADD COLUMN archive_checked_at BIGINT NULL,
    ADD INDEX sites_confirm (confirm_check_at);
