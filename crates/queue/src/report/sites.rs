//! Pages of checked sites of a verdict, keyset-paginated in the order they got it, and whether
//! any (or how many) of a scope have one of some verdicts.

use super::checked::{Checked, CheckedRow, CHECKED_COLUMNS};
use super::reports::Reports;
use super::scope::{bind_scope, scope_condition, with_verdicts, After, Only, Scope, ScopeShape};
use crate::db::with_pool;
use crate::error::Error;
use crate::sql::{cached, sites_using, SitesIndex};
use crate::verdict::Verdict;

impl Reports<'_> {
    /// Up to `limit` sites with `verdict`, of `scope`, after `after`, in the order they got
    /// the verdict. The next page starts after the last site of this one ([`After::site`]).
    pub async fn checked_page(
        &self,
        verdict: Verdict,
        scope: Scope<'_>,
        after: After,
        limit: u32,
    ) -> Result<Vec<Checked>, Error> {
        let sql = cached!(self.db.dialect(), scope.shape() => ScopeShape, |dialect, shape| {
            let (only, _, _) = shape;
            let key = only.since_column();
            // Moved links through their own index: MariaDB would read the verdict's range.
            let sites = match only {
                Only::Moved => sites_using(dialect, SitesIndex::Moved),
                Only::All | Only::Confirmed | Only::MissingFragments => "sites",
            };
            // `{key} >= ?` repeats the OR's bound so that PostgreSQL starts the index range
            // there (an OR alone is a filter to it: each page read the range from its start).
            format!(
                "SELECT {CHECKED_COLUMNS} FROM {sites} WHERE verdict = ? \
                 AND {key} >= ? AND ({key} > ? OR ({key} = ? AND id > ?)) {} \
                 ORDER BY {key}, id LIMIT ?",
                scope_condition(shape)
            )
        });
        let rows: Vec<CheckedRow> = with_pool!(&self.db, pool => {
            let q = sqlx::query_as(&sql)
                .bind(verdict.as_str())
                .bind(after.since)
                .bind(after.since)
                .bind(after.since)
                .bind(after.id);
            bind_scope(q, scope).bind(i64::from(limit)).fetch_all(pool).await?
        });
        rows.into_iter().map(Checked::try_from).collect()
    }

    /// Whether any site of `scope` has one of `verdicts`: one row read at most, through the
    /// `sites_verdict` index.
    pub async fn any_checked(&self, verdicts: &[Verdict], scope: Scope<'_>) -> Result<bool, Error> {
        if verdicts.is_empty() {
            return Ok(false);
        }
        let key = (verdicts.len(), scope.shape());
        let sql = cached!(self.db.dialect(), key => (usize, ScopeShape), |_, (n, shape)| {
            format!("SELECT id FROM sites WHERE {} LIMIT 1", with_verdicts(n, shape))
        });
        let found: Option<(i64,)> = with_pool!(&self.db, pool => {
            let mut q = sqlx::query_as(&sql);
            for verdict in verdicts {
                q = q.bind(verdict.as_str());
            }
            bind_scope(q, scope).fetch_optional(pool).await?
        });
        Ok(found.is_some())
    }

    /// How many sites of `scope` have one of `verdicts`: what a report of them will hold, for
    /// formats that say it first.
    pub async fn checked_count(
        &self,
        verdicts: &[Verdict],
        scope: Scope<'_>,
    ) -> Result<u64, Error> {
        if verdicts.is_empty() {
            return Ok(0);
        }
        let key = (verdicts.len(), scope.shape());
        let sql = cached!(self.db.dialect(), key => (usize, ScopeShape), |_, (n, shape)| {
            format!("SELECT COUNT(*) FROM sites WHERE {}", with_verdicts(n, shape))
        });
        let (count,): (i64,) = with_pool!(&self.db, pool => {
            let mut q = sqlx::query_as(&sql);
            for verdict in verdicts {
                q = q.bind(verdict.as_str());
            }
            bind_scope(q, scope).fetch_one(pool).await?
        });
        Ok(count.max(0) as u64)
    }
}
