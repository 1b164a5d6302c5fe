-- Fragments held for their page; see migrations/mysql/20261201002000_fragment_holds.sql.
CREATE TABLE IF NOT EXISTS fragment_holds (
    page_key BLOB NOT NULL,
    site_key BLOB NOT NULL,
    PRIMARY KEY (page_key, site_key)
);
