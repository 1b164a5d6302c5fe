-- "excluded" becomes a verdict of its own (crates/queue/src/verdict.rs, `Verdict::Excluded`),
-- no longer an error kind: a URL the worker's --include/--exclude leave out was stored as
-- verdict 'error' with error_kind 'excluded', and is now verdict 'excluded' with no error kind.
-- The history is rewritten the same way, so that a site's latest change matches its verdict
-- and its next check records no change that did not happen. The verdict columns are plain
-- strings (no CHECK constraint, no enum): nothing else changes.
UPDATE sites SET verdict = 'excluded', error_kind = NULL
WHERE verdict = 'error' AND error_kind = 'excluded';
UPDATE verdict_changes SET verdict = 'excluded', error_kind = NULL
WHERE verdict = 'error' AND error_kind = 'excluded';
