-- Work-aware balance: a worker with nothing due may ask for a busy partition of a worker that
-- has more of them (see crates/queue/src/balance.rs). The partition is marked draining with the
-- asker as its heir; its holder hands it straight to the heir once nothing of it is in flight,
-- so no third worker can take it in between. FREE_PART clears the heir. One ALTER, so it
-- applies whole or not at all.
ALTER TABLE parts
    ADD COLUMN heir_token BIGINT       NULL,
    ADD COLUMN heir_owner VARCHAR(255) NULL;
