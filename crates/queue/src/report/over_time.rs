//! The crawl over time, for the dashboard's plots: the verdicts given, and the checks each
//! worker made, per bucket of `checked_at` (the whole crawl, however long ago it began,
//! whichever dashboard asks). A site counts once, with its current verdict at the time of its
//! last check: a recheck moves it to its new bucket, and a site made pending again by
//! `--recheck-after` leaves the plot until it is checked again.
//!
//! A done site keeps `next_check_at = checked_at` (see the schema), so the rows from a time on
//! are a range of the `sites_due` index's done part: a query reads the sites checked in the
//! window asked for, not the table. `checked_by` (which worker gave the verdict) is NULL for
//! the verdicts decided for a whole host at once, and for those written before it existed.

use super::reports::Reports;
use crate::db::with_pool;
use crate::error::Error;
use crate::sql::{as_text, cached, int_div, sites_using_on_sqlite_too, SitesIndex};
use crate::verdict::Verdict;

/// The sites checked since `from` with the same verdict, in one bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerdictsIn {
    /// The bucket's number: it starts at `from + bucket * bucket_ms`.
    pub bucket: i64,
    pub verdict: Verdict,
    pub sites: i64,
}

/// The sites a worker checked (`None`: decided for their host, no check), in one bucket.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct ChecksIn {
    pub bucket: i64,
    pub worker: Option<String>,
    pub sites: i64,
}

/// The `FROM … WHERE` of both: the done sites checked at `from` or later (binds: from, from),
/// through the due index's done part.
fn checked_since(dialect: crate::dialect::Dialect) -> String {
    let sites = sites_using_on_sqlite_too(dialect, SitesIndex::Due);
    format!("FROM {sites} WHERE state = {{done}} AND next_check_at >= ? AND checked_at >= ?")
}

impl Reports<'_> {
    /// When the first of the done sites was checked, Unix milliseconds; none before any is.
    pub async fn first_checked_at(&self) -> Result<Option<i64>, Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
            let sites = sites_using_on_sqlite_too(dialect, SitesIndex::Due);
            format!("SELECT MIN(next_check_at) FROM {sites} WHERE state = {{done}}")
        });
        let first: Option<i64> = with_pool!(&self.db, pool => {
            sqlx::query_scalar(sql).fetch_one(pool).await?
        });
        Ok(first)
    }

    /// The sites checked at `from` or later, per verdict and per bucket of `bucket_ms`.
    pub async fn verdicts_over_time(
        &self,
        from: i64,
        bucket_ms: i64,
    ) -> Result<Vec<VerdictsIn>, Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
            format!(
                "SELECT (checked_at - ?) {div} ? AS bucket, verdict, COUNT(*) AS sites {from} \
                 GROUP BY bucket, verdict",
                div = int_div(dialect),
                from = checked_since(dialect)
            )
        });
        let rows: Vec<(i64, String, i64)> = with_pool!(&self.db, pool => {
            sqlx::query_as(sql).bind(from).bind(bucket_ms).bind(from).bind(from).fetch_all(pool).await?
        });
        rows.into_iter()
            .map(|(bucket, verdict, sites)| {
                Ok(VerdictsIn {
                    bucket,
                    verdict: verdict.parse()?,
                    sites,
                })
            })
            .collect()
    }

    /// The sites checked at `from` or later, per worker and per bucket of `bucket_ms`.
    pub async fn checks_over_time(
        &self,
        from: i64,
        bucket_ms: i64,
    ) -> Result<Vec<ChecksIn>, Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
            format!(
                "SELECT (checked_at - ?) {div} ? AS bucket, {worker} AS worker, COUNT(*) AS sites \
                 {from} GROUP BY bucket, checked_by",
                div = int_div(dialect),
                worker = as_text(dialect, "checked_by"),
                from = checked_since(dialect)
            )
        });
        let rows: Vec<ChecksIn> = with_pool!(&self.db, pool => {
            sqlx::query_as(sql).bind(from).bind(bucket_ms).bind(from).bind(from).fetch_all(pool).await?
        });
        Ok(rows)
    }
}
