//! Referrers for the report: a page of sites' referrers, and the dead links grouped by the page
//! that carries them (`crawler-report --dead --by-page`). What they are, and how they are
//! written, is `crate::referrers`.

use std::collections::HashMap;

use super::reports::Reports;
use crate::db::with_pool;
use crate::error::Error;
use crate::sql::{cached, placeholders};

/// A dead link on a page, for `--by-page`.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct DeadOnPage {
    pub referrer: String,
    pub site_id: i64,
    pub url: String,
    pub verdict: String,
    pub http_status: Option<i32>,
    pub error_kind: Option<String>,
}

impl Reports<'_> {
    /// The kept referrers of the sites `ids`, each in the order found.
    pub async fn referrers_of(&self, ids: &[i64]) -> Result<HashMap<i64, Vec<String>>, Error> {
        let mut found: HashMap<i64, Vec<String>> = HashMap::new();
        for chunk in ids.chunks(1000) {
            let sql = cached!(self.db.dialect(), chunk.len(), |_, n| {
                format!(
                    "SELECT site_id, referrer FROM referrers WHERE site_id IN ({}) ORDER BY site_id, n",
                    placeholders(n)
                )
            });
            let rows: Vec<(i64, String)> = with_pool!(&self.db, pool => {
                let mut q = sqlx::query_as(&sql);
                for id in chunk {
                    q = q.bind(id);
                }
                q.fetch_all(pool).await?
            });
            for (id, referrer) in rows {
                found.entry(id).or_default().push(referrer);
            }
        }
        Ok(found)
    }

    /// Up to `limit` (referrer, dead link) pairs after `after` (a referrer and a site id), in
    /// referrer order, then site id: keyset pages of the dead links grouped by page.
    pub async fn dead_by_page(
        &self,
        after: Option<(&str, i64)>,
        limit: u32,
    ) -> Result<Vec<DeadOnPage>, Error> {
        fn page(after_sql: &str) -> String {
            format!(
                "SELECT r.referrer, r.site_id, s.url, s.verdict, s.http_status, s.error_kind \
                 FROM referrers r JOIN sites s ON s.id = r.site_id \
                 WHERE s.verdict = {{dead}} {after_sql} ORDER BY r.referrer, r.site_id LIMIT ?"
            )
        }
        let sql = match after {
            Some(_) => cached!(self.db.dialect(), |_| {
                page("AND (r.referrer > ? OR (r.referrer = ? AND r.site_id > ?))")
            }),
            None => cached!(self.db.dialect(), |_| page("")),
        };
        Ok(with_pool!(&self.db, pool => {
            let mut q = sqlx::query_as(sql);
            if let Some((referrer, id)) = after {
                q = q.bind(referrer).bind(referrer).bind(id);
            }
            q.bind(i64::from(limit)).fetch_all(pool).await?
        }))
    }
}
