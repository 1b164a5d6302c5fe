//! Soft-404 probes shared by the fleet: the answer a host gave to a path that cannot exist,
//! by host and path pattern, so that whoever holds the host next reuses it (within a TTL)
//! rather than asking again, and counts the patterns the host was probed in against the
//! worker's per-host cap ([`Probes::probed_patterns`]). And a site's last check
//! ([`LastCheck`]), so that a soft 404 turns a site that was alive dead only once a later
//! check confirms it. All of it is [`Probes`], a view of the queue ([`Queue::probes`]): a
//! store beside the queue, not a step of moving work.

use crate::db::{with_pool, Db};
use crate::error::Error;
use crate::queue::Queue;
use crate::retry::retry;
use crate::sql::{as_text, cached, replace};

/// One host's answer to a probe, as stored.
#[derive(Clone, Debug, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct ProbeRow {
    pub probe_path: String,
    /// The final status; `None` when the probe got no answer.
    pub status: Option<i32>,
    /// The final URL, the path probed masked.
    pub final_url: Option<String>,
    pub redirects: i32,
    /// The shingles two probes' bodies shared (see the worker's `check/soft404/`).
    pub fingerprint: Option<Vec<u8>>,
    /// The shingles one probe had beyond those: how much the not-found page varies.
    pub spread: i32,
    pub noindex: bool,
}

/// What the queue holds of a site's last check: whether a soft 404 found now turns a site
/// that was alive dead, or is confirmed first (the worker's `check/soft404/`).
#[derive(Clone, Debug, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct LastCheck {
    /// The verdict of the site's last final check, `None` before its first.
    pub verdict: Option<String>,
    /// Checks made in this round that ended in a transient result (a soft 404 to confirm is one).
    pub tries: i32,
}

/// The fleet's soft-404 probes, and a site's last check: the store the worker's soft-404
/// check reads and writes. Obtained from [`Queue::probes`]; it borrows the queue's database
/// handle.
#[derive(Clone, Copy, Debug)]
pub struct Probes<'q> {
    db: &'q Db,
}

impl Queue {
    /// The soft-404 probe store of this queue's database ([`Probes`]).
    pub fn probes(&self) -> Probes<'_> {
        Probes { db: &self.db }
    }
}

impl Probes<'_> {
    /// The last check of the site seeded as `url`, if the queue has it.
    pub async fn last_check(&self, url: &str) -> Result<Option<LastCheck>, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT verdict, tries FROM sites WHERE url_key = ?"
        );
        let key = crate::seed::url_key(url);
        Ok(with_pool!(&self.db, pool => {
            retry("read a site's last check", || {
                sqlx::query_as(sql).bind(&key[..]).fetch_optional(pool)
            })
            .await?
        }))
    }

    /// The probe of `host` and `pattern` made less than `ttl_ms` ago (database clock), if any.
    pub async fn load_probe(
        &self,
        host: &str,
        pattern: &str,
        ttl_ms: i64,
    ) -> Result<Option<ProbeRow>, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT probe_path, status, final_url, redirects, fingerprint, spread, noindex \
             FROM soft404_probes WHERE host = ? AND pattern = ? AND probed_at > {now} - ?"
        );
        Ok(with_pool!(&self.db, pool => {
            retry("load a soft-404 probe", || {
                sqlx::query_as(sql).bind(host).bind(pattern).bind(ttl_ms).fetch_optional(pool)
            })
            .await?
        }))
    }

    /// The patterns `host` was probed in less than `ttl_ms` ago (database clock), the root's
    /// included: what the fleet spent of the host's cap on directory probes. The primary key
    /// `(host, pattern)` serves it.
    pub async fn probed_patterns(&self, host: &str, ttl_ms: i64) -> Result<Vec<String>, Error> {
        // MySQL's `pattern` compares as bytes (utf8mb4_bin).
        let sql = cached!(self.db.dialect(), |dialect| {
            format!(
                "SELECT {} FROM soft404_probes WHERE host = ? AND probed_at > {{now}} - ?",
                as_text(dialect, "pattern")
            )
        });
        Ok(with_pool!(&self.db, pool => {
            retry("list a host's soft-404 probes", || {
                sqlx::query_scalar(sql).bind(host).bind(ttl_ms).fetch_all(pool)
            })
            .await?
        }))
    }

    /// Stores (or replaces) the probe of `host` and `pattern`, stamped now.
    pub async fn save_probe(&self, host: &str, pattern: &str, row: &ProbeRow) -> Result<(), Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
            replace(
                dialect,
                "soft404_probes",
                &["host", "pattern"],
                &[
                    "probe_path",
                    "status",
                    "final_url",
                    "redirects",
                    "fingerprint",
                    "spread",
                    "noindex",
                    "probed_at",
                ],
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, {now})",
            )
        });
        with_pool!(&self.db, pool => {
            retry("save a soft-404 probe", || {
                sqlx::query(sql)
                    .bind(host)
                    .bind(pattern)
                    .bind(&row.probe_path)
                    .bind(row.status)
                    .bind(row.final_url.as_deref())
                    .bind(row.redirects)
                    .bind(row.fingerprint.as_deref())
                    .bind(row.spread)
                    .bind(row.noindex)
                    .execute(pool)
            })
            .await?;
        });
        Ok(())
    }
}
