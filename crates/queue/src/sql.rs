//! The queue's SQL, per dialect. Everything else in the crate is dialect-blind.
//!
//! Times are Unix milliseconds, always computed by the database (`{now}` below), never by the
//! caller: every lease and schedule decision uses one clock however many machines run workers.
//! Callers bind durations in milliseconds (`{now} + ?`), never instants.
//!
//! States: 0 pending, 1 claimed, 2 done (see [`crate::State`]).

use std::sync::LazyLock;

use crate::db::Dialect;

/// Now, in Unix milliseconds, on the database's clock. sqlx sets the MySQL session's time zone
/// to UTC, so `UNIX_TIMESTAMP` never meets a daylight-saving gap.
const MYSQL_NOW: &str = "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)";
const SQLITE_NOW: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

/// The fixed statements of one dialect.
pub(crate) struct Statements {
    /// The expression for now, for statements built per call.
    pub now_expr: &'static str,
    /// Reads the database's clock.
    pub now: String,
    /// Binds: owner, token, lease ms, n. Stamps a claim on up to n due pending rows.
    pub claim: String,
    /// Binds: token. Reads a claimed batch.
    pub select_batch: String,
    /// Binds: lease ms, token.
    pub extend: String,
    /// Binds: token. The ids a token still owns.
    pub owned: String,
    /// Binds: chunk. Expired leases back to pending.
    pub reap_expired: String,
    /// Binds: dead-after ms, chunk. Claims of workers whose heartbeat stopped back to pending.
    pub reap_dead: String,
    /// Binds: dead-after ms.
    pub forget_dead_workers: String,
    /// Binds: older-than ms, chunk. Done sites checked longer ago than that become due.
    pub recheck: String,
    /// Binds: id, host, pid.
    pub register: String,
    /// Binds: name.
    pub lease_row: String,
    /// Binds: owner, ttl ms, name, owner. One matched row means the caller holds the lease.
    pub take_lease: String,
    /// `INSERT IGNORE` or `INSERT OR IGNORE`.
    pub insert_ignore: &'static str,
    /// The table, read by primary key: for fenced writes `WHERE claim_token = ? AND state = 1
    /// AND id IN (…)`, which MariaDB would otherwise serve from the `state = 1` part of
    /// `sites_due`, scanning every claimed row of the fleet for each statement.
    pub sites_by_id: &'static str,
}

impl Statements {
    pub fn get(dialect: Dialect) -> &'static Statements {
        static MYSQL: LazyLock<Statements> = LazyLock::new(|| Statements::new(Dialect::MySql));
        static SQLITE: LazyLock<Statements> = LazyLock::new(|| Statements::new(Dialect::Sqlite));
        match dialect {
            Dialect::MySql => &MYSQL,
            Dialect::Sqlite => &SQLITE,
        }
    }

    fn new(dialect: Dialect) -> Statements {
        // SQLite's planner picks these indexes unaided; MariaDB's has been seen not to.
        let (now, insert_ignore, by_token, sites_by_id) = match dialect {
            Dialect::MySql => (
                MYSQL_NOW,
                "INSERT IGNORE",
                "sites FORCE INDEX (sites_token)",
                "sites FORCE INDEX (PRIMARY)",
            ),
            Dialect::Sqlite => (SQLITE_NOW, "INSERT OR IGNORE", "sites", "sites"),
        };
        let sql = |text: &str| text.replace("{now}", now);
        // MySQL can UPDATE … ORDER BY … LIMIT directly; SQLite (as bundled) cannot, and picks the
        // rows in a subquery instead. Both are one statement, so choosing and marking cannot be
        // separated by another claimer.
        let limited = |set: &str, filter: &str, order: &str| {
            match dialect {
            Dialect::MySql => sql(&format!("UPDATE sites SET {set} WHERE {filter} ORDER BY {order} LIMIT ?")),
            Dialect::Sqlite => sql(&format!(
                "UPDATE sites SET {set} WHERE id IN (SELECT id FROM sites WHERE {filter} ORDER BY {order} LIMIT ?)"
            )),
        }
        };
        let unclaim = "state = 0, owner = NULL, claim_token = NULL, expires_at = NULL";
        Statements {
            now_expr: now,
            now: format!("SELECT {now}"),
            claim: limited(
                "state = 1, owner = ?, claim_token = ?, expires_at = {now} + ?",
                "state = 0 AND next_check_at <= {now}",
                "next_check_at, id",
            ),
            select_batch: format!(
                "SELECT id, claim_token, url, host, tries, consecutive_failures \
                 FROM {by_token} WHERE claim_token = ? AND state = 1"
            ),
            extend: sql(&format!(
                "UPDATE {by_token} SET expires_at = {{now}} + ? WHERE claim_token = ? AND state = 1"
            )),
            owned: format!("SELECT id FROM {by_token} WHERE claim_token = ? AND state = 1"),
            reap_expired: limited(unclaim, "state = 1 AND expires_at < {now}", "expires_at"),
            reap_dead: limited(
                unclaim,
                "state = 1 AND owner IN (SELECT id FROM workers WHERE heartbeat_at < {now} - ?)",
                "expires_at",
            ),
            forget_dead_workers: sql("DELETE FROM workers WHERE heartbeat_at < {now} - ?"),
            recheck: limited(
                "state = 0, tries = 0, next_check_at = {now}",
                "state = 2 AND next_check_at <= {now} - ?",
                "next_check_at",
            ),
            register: match dialect {
                Dialect::MySql => sql(
                    "INSERT INTO workers (id, host, pid, started_at, heartbeat_at) VALUES (?, ?, ?, {now}, {now}) \
                     ON DUPLICATE KEY UPDATE host = VALUES(host), pid = VALUES(pid), \
                     started_at = VALUES(started_at), heartbeat_at = VALUES(heartbeat_at), checked = 0",
                ),
                Dialect::Sqlite => sql(
                    "INSERT INTO workers (id, host, pid, started_at, heartbeat_at) VALUES (?, ?, ?, {now}, {now}) \
                     ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, \
                     started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, checked = 0",
                ),
            },
            lease_row: format!("{insert_ignore} INTO leases (name, expires_at) VALUES (?, 0)"),
            take_lease: sql(
                "UPDATE leases SET owner = ?, expires_at = {now} + ?, runs = runs + 1 \
                 WHERE name = ? AND (owner = ? OR expires_at <= {now})",
            ),
            insert_ignore,
            sites_by_id,
        }
    }
}

/// `?, ?, …, ?`: `n` placeholders for an `IN (…)` list.
pub(crate) fn placeholders(n: usize) -> String {
    let mut s = "?, ".repeat(n);
    s.truncate(s.len().saturating_sub(2));
    s
}

/// `CASE id WHEN ? THEN ? … END`: one value per row, for writing a batch in one statement.
pub(crate) fn case_by_id(n: usize) -> String {
    format!("CASE id {} END", "WHEN ? THEN ? ".repeat(n).trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_comma_separated() {
        assert_eq!(placeholders(3), "?, ?, ?");
        assert_eq!(placeholders(1), "?");
    }

    #[test]
    fn case_by_id_has_one_pair_per_row() {
        assert_eq!(case_by_id(2), "CASE id WHEN ? THEN ? WHEN ? THEN ? END");
    }

    #[test]
    fn every_statement_uses_the_dialects_clock() {
        for dialect in [Dialect::MySql, Dialect::Sqlite] {
            let s = Statements::get(dialect);
            assert!(!s.claim.contains("{now}"), "{}", s.claim);
            assert!(s.claim.contains(if dialect == Dialect::MySql {
                "NOW(3)"
            } else {
                "julianday"
            }));
        }
    }
}
