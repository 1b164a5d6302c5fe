-- Politeness per server address; see migrations/mysql/20261206000001_addresses.sql.
CREATE TABLE IF NOT EXISTS address_holders (
    address   TEXT    NOT NULL,
    worker    TEXT    NOT NULL,
    since     INTEGER NULL,
    waiting   INTEGER NOT NULL DEFAULT 0,
    in_flight INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (address, worker)
);
CREATE INDEX IF NOT EXISTS address_holders_worker ON address_holders (worker);
CREATE TABLE IF NOT EXISTS address_syncs (
    worker    TEXT    NOT NULL PRIMARY KEY,
    synced_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS host_addresses (
    host    TEXT    NOT NULL PRIMARY KEY,
    address TEXT    NOT NULL,
    seen_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS host_addresses_address ON host_addresses (address);
