-- The claim's index gains the host partition (crates/queue/src/sql.rs, `claim_held`): a worker
-- claims only in the partitions it holds, and picks its sites from this index alone (a covering
-- read: state, next_check_at, part and the id), where it had to read each row to learn its
-- partition, the rows of every other worker's partitions included — a cost that grew with the
-- fleet. The order becomes next_check_at, part, id. One ALTER: dropped and added in one step.
ALTER TABLE sites
    DROP KEY sites_due,
    ADD KEY sites_due (state, next_check_at, part, id);
