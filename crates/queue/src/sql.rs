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
    /// Binds: owner, token, lease ms, the partitions (`{parts}`: that many placeholders), n.
    /// Like `claim`, only in those host partitions.
    pub claim_held: String,
    /// Binds: token, parts token. Reads a claimed batch, only sites of partitions still held.
    pub select_held_batch: String,
    /// Binds: token, parts token. Gives back what a claim took in partitions no longer held.
    pub unclaim_lost: String,
    /// Binds: owner, parts token, lease ms, n. Leases up to n free partitions.
    pub take_parts: String,
    /// Binds: lease ms, parts token.
    pub keep_parts: String,
    /// Binds: parts token, n. Marks up to n held partitions as being handed over.
    pub drain_parts: String,
    /// Binds: n. The partitions of the earliest n due sites, not draining: id, holder's token,
    /// due sites among the n (see `balance.rs`).
    pub due_parts: String,
    /// Binds: lease ms, parts token, owner. Hands the draining partitions of the token that
    /// have an heir, and none of the owner's sites in flight, to their heir.
    pub hand_to_heirs: String,
    /// Binds: dead-after ms. Partitions of workers whose heartbeat stopped become free.
    pub reap_dead_parts: String,
    /// Binds: parts token. Hosts of the held partitions that the fleet learned something of:
    /// host, milliseconds of backoff left, recent checks, recent errors.
    pub host_states: String,
    /// Binds: host, part, backoff ms, status, retry-after ms. Records that a host throttled.
    pub record_throttled: String,
    /// Binds, per row of `{rows}`: host, part, checks, errors. Adds to hosts' recent counts,
    /// halving both whenever the checks pass [`RECENT_CHECKS`].
    pub record_checks: String,
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
    /// The table, read in host order through `sites_host`, for the hosts report's
    /// `WHERE host > ? GROUP BY host ORDER BY host LIMIT ?`, which then stops after a page's
    /// hosts. On the first pages `host > ?` matches nearly every row, which could tempt a
    /// planner into scanning and grouping the whole table for each page; MariaDB 10.11 picks
    /// the index unaided, but the plan is pinned, as for the other indexes above.
    pub sites_by_host: &'static str,
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
        let (now, insert_ignore, by_token, sites_by_id, sites_by_host, by_due) = match dialect {
            Dialect::MySql => (
                MYSQL_NOW,
                "INSERT IGNORE",
                "sites FORCE INDEX (sites_token)",
                "sites FORCE INDEX (PRIMARY)",
                "sites FORCE INDEX (sites_host)",
                "sites FORCE INDEX (sites_due)",
            ),
            Dialect::Sqlite => (
                SQLITE_NOW,
                "INSERT OR IGNORE",
                "sites",
                "sites",
                "sites",
                "sites",
            ),
        };
        let sql = |text: &str| text.replace("{now}", now);
        // MySQL can UPDATE … ORDER BY … LIMIT directly; SQLite (as bundled) cannot, and picks the
        // rows in a subquery instead. Both are one statement, so choosing and marking cannot be
        // separated by another claimer.
        let limited_in = |table: &str, set: &str, filter: &str, order: &str| {
            match dialect {
            Dialect::MySql => sql(&format!("UPDATE {table} SET {set} WHERE {filter} ORDER BY {order} LIMIT ?")),
            Dialect::Sqlite => sql(&format!(
                "UPDATE {table} SET {set} WHERE id IN (SELECT id FROM {table} WHERE {filter} ORDER BY {order} LIMIT ?)"
            )),
        }
        };
        let limited =
            |set: &str, filter: &str, order: &str| limited_in("sites", set, filter, order);
        let claim_set = "state = 1, owner = ?, claim_token = ?, expires_at = {now} + ?";
        let due = "state = 0 AND next_check_at <= {now}";
        let unclaim = "state = 0, owner = NULL, claim_token = NULL, expires_at = NULL";
        Statements {
            now_expr: now,
            now: format!("SELECT {now}"),
            claim: limited(claim_set, due, "next_check_at, id"),
            claim_held: limited(
                claim_set,
                &format!("{due} AND part IN ({{parts}})"),
                "next_check_at, id",
            ),
            take_parts: limited_in(
                "parts",
                "owner = ?, token = ?, expires_at = {now} + ?, draining = 0",
                "expires_at <= {now}",
                "expires_at, id",
            ),
            keep_parts: sql("UPDATE parts SET expires_at = {now} + ? WHERE token = ?"),
            drain_parts: limited_in("parts", "draining = 1", "token = ? AND draining = 0", "id DESC"),
            due_parts: sql(&format!(
                "SELECT s.part, p.token, COUNT(*) FROM \
                 (SELECT part FROM {by_due} WHERE {due} ORDER BY next_check_at, id LIMIT ?) AS s \
                 JOIN parts AS p ON p.id = s.part WHERE p.draining = 0 GROUP BY s.part, p.token"
            )),
            // The heir's columns are read before they are cleared: MySQL assigns left to right,
            // SQLite from the old row.
            hand_to_heirs: sql(&format!(
                "UPDATE parts SET owner = heir_owner, token = heir_token, \
                 expires_at = {{now}} + ?, draining = 0, heir_token = NULL, heir_owner = NULL \
                 WHERE token = ? AND draining = 1 AND heir_token IS NOT NULL AND NOT EXISTS {IN_FLIGHT}"
            )),
            reap_dead_parts: sql(&format!(
                "UPDATE parts SET {FREE_PART} \
                 WHERE owner IN (SELECT id FROM workers WHERE heartbeat_at < {{now}} - ?)"
            )),
            host_states: sql(
                "SELECT host, backoff_until - {now}, recent_checks, recent_errors FROM hosts \
                 WHERE part IN (SELECT id FROM parts WHERE token = ?) \
                 AND (backoff_until > {now} OR recent_errors > 0)",
            ),
            record_throttled: {
                let insert = "INSERT INTO hosts (host, part, backoff_until, last_throttled_at, \
                              last_status, retry_after_ms, throttled) \
                              VALUES (?, ?, {now} + ?, {now}, ?, ?, 1)";
                sql(&match dialect {
                    Dialect::MySql => format!(
                        "{insert} ON DUPLICATE KEY UPDATE \
                         backoff_until = GREATEST(backoff_until, VALUES(backoff_until)), \
                         last_throttled_at = VALUES(last_throttled_at), last_status = VALUES(last_status), \
                         retry_after_ms = VALUES(retry_after_ms), throttled = throttled + 1"
                    ),
                    Dialect::Sqlite => format!(
                        "{insert} ON CONFLICT (host) DO UPDATE SET \
                         backoff_until = MAX(backoff_until, excluded.backoff_until), \
                         last_throttled_at = excluded.last_throttled_at, last_status = excluded.last_status, \
                         retry_after_ms = excluded.retry_after_ms, throttled = throttled + 1"
                    ),
                })
            },
            record_checks: {
                let (new, div, upsert) = match dialect {
                    Dialect::MySql => ("VALUES", "DIV", "ON DUPLICATE KEY UPDATE"),
                    Dialect::Sqlite => ("excluded.", "/", "ON CONFLICT (host) DO UPDATE SET"),
                };
                let new = |col: &str| match dialect {
                    Dialect::MySql => format!("{new}({col})"),
                    Dialect::Sqlite => format!("{new}{col}"),
                };
                let recent = |col: &str| {
                    let sum = format!("{col} + {}", new(col));
                    format!(
                        "{col} = CASE WHEN recent_checks + {} > {RECENT_CHECKS} \
                         THEN ({sum}) {div} 2 ELSE {sum} END",
                        new("recent_checks")
                    )
                };
                // Errors first: MySQL assigns left to right, and the errors' test reads the
                // checks before they change.
                format!(
                    "INSERT INTO hosts (host, part, recent_checks, recent_errors) VALUES {{rows}} \
                     {upsert} {}, {}",
                    recent("recent_errors"),
                    recent("recent_checks")
                )
            },
            select_batch: format!(
                "SELECT id, claim_token, url, host, part, tries, consecutive_failures \
                 FROM {by_token} WHERE claim_token = ? AND state = 1"
            ),
            select_held_batch: format!(
                "SELECT id, claim_token, url, host, part, tries, consecutive_failures \
                 FROM {by_token} WHERE claim_token = ? AND state = 1 AND part IN ({HELD_PARTS})"
            ),
            unclaim_lost: format!(
                "UPDATE {by_token} SET {unclaim} \
                 WHERE claim_token = ? AND state = 1 AND part NOT IN ({HELD_PARTS})"
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
            sites_by_host,
        }
    }
}

/// The partitions a parts token holds and is not handing over (binds: the token).
pub(crate) const HELD_PARTS: &str = "SELECT id FROM parts WHERE token = ? AND draining = 0";

/// Binds: owner. Whether the owner has a site of the partition (of the enclosing `UPDATE
/// parts`) in flight: a partition is handed over only once none is.
pub(crate) const IN_FLIGHT: &str =
    "(SELECT 1 FROM sites WHERE sites.state = 1 AND sites.part = parts.id AND sites.owner = ?)";

/// A host's recent checks are halved, errors with them, when they pass this: the error rate
/// weighs the last hundred or so.
pub(crate) const RECENT_CHECKS: i64 = 100;

/// A partition nobody holds.
pub(crate) const FREE_PART: &str =
    "owner = NULL, token = NULL, expires_at = 0, draining = 0, heir_token = NULL, heir_owner = NULL";

/// `rows` padded to a power of two by repeating the last one, so that a statement with an
/// `IN` list of them has one of a few shapes (each connection prepares each once), and the
/// list still matches the same rows.
pub(crate) fn padded<T: Copy>(rows: &[T]) -> Vec<T> {
    let mut padded = rows.to_vec();
    if let Some(&last) = rows.last() {
        padded.resize(rows.len().next_power_of_two(), last);
    }
    padded
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
