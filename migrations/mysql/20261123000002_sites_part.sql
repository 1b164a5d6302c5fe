-- Each site's host partition, and an index by host (the hosts report, --host). One ALTER, so
-- it applies whole or not at all.
ALTER TABLE sites
    ADD COLUMN part SMALLINT NOT NULL DEFAULT 0,
    ADD KEY sites_host (host);
