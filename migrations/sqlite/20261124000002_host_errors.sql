-- A host's recent error rate; see migrations/mysql/20261124000002_host_errors.sql.
ALTER TABLE hosts ADD COLUMN recent_checks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hosts ADD COLUMN recent_errors INTEGER NOT NULL DEFAULT 0;
