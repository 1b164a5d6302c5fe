-- The claim's index gains the host partition (crates/queue/src/sql.rs, `claim_held`): a worker
-- claims only in the partitions it holds, and reads their partition in the index, not in each
-- row, the rows of every other worker's partitions included — a cost that grew with the fleet.
-- The order becomes next_check_at, part, id.
DROP INDEX IF EXISTS sites_due;
CREATE INDEX IF NOT EXISTS sites_due ON sites (state, next_check_at, part, id);
