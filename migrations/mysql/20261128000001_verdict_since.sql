-- When the site's current verdict began (crates/queue/src/history.rs): the verdict history
-- (verdict_changes) now holds the verdicts a site had before its current one, each written when
-- it is replaced, with the time it began; the current verdict is the row's own. A site's first
-- verdict costs the history nothing. NULL on rows written before this migration: their current
-- verdict is in verdict_changes already (every verdict was recorded there), and where it is not,
-- the time of its last check stands in. Nullable with no default, so adding it rewrites nothing.
ALTER TABLE sites ADD COLUMN verdict_since BIGINT NULL;
