//! The notifier's side of the queue (`crawler-reap --notify`): the changes of verdict not yet
//! put in a digest, and the digests made and not yet acknowledged. [`Notifier`], from
//! [`Queue::notifier`]; the coordinator's `notify.rs` sends them.
//!
//! A change is a site's current verdict beginning: its first, or one that replaced another
//! (`verdict_since`, `previous_verdict`, written by the statement that writes the verdict). The
//! notifier's place is a cursor in the order changes happened, `(verdict_since, id)`, one row
//! of `notifier`; it reads a range of the `sites_verdict` index per verdict after it, so a
//! digest's reads are bounded by the digest, whatever the history's size.
//!
//! Changes are read only once they have *settled*: a write-back's `verdict_since` is the
//! database's clock when its statement began, and another statement can commit a change with
//! an earlier time after this one; reading only up to `now − settle` (the coordinator's
//! `--notify-settle`, longer than any write-back statement runs: a lock wait ends in an error
//! and a retry with a new time) means no change appears behind the cursor.
//!
//! A digest is stored, with its body and the cursor moved past its changes, in one transaction
//! that moves the cursor only from where it was read (compare-and-set): two notifiers never put
//! one change in two digests. It is sent after that, and again until a receiver acknowledges
//! it, always the same body under the same id; so a notifier killed mid-delivery, or a lease
//! that passes to another process, sends only what was not acknowledged.
//!
//! A site whose verdict changed twice before a digest was made is in it once, with its
//! current verdict and the one that verdict replaced: the receiver hears every change since
//! what it was last told, at the latest state; every change is in the verdict history
//! (`history.rs`).

use std::collections::HashMap;
use std::time::Duration;

use crate::db::with_pool;
use crate::error::Error;
use crate::queue::{millis, Queue};
use crate::retry::retry;
use crate::sql::{cached, insert_ignore, placeholders};
use crate::verdict::{ErrorKind, Verdict};

/// The singleton lease of the notifier: one process of a fleet sends.
const LEASE: &str = "notifier";

/// A place in the changes, in the order they happened: after the change of site `id` at
/// `since` (Unix milliseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cursor {
    pub since: i64,
    pub id: i64,
}

impl Cursor {
    /// Past every change at `since` or before.
    pub fn after_all(since: i64) -> Cursor {
        Cursor {
            since,
            id: i64::MAX,
        }
    }
}

/// One change, as a digest tells it.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub site_id: i64,
    pub url: String,
    pub verdict: Verdict,
    /// None for a site's first verdict.
    pub previous_verdict: Option<Verdict>,
    /// Unix milliseconds: when the check that found the new verdict ran.
    pub changed_at: i64,
    pub http_status: Option<u16>,
    pub error_kind: Option<ErrorKind>,
    pub final_url: Option<String>,
    /// Where a permanent redirect sends it (the URL to write instead).
    pub moved_to: Option<String>,
    /// The first page (or `FILE:LINE`) it was found on, if any.
    pub found_on: Option<String>,
}

impl Change {
    /// Its place in the order of changes.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            since: self.changed_at,
            id: self.site_id,
        }
    }
}

/// A digest stored and not yet acknowledged.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct Digest {
    /// Its place in the order digests were made.
    pub seq: i64,
    /// Its id, in its body and in each POST's `Idempotency-Key`.
    pub digest_id: String,
    pub changes: i32,
    pub body: String,
    /// POSTs tried so far.
    pub attempts: i32,
}

/// What [`Notifier::advance`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Advanced {
    /// The cursor moved, and the digest given (if any) is stored: here it is, to send.
    Moved(Option<Digest>),
    /// The cursor was no longer where it was read (another notifier moved it): nothing done.
    Lost,
}

/// The notifier's view of the queue; see the module's doc.
#[derive(Clone, Copy, Debug)]
pub struct Notifier<'q> {
    queue: &'q Queue,
}

impl Queue {
    /// The notifier's view: changes to tell, digests to send ([`Notifier`]).
    pub fn notifier(&self) -> Notifier<'_> {
        Notifier { queue: self }
    }
}

#[derive(sqlx::FromRow)]
struct ChangeRow {
    id: i64,
    url: String,
    verdict: String,
    previous_verdict: Option<String>,
    verdict_since: i64,
    http_status: Option<i32>,
    error_kind: Option<String>,
    final_url: Option<String>,
    moved_to: Option<String>,
}

impl Notifier<'_> {
    /// Takes or renews the notifier's lease for `owner`: whether the caller holds it.
    pub async fn lead(&self, owner: &str, ttl: Duration) -> Result<bool, Error> {
        self.queue.leases().lead(LEASE, owner, ttl).await
    }

    /// Gives the lease up (at a clean shutdown).
    pub async fn resign(&self, owner: &str) -> Result<(), Error> {
        self.queue.leases().resign(LEASE, owner).await
    }

    /// The cursor; on a database whose notifier never ran, it is made at `start` (Unix
    /// milliseconds): the changes before it are not told.
    pub async fn cursor(&self, start: i64) -> Result<Cursor, Error> {
        let db = &self.queue.db;
        let create = cached!(db.dialect(), |dialect| {
            insert_ignore(
                dialect,
                "INTO notifier (id, since_ms, after_id, started_at) VALUES (1, ?, ?, {now})",
            )
        });
        let read = cached!(
            db.dialect(),
            "SELECT since_ms, after_id FROM notifier WHERE id = 1"
        );
        let start = Cursor::after_all(start);
        let (since, id): (i64, i64) = with_pool!(db, pool => {
            retry("notifier cursor", || {
                sqlx::query(create).bind(start.since).bind(start.id).execute(pool)
            })
            .await?;
            retry("notifier cursor", || sqlx::query_as(read).fetch_one(pool)).await?
        });
        Ok(Cursor { since, id })
    }

    /// Up to `limit` changes to one of `verdicts` after `after`, at `until` (Unix
    /// milliseconds) or before, in the order they happened. Each verdict is a range of the
    /// `sites_verdict` index; at most `limit` of each are read.
    pub async fn changes_after(
        &self,
        after: Cursor,
        until: i64,
        verdicts: &[Verdict],
        limit: u32,
    ) -> Result<Vec<Change>, Error> {
        let db = &self.queue.db;
        let next = cached!(
            db.dialect(),
            "SELECT verdict_since, id FROM sites WHERE verdict = ? AND verdict_since <= ? \
             AND verdict_since >= ? AND (verdict_since > ? OR (verdict_since = ? AND id > ?)) \
             ORDER BY verdict_since, id LIMIT ?"
        );
        let mut first: Vec<(i64, i64)> = Vec::new();
        for verdict in verdicts {
            let rows: Vec<(i64, i64)> = with_pool!(db, pool => {
                retry("read changes", || {
                    sqlx::query_as(next)
                        .bind(verdict.as_str())
                        .bind(until)
                        .bind(after.since)
                        .bind(after.since)
                        .bind(after.since)
                        .bind(after.id)
                        .bind(i64::from(limit))
                        .fetch_all(pool)
                })
                .await?
            });
            first.extend(rows);
        }
        first.sort_unstable();
        first.truncate(limit as usize);
        let ids: Vec<i64> = first.iter().map(|&(_, id)| id).collect();
        let mut changes = self.read_changes(&ids).await?;
        changes.sort_by_key(Change::cursor);
        Ok(changes)
    }

    /// The changes of the sites `ids`, each with the first page it was found on.
    async fn read_changes(&self, ids: &[i64]) -> Result<Vec<Change>, Error> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let db = &self.queue.db;
        let sites = cached!(db.dialect(), ids.len(), |_, n| {
            format!(
                "SELECT id, url, verdict, previous_verdict, verdict_since, http_status, \
                 error_kind, final_url, moved_to FROM sites WHERE id IN ({})",
                placeholders(n)
            )
        });
        // A referrer's number counts from 1, in the order found (`referrers.rs`).
        let found_on = cached!(db.dialect(), ids.len(), |_, n| {
            format!(
                "SELECT site_id, referrer FROM referrers WHERE n = 1 AND site_id IN ({})",
                placeholders(n)
            )
        });
        let (rows, referrers): (Vec<ChangeRow>, Vec<(i64, String)>) = with_pool!(db, pool => {
            let rows = retry("read changes", || {
                let mut q = sqlx::query_as(&sites);
                for id in ids {
                    q = q.bind(id);
                }
                q.fetch_all(pool)
            })
            .await?;
            let referrers = retry("read changes", || {
                let mut q = sqlx::query_as(&found_on);
                for id in ids {
                    q = q.bind(id);
                }
                q.fetch_all(pool)
            })
            .await?;
            (rows, referrers)
        });
        let mut referrers: HashMap<i64, String> = referrers.into_iter().collect();
        rows.into_iter()
            .map(|row| {
                Ok(Change {
                    site_id: row.id,
                    url: row.url,
                    verdict: row.verdict.parse()?,
                    previous_verdict: row
                        .previous_verdict
                        .as_deref()
                        .map(str::parse)
                        .transpose()?,
                    changed_at: row.verdict_since,
                    http_status: row.http_status.and_then(|s| u16::try_from(s).ok()),
                    error_kind: row.error_kind.as_deref().map(str::parse).transpose()?,
                    final_url: row.final_url,
                    moved_to: row.moved_to,
                    found_on: referrers.remove(&row.id),
                })
            })
            .collect()
    }

    /// Moves the cursor from `from` to `to`, storing `digest` (its id, count of changes and
    /// body) with it when there is one, in one transaction.
    pub async fn advance(
        &self,
        from: Cursor,
        to: Cursor,
        digest: Option<(&str, i32, &str)>,
    ) -> Result<Advanced, Error> {
        let db = &self.queue.db;
        let moved = cached!(
            db.dialect(),
            "UPDATE notifier SET since_ms = ?, after_id = ? \
             WHERE id = 1 AND since_ms = ? AND after_id = ?"
        );
        let insert = cached!(
            db.dialect(),
            "INSERT INTO notify_digests (digest_id, changes, body, created_at) \
             VALUES (?, ?, ?, {now})"
        );
        let stored = cached!(
            db.dialect(),
            "SELECT seq, digest_id, changes, body, attempts FROM notify_digests WHERE digest_id = ?"
        );
        Ok(with_pool!(db, pool => {
            retry("store a digest", || async {
                let mut tx = pool.begin().await?;
                let n = sqlx::query(moved)
                    .bind(to.since)
                    .bind(to.id)
                    .bind(from.since)
                    .bind(from.id)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                if n != 1 {
                    tx.rollback().await?;
                    return Ok(Advanced::Lost);
                }
                let Some((id, changes, body)) = digest else {
                    tx.commit().await?;
                    return Ok(Advanced::Moved(None));
                };
                sqlx::query(insert)
                    .bind(id)
                    .bind(changes)
                    .bind(body)
                    .execute(&mut *tx)
                    .await?;
                let digest: Digest = sqlx::query_as(stored).bind(id).fetch_one(&mut *tx).await?;
                tx.commit().await?;
                Ok(Advanced::Moved(Some(digest)))
            })
            .await?
        }))
    }

    /// The oldest digest not yet acknowledged.
    pub async fn undelivered(&self) -> Result<Option<Digest>, Error> {
        let db = &self.queue.db;
        let sql = cached!(
            db.dialect(),
            "SELECT seq, digest_id, changes, body, attempts FROM notify_digests \
             WHERE delivered_at IS NULL ORDER BY seq LIMIT 1"
        );
        Ok(with_pool!(db, pool => {
            retry("read digests", || sqlx::query_as(sql).fetch_optional(pool)).await?
        }))
    }

    /// Counts a POST of digest `seq`.
    pub async fn attempted(&self, seq: i64) -> Result<(), Error> {
        let db = &self.queue.db;
        let sql = cached!(
            db.dialect(),
            "UPDATE notify_digests SET attempts = attempts + 1 WHERE seq = ?"
        );
        with_pool!(db, pool => {
            retry("count a POST", || sqlx::query(sql).bind(seq).execute(pool)).await?;
        });
        Ok(())
    }

    /// Marks digest `seq` acknowledged: it is not sent again.
    pub async fn delivered(&self, seq: i64) -> Result<(), Error> {
        let db = &self.queue.db;
        let sql = cached!(
            db.dialect(),
            "UPDATE notify_digests SET delivered_at = {now} WHERE seq = ? AND delivered_at IS NULL"
        );
        with_pool!(db, pool => {
            retry("acknowledge a digest", || sqlx::query(sql).bind(seq).execute(pool)).await?;
        });
        Ok(())
    }

    /// Deletes the digests acknowledged longer ago than `older_than`; returns how many.
    pub async fn prune(&self, older_than: Duration) -> Result<u64, Error> {
        let db = &self.queue.db;
        let sql = cached!(
            db.dialect(),
            "DELETE FROM notify_digests WHERE delivered_at < {now} - ?"
        );
        Ok(with_pool!(db, pool => {
            retry("prune digests", || {
                sqlx::query(sql).bind(millis(older_than)).execute(pool)
            })
            .await?
            .rows_affected()
        }))
    }
}
