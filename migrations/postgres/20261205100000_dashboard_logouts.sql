-- Dashboard sessions ended by a log out; see migrations/mysql/20261205100000_dashboard_logouts.sql.
CREATE TABLE IF NOT EXISTS dashboard_logouts (
    session_id BYTEA  NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (session_id)
);
CREATE INDEX IF NOT EXISTS dashboard_logouts_expiry ON dashboard_logouts (expires_at);
