-- A worker alone takes every address's whole budget without registering it; see
-- migrations/mysql/20261207000001_workers_alone.sql.
ALTER TABLE workers ADD COLUMN alone INTEGER NOT NULL DEFAULT 0;
