-- The heir of a partition being handed over; see migrations/mysql/20261124000001_part_heirs.sql.
ALTER TABLE parts ADD COLUMN heir_token INTEGER;
ALTER TABLE parts ADD COLUMN heir_owner TEXT;
