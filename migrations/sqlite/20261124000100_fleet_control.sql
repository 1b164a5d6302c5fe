-- Fleet-wide switches; see migrations/mysql/20261124000100_fleet_control.sql.

CREATE TABLE IF NOT EXISTS fleet (
    id         INTEGER PRIMARY KEY,
    paused     INTEGER NOT NULL DEFAULT 0,
    changed_at INTEGER NOT NULL DEFAULT 0
);

INSERT OR IGNORE INTO fleet (id) VALUES (1);
