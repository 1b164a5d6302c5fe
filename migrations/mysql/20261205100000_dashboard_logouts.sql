-- Dashboard sessions ended by a log out (crates/queue/src/sessions.rs). A session cookie carries
-- its id and expiry, signed with the dashboard's token; it is good until it expires unless its
-- id is here. A row is kept until the session's own expiry (Unix milliseconds, the database's
-- clock), after which the cookie is refused anyway: the table holds only sessions ended early
-- and still unexpired. In the database rather than beside one process, so that a log out holds
-- in every dashboard of the fleet, and across a restart.
CREATE TABLE IF NOT EXISTS dashboard_logouts (
    session_id BINARY(16) NOT NULL,
    expires_at BIGINT     NOT NULL,
    PRIMARY KEY (session_id),
    INDEX dashboard_logouts_expiry (expires_at)
) ENGINE = InnoDB;
