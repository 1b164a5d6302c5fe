//! Dead confirmed over time: the `--confirm N:SPAN` policy (InternetArchiveBot calls a link dead
//! after three dead results at least three days apart; an alive or inconclusive result starts
//! over).
//!
//! Every final write-back keeps a site's streak, policy or not (`complete.rs`): `dead_streak`
//! counts its dead results in a row and `dead_since` is when the first of them was stored; any
//! other verdict (alive, blocked, unreachable, error) clears both. Under a policy, a dead site
//! that is not confirmed yet gets `confirm_check_at`, one interval (SPAN/N) later; the reaper
//! makes it due again then ([`Reaping::reap`](crate::Reaping::reap)), so it is checked again
//! whether or not the crawl rechecks anything else. A write-back whose site has at least N dead
//! results in a row over at least SPAN (from the streak's first result to this one, by the
//! database's clock) stamps `confirmed_at` and schedules nothing more. With checks SPAN/N apart
//! that is the (N+1)th result: the first, then N rechecks, so the streak spans SPAN.
//!
//! The policy is the worker's (give every worker the same one); the report only reads
//! `confirmed_at`, so `crawler-report --dead --confirmed` needs no flag of its own.

use crate::config::Confirm;
use crate::db::{with_pool, Db};
use crate::queue::millis;
use crate::retry::retry;
use crate::sql::{cached, owned_rows, owned_rows_binds, sites_using, SitesIndex};
use crate::verdict::Verdict;

/// Stamps `confirmed_at` on the sites of `rows` (each a site's id and the token of the
/// claim that just wrote it dead) whose streak now meets the policy; returns how many.
pub(crate) async fn confirm_dead(
    db: &Db,
    policy: Confirm,
    rows: &[(i64, i64)],
) -> Result<u64, sqlx::Error> {
    if rows.is_empty() {
        return Ok(0);
    }
    let sql = cached!(db.dialect(), rows.len(), |dialect, n| {
        format!(
            "UPDATE {} SET confirmed_at = {{now}}, confirm_check_at = NULL \
             WHERE {} AND verdict = ? AND confirmed_at IS NULL \
             AND dead_streak >= ? AND {{now}} - dead_since >= ?",
            sites_using(dialect, SitesIndex::Primary),
            owned_rows(dialect, "{done}", n)
        )
    });
    let confirmed = with_pool!(db, pool => {
        retry("confirm dead sites", || {
            let mut q = sqlx::query(&sql);
            for value in owned_rows_binds(rows.iter().copied()) {
                q = q.bind(value);
            }
            q.bind(Verdict::Dead.as_str())
                .bind(i64::from(policy.results))
                .bind(millis(policy.span))
                .execute(pool)
        })
        .await?
        .rows_affected()
    });
    Ok(confirmed)
}
