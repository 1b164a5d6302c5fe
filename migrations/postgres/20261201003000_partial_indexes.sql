-- Indexes that hold only the rows their readers ask for; see
-- migrations/sqlite/20261201003000_partial_indexes.sql. On PostgreSQL a row's new version gets
-- an entry only in the partial indexes whose condition it meets, so the claim's and the
-- write-back's new versions skip those of the rows they leave, and the indexes stay small.
DROP INDEX IF EXISTS sites_token;
CREATE INDEX IF NOT EXISTS sites_token ON sites (claim_token) WHERE state = 1;
DROP INDEX IF EXISTS sites_confirm;
CREATE INDEX IF NOT EXISTS sites_confirm ON sites (confirm_check_at) WHERE confirm_check_at IS NOT NULL;
DROP INDEX IF EXISTS sites_verdict;
CREATE INDEX IF NOT EXISTS sites_verdict ON sites (verdict, id) WHERE verdict IS NOT NULL;
