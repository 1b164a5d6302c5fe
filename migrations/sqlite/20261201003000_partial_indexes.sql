-- Indexes that hold only the rows their readers ask for (docs/scale.md, "What a site costs on
-- SQLite"). An UPDATE that assigns an indexed column deletes and inserts that index's entry
-- of the row, a random page each for these three; a partial index skips a row that is outside
-- it before and after. So a site's claim and write-back move only what is read:
-- - sites_token: claimed rows only (state 1, `crate::State::Claimed`), the only ones read by
--   token (`claim_token = ? AND state = 1`): the claim adds its batch's entries side by side,
--   the write-back takes them out, and the index stays the size of what is in flight.
-- - sites_confirm: dead sites waiting for a confirming check only (`confirm_check_at <= now`).
-- - sites_verdict: checked sites only (`verdict = ?`, `verdict IN (…)`, `verdict IS NOT NULL`):
--   the seed adds no entry, and a first verdict only inserts its own.
DROP INDEX IF EXISTS sites_token;
CREATE INDEX IF NOT EXISTS sites_token ON sites (claim_token) WHERE state = 1;
DROP INDEX IF EXISTS sites_confirm;
CREATE INDEX IF NOT EXISTS sites_confirm ON sites (confirm_check_at) WHERE confirm_check_at IS NOT NULL;
DROP INDEX IF EXISTS sites_verdict;
CREATE INDEX IF NOT EXISTS sites_verdict ON sites (verdict, id) WHERE verdict IS NOT NULL;
