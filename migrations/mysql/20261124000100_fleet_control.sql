-- Fleet-wide switches an operator sets and every worker reads with its heartbeat (see
-- crates/queue/src/control.rs). One row, id 1. Its own table rather than a row in `leases`:
-- a lease row is taken by compare-and-set and expires, and the reaper's code reads every column
-- of it that way; a pause is a plain flag that holds until someone changes it.

CREATE TABLE IF NOT EXISTS fleet (
    id         TINYINT      NOT NULL,
    -- 1 while the fleet is paused: workers finish what they hold and claim nothing more.
    paused     TINYINT      NOT NULL DEFAULT 0,
    -- Unix milliseconds, on the database's clock, of the last pause or resume (0: never).
    changed_at BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

INSERT IGNORE INTO fleet (id) VALUES (1);
