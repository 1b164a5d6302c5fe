//! Changes of verdict: counted since a time (`crawler-report --summary --changed-since`), per
//! bucket of time and the latest ones (the dashboard's link rot panel). A site's current
//! verdict began at `verdict_since`, replacing `previous_verdict` (none for its first), both
//! written by the statement that wrote the verdict; the sites whose verdict began in a window
//! are a range of the `sites_verdict` index per verdict. The verdicts they had before are rows of
//! `verdict_changes` (when each began, what it replaced), in the window a range of its
//! `verdict_changes_age` index: together, every verdict that began in the window.

use super::host_filter::{self, HostFilter, Shape};
use super::reports::Reports;
use crate::db::with_pool;
use crate::error::Error;
use crate::sql::{cached, int_div, placeholders};
use crate::verdict::{ErrorKind, Verdict};

/// How many sites went from one verdict to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChangeCount {
    /// None: the site's first verdict (a new link).
    pub previous: Option<Verdict>,
    pub verdict: Verdict,
    pub count: i64,
}

/// The verdicts that began in one bucket of time: how many began as `verdict`, replacing
/// `previous` (none: a first verdict, or a change recorded before the history kept what it
/// replaced).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChangesIn {
    /// The bucket's number: it starts at `from + bucket * bucket_ms`.
    pub bucket: i64,
    pub previous: Option<Verdict>,
    pub verdict: Verdict,
    pub sites: i64,
}

/// A site's current verdict, with when it began and what it replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changed {
    pub url: String,
    pub verdict: Verdict,
    pub previous: Option<Verdict>,
    /// Unix milliseconds.
    pub changed_at: i64,
    pub status: Option<u16>,
    pub error_kind: Option<ErrorKind>,
}

impl Reports<'_> {
    /// The verdicts among `verdicts` that began at `from` or later, the current ones and those
    /// replaced since, per bucket of `bucket_ms`, by new and previous verdict.
    pub async fn changes_over_time(
        &self,
        verdicts: &[Verdict],
        from: i64,
        bucket_ms: i64,
    ) -> Result<Vec<ChangesIn>, Error> {
        let key = verdicts.len();
        let sql = cached!(self.db.dialect(), key, |dialect, n| {
            let div = int_div(dialect);
            let verdicts = placeholders(n);
            format!(
                "SELECT (verdict_since - ?) {div} ? AS bucket, previous_verdict, verdict, COUNT(*) \
                 FROM sites WHERE verdict IN ({verdicts}) AND verdict_since >= ? \
                 GROUP BY bucket, previous_verdict, verdict \
                 UNION ALL \
                 SELECT (changed_at - ?) {div} ? AS bucket, previous_verdict, verdict, COUNT(*) \
                 FROM verdict_changes WHERE changed_at >= ? AND verdict IN ({verdicts}) \
                 GROUP BY bucket, previous_verdict, verdict"
            )
        });
        let rows: Vec<(i64, Option<String>, String, i64)> = with_pool!(&self.db, pool => {
            let mut q = sqlx::query_as(&sql).bind(from).bind(bucket_ms);
            for verdict in verdicts {
                q = q.bind(verdict.as_str());
            }
            q = q.bind(from).bind(from).bind(bucket_ms).bind(from);
            for verdict in verdicts {
                q = q.bind(verdict.as_str());
            }
            q.fetch_all(pool).await?
        });
        rows.into_iter()
            .map(|(bucket, previous, verdict, sites)| {
                Ok(ChangesIn {
                    bucket,
                    previous: previous.as_deref().map(str::parse).transpose()?,
                    verdict: verdict.parse()?,
                    sites,
                })
            })
            .collect()
    }

    /// When the first verdict that is still current or in the history began, Unix
    /// milliseconds; none before any verdict. The first entry of each verdict's range of
    /// `sites_verdict`, and of `verdict_changes_age`.
    pub async fn first_change_at(&self) -> Result<Option<i64>, Error> {
        let current = cached!(
            self.db.dialect(),
            "SELECT MIN(verdict_since) FROM sites WHERE verdict = ?"
        );
        let replaced = cached!(
            self.db.dialect(),
            "SELECT MIN(changed_at) FROM verdict_changes"
        );
        let mut first: Option<i64> = with_pool!(&self.db, pool => {
            sqlx::query_scalar(replaced).fetch_one(pool).await?
        });
        for verdict in Verdict::ALL {
            let since: Option<i64> = with_pool!(&self.db, pool => {
                sqlx::query_scalar(current).bind(verdict.as_str()).fetch_one(pool).await?
            });
            first = first.into_iter().chain(since).min();
        }
        Ok(first)
    }

    /// The `limit` sites whose current verdict began last, the latest first: the newest part
    /// of each verdict's range of `sites_verdict`, merged.
    pub async fn latest_changes(&self, limit: u32) -> Result<Vec<Changed>, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT url, verdict, previous_verdict, verdict_since, http_status, error_kind \
             FROM sites WHERE verdict = ? AND verdict_since IS NOT NULL \
             ORDER BY verdict_since DESC, id DESC LIMIT ?"
        );
        type Row = (
            String,
            String,
            Option<String>,
            i64,
            Option<i32>,
            Option<String>,
        );
        let mut rows: Vec<Row> = Vec::new();
        for verdict in Verdict::ALL {
            let latest: Vec<Row> = with_pool!(&self.db, pool => {
                sqlx::query_as(sql)
                    .bind(verdict.as_str())
                    .bind(i64::from(limit))
                    .fetch_all(pool)
                    .await?
            });
            rows.extend(latest);
        }
        rows.sort_by_key(|row| std::cmp::Reverse(row.3));
        rows.truncate(limit as usize);
        rows.into_iter()
            .map(|(url, verdict, previous, changed_at, status, kind)| {
                Ok(Changed {
                    url,
                    verdict: verdict.parse()?,
                    previous: previous.as_deref().map(str::parse).transpose()?,
                    changed_at,
                    status: status.and_then(|s| u16::try_from(s).ok()),
                    error_kind: kind.as_deref().map(str::parse).transpose()?,
                })
            })
            .collect()
    }

    /// The sites (of `host`, if given) whose verdict began at `since` (Unix milliseconds) or
    /// later, counted by previous and new verdict, first verdicts first, then in
    /// [`Verdict::ALL`]'s order.
    pub async fn change_counts(
        &self,
        since: i64,
        host: Option<&HostFilter>,
    ) -> Result<Vec<ChangeCount>, Error> {
        let verdicts = Verdict::ALL;
        let sql = cached!(self.db.dialect(), host_filter::shape(host) => Shape, |_, host| {
            format!(
                "SELECT previous_verdict, verdict, COUNT(*) FROM sites \
                 WHERE verdict IN ({}) AND verdict_since >= ? {} \
                 GROUP BY previous_verdict, verdict",
                placeholders(Verdict::ALL.len()),
                host_filter::condition(host)
            )
        });
        let rows: Vec<(Option<String>, String, i64)> = with_pool!(&self.db, pool => {
            let mut q = sqlx::query_as(&sql);
            for verdict in verdicts {
                q = q.bind(verdict.as_str());
            }
            host_filter::bind(q.bind(since), host).fetch_all(pool).await?
        });
        let mut counts = rows
            .into_iter()
            .map(|(previous, verdict, count)| {
                Ok(ChangeCount {
                    previous: previous.as_deref().map(str::parse).transpose()?,
                    verdict: verdict.parse()?,
                    count,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let order = |v: Verdict| Verdict::ALL.iter().position(|&x| x == v);
        counts.sort_by_key(|c| (c.previous.map(order), order(c.verdict)));
        Ok(counts)
    }
}
