-- A host's state, shared by the fleet (crates/queue/src/hosts.rs): its adaptive rate while it
-- throttles (NULL: its configured rate), and whether it was decided unreachable (since when,
-- the cause as an error kind, and what was seen). Deferred is backoff_until, as before.
ALTER TABLE hosts ADD COLUMN rate REAL NULL;
ALTER TABLE hosts ADD COLUMN unreachable_since INTEGER NULL;
ALTER TABLE hosts ADD COLUMN unreachable_kind TEXT NULL;
ALTER TABLE hosts ADD COLUMN unreachable_detail TEXT NULL;
