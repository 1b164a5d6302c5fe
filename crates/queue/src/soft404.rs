//! Soft-404 probes shared by the fleet: the answer a host gave to a path that cannot exist,
//! by host and path pattern, so that whoever holds the host next reuses it (within a TTL)
//! rather than asking again.

use crate::db::with_pool;
use crate::error::Error;
use crate::queue::Queue;
use crate::retry::retry;
use crate::sql::replace;

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

impl Queue {
    /// The probe of `host` and `pattern` made less than `ttl_ms` ago (database clock), if any.
    pub async fn load_probe(
        &self,
        host: &str,
        pattern: &str,
        ttl_ms: i64,
    ) -> Result<Option<ProbeRow>, Error> {
        let sql = self.statement(
            "SELECT probe_path, status, final_url, redirects, fingerprint, spread, noindex \
             FROM soft404_probes WHERE host = ? AND pattern = ? AND probed_at > {now} - ?",
        );
        Ok(with_pool!(&self.db, pool => {
            retry("load a soft-404 probe", || {
                sqlx::query_as(&sql).bind(host).bind(pattern).bind(ttl_ms).fetch_optional(pool)
            })
            .await?
        }))
    }

    /// Stores (or replaces) the probe of `host` and `pattern`, stamped now.
    pub async fn save_probe(&self, host: &str, pattern: &str, row: &ProbeRow) -> Result<(), Error> {
        let sql = self.statement(&replace(
            self.db.dialect(),
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
        ));
        with_pool!(&self.db, pool => {
            retry("save a soft-404 probe", || {
                sqlx::query(&sql)
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
