-- Politeness per server address (crates/queue/src/addresses.rs, crates/check/src/addresses.rs).
-- `address_holders`: the workers that hold a share of an address's budget (--ip-concurrency,
-- --ip-rate). A worker inserts its row before its first request to the address, then sets
-- `since` (the database's clock, Unix milliseconds) in a later statement, so that a reader
-- whose statement starts after `since` sees the row. Its share is the budget over the live
-- holders; it uses it once every other live holder acknowledged (`address_syncs.synced_at`
-- after its `since`) a read of the holders. `waiting` and `in_flight` are what the worker last
-- said of its requests there, for the per-address report. A worker gives its rows back when
-- the address idles and when it stops; rows of dead workers are not counted.
CREATE TABLE IF NOT EXISTS address_holders (
    address   VARCHAR(45)  NOT NULL,
    worker    VARCHAR(255) NOT NULL,
    since     BIGINT       NULL,
    waiting   BIGINT       NOT NULL DEFAULT 0,
    in_flight BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (address, worker),
    KEY address_holders_worker (worker)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
-- When each worker last read the holders of its addresses (the start of the read, on the
-- database's clock), having applied what it read: its acknowledgement of every holder whose
-- `since` is earlier.
CREATE TABLE IF NOT EXISTS address_syncs (
    worker    VARCHAR(255) NOT NULL,
    synced_at BIGINT       NOT NULL,
    PRIMARY KEY (worker)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
-- The address each host was last asked at, for the reports (`crawler-report --hosts`,
-- `--addresses`) and the dashboard.
CREATE TABLE IF NOT EXISTS host_addresses (
    host    VARCHAR(255) NOT NULL,
    address VARCHAR(45)  NOT NULL,
    seen_at BIGINT       NOT NULL,
    PRIMARY KEY (host),
    KEY host_addresses_address (address)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
