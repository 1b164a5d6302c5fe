-- Which worker gave the site its current verdict (crates/queue/src/complete.rs): the
-- dashboard's history plots checks per worker from it (crates/queue/src/report/history.rs).
-- NULL for a verdict given to a whole host's pending sites at once (no worker checked those),
-- and for the verdicts written before this migration. Nullable with no default, so adding it
-- rewrites nothing (MariaDB and MySQL 8 add such a column in place).
ALTER TABLE sites ADD COLUMN checked_by VARCHAR(255) NULL;
