-- Politeness per server address; see migrations/mysql/20261206000001_addresses.sql.
CREATE TABLE IF NOT EXISTS address_holders (
    address   VARCHAR(45)  NOT NULL,
    worker    VARCHAR(255) NOT NULL,
    since     BIGINT       NULL,
    waiting   BIGINT       NOT NULL DEFAULT 0,
    in_flight BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (address, worker)
);
CREATE INDEX IF NOT EXISTS address_holders_worker ON address_holders (worker);
CREATE TABLE IF NOT EXISTS address_syncs (
    worker    VARCHAR(255) NOT NULL,
    synced_at BIGINT       NOT NULL,
    PRIMARY KEY (worker)
);
CREATE TABLE IF NOT EXISTS host_addresses (
    host    VARCHAR(255) NOT NULL,
    address VARCHAR(45)  NOT NULL,
    seen_at BIGINT       NOT NULL,
    PRIMARY KEY (host)
);
CREATE INDEX IF NOT EXISTS host_addresses_address ON host_addresses (address);
