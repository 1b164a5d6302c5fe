//! Changes of verdict since a time, counted (`crawler-report --summary --changed-since`): a
//! site's current verdict began at `verdict_since`, replacing `previous_verdict` (none for its
//! first), both written by the statement that wrote the verdict. The sites whose verdict began
//! in the window are a range of the `sites_verdict` index per verdict.

use super::host_filter::{self, Shape};
use super::Reports;
use crate::db::with_pool;
use crate::error::Error;
use crate::sql::{cached, placeholders};
use crate::verdict::Verdict;
use crate::HostFilter;

/// How many sites went from one verdict to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChangeCount {
    /// None: the site's first verdict (a new link).
    pub previous: Option<Verdict>,
    pub verdict: Verdict,
    pub count: i64,
}

impl Reports<'_> {
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
