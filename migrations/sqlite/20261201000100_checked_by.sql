-- Which worker gave the site its current verdict; see migrations/mysql/20261201000100_checked_by.sql.
ALTER TABLE sites ADD COLUMN checked_by TEXT;
