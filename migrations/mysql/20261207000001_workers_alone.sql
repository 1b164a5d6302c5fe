-- A worker that found no other live worker when it started takes every server address's whole
-- budget without registering it (crates/queue/src/addresses.rs, "A worker alone"): it sets
-- `alone` to 1, then counts the other live workers, and keeps it only when there were none.
-- A worker that sees another live worker's `alone` registers no address and uses none until
-- it is cleared; the worker alone clears it once it has registered every address it holds.
ALTER TABLE workers ADD COLUMN alone TINYINT NOT NULL DEFAULT 0;
