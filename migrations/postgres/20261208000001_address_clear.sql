-- When a shrunken share's earlier starts leave the window; see
-- migrations/mysql/20261208000001_address_clear.sql.
ALTER TABLE address_holders ADD COLUMN IF NOT EXISTS clear_at BIGINT NULL;
