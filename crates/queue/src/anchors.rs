//! Fragments (`page#section`): a page's anchors, read once for the fleet. A link to a section
//! is a site of its own (its URL keeps the fragment); the worker that checks it decides it from
//! the page's anchors, stored once per page, keyed by the page's URL without fragment, with the
//! page's own result (which every fragment of it takes). Whichever worker checks
//! `page#a`, `page#b`…, the page is read once (within [`ANCHORS_TTL_MS`]).
//!
//! A link to a section of a page of a crawl that is still to be read is held for that read
//! (`fragment_holds`): [`Follow::add_links`](crate::Follow::add_links) adds it due only after
//! [`HOLD_FOR_PAGE_MS`], and the page's read, storing its anchors (with its links,
//! [`Follow::add_pages`](crate::Follow::add_pages), or alone, [`Anchors::save`]),
//! makes it due in the same transaction. So a fragment is not claimed before its page has been
//! read, and is then decided from the stored anchors with no wait and no request. The hold's
//! end is only the fallback of a page whose read stores nothing (robots.txt forbids it, or its
//! read keeps failing): its fragments are then checked as any other. The store is [`Anchors`],
//! a view of the queue ([`Queue::anchors`]).

use std::borrow::Cow;

use crate::db::{with_pool, Db};
use crate::dialect::Dialect;
use crate::error::Error;
use crate::queue::Queue;
use crate::retry::retry;
use crate::seed::url_key;
use crate::sql::{
    cached, for_update, insert_ignore, placeholders, sites_using_on_sqlite_too, SitesIndex,
};
use crate::verdict::{ErrorKind, Verdict};

pub use crate::verdict::Fragment;

/// A page's anchors are read again after this (a recheck round reads the page again).
pub const ANCHORS_TTL_MS: i64 = 60 * 60 * 1000;

/// The longest a link to a section waits for its page's read to store the page's anchors.
pub const HOLD_FOR_PAGE_MS: i64 = 30_000;

/// Held fragments made due per statement.
pub(crate) const CHUNK: usize = 512;

/// A page's result and anchors, as the fleet stores them for its fragments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageAnchors {
    pub verdict: Verdict,
    pub status: Option<u16>,
    pub error_kind: Option<ErrorKind>,
    pub final_url: Option<String>,
    pub redirects: u32,
    /// One a line (`crawler_links::Anchors::to_text`); `None` when the page was not read
    /// (not alive, not HTML): its fragments take its verdict and are neither found nor missing.
    pub anchors: Option<String>,
}

#[derive(sqlx::FromRow)]
struct AnchorsRow {
    verdict: String,
    http_status: Option<i32>,
    error_kind: Option<String>,
    final_url: Option<String>,
    redirects: i32,
    anchors: Option<String>,
}

/// The fleet's store of pages' anchors, and the fragments held for their pages' reads.
/// Obtained from [`Queue::anchors`]; it borrows the queue's database handle.
#[derive(Clone, Copy, Debug)]
pub struct Anchors<'q> {
    db: &'q Db,
}

impl Queue {
    /// The store of pages' anchors in this queue's database ([`Anchors`]).
    pub fn anchors(&self) -> Anchors<'_> {
        Anchors { db: &self.db }
    }
}

impl Anchors<'_> {
    /// The stored anchors of `page` (a URL without fragment, as the queue stores it), read
    /// less than [`ANCHORS_TTL_MS`] ago (database clock), if any.
    pub async fn of_page(&self, page: &str) -> Result<Option<PageAnchors>, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT verdict, http_status, error_kind, final_url, redirects, anchors \
             FROM anchors WHERE page_key = ? AND read_at > {now} - ?"
        );
        let key = url_key(page);
        let row: Option<AnchorsRow> = with_pool!(self.db, pool => {
            retry("read a page's anchors", || {
                sqlx::query_as(sql).bind(&key[..]).bind(ANCHORS_TTL_MS).fetch_optional(pool)
            })
            .await?
        });
        let Some(row) = row else { return Ok(None) };
        Ok(Some(PageAnchors {
            verdict: row.verdict.parse()?,
            status: row.http_status.and_then(|s| u16::try_from(s).ok()),
            error_kind: row.error_kind.as_deref().map(str::parse).transpose()?,
            final_url: row.final_url,
            redirects: u32::try_from(row.redirects).unwrap_or(0),
            anchors: row.anchors,
        }))
    }

    /// Stores (or replaces) the result and anchors of `page`, stamped now, and in the same
    /// transaction makes the fragments held for it due ([`HOLD_FOR_PAGE_MS`]); returns how
    /// many it made due. (A page of a crawl stores them with its links instead:
    /// [`Follow::add_pages`](crate::Follow::add_pages).)
    pub async fn save(&self, page: &str, read: &PageAnchors) -> Result<u64, Error> {
        let lock = page_lock(self.db.dialect());
        let key = url_key(page);
        Ok(with_pool!(self.db, pool => {
            retry("save a page's anchors", || async {
                let mut tx = pool.begin().await?;
                if let Some(lock) = lock {
                    sqlx::query(lock).bind(&key[..]).fetch_all(&mut *tx).await?;
                }
                let (released, _) = store_anchors!(self.db.dialect(), tx, page, read, false);
                tx.commit().await?;
                Ok::<u64, sqlx::Error>(released)
            })
            .await?
        }))
    }
}

/// Stores `$read` ([`PageAnchors`]), the result and anchors of the page `$page` (its URL),
/// stamped now, in the transaction `$tx`, and makes the fragments held for it due; evaluates
/// to how many it made due, and the held fragments it left to be decided from `$read` by the
/// caller (`Queue::complete_held`): when `$decide` and the page was read (alive, with
/// anchors), those still pending and never checked. They are not made due: should the caller
/// not write them, they are claimed at their hold's end ([`HOLD_FOR_PAGE_MS`]), as the
/// fragments of a page whose read stores nothing. On a server the page's row is locked first
/// (see [`pages_to_read`]): [`page_lock`], or a fence that writes it.
macro_rules! store_anchors {
    ($dialect:expr, $tx:ident, $page:expr, $read:expr, $decide:expr) => {{
        use $crate::anchors::{held_to_decide, release, CHUNK};
        use $crate::sql::{cached, padded_refs, replace};
        let dialect: $crate::dialect::Dialect = $dialect;
        let page: &str = $page;
        let read: &$crate::anchors::PageAnchors = $read;
        let key = $crate::seed::url_key(page);
        let sql = cached!(dialect, |dialect| {
            replace(
                dialect,
                "anchors",
                &["page_key"],
                &[
                    "page_url",
                    "verdict",
                    "http_status",
                    "error_kind",
                    "final_url",
                    "redirects",
                    "anchors",
                    "read_at",
                ],
                "(?, ?, ?, ?, ?, ?, ?, ?, {now})",
            )
        });
        let held = cached!(
            dialect,
            "SELECT site_key FROM fragment_holds WHERE page_key = ?"
        );
        let drop_holds = cached!(dialect, "DELETE FROM fragment_holds WHERE page_key = ?");
        sqlx::query(sql)
            .bind(&key[..])
            .bind(page)
            .bind(read.verdict.as_str())
            .bind(read.status.map(i32::from))
            .bind(read.error_kind.map(|k| k.as_str()))
            .bind(read.final_url.as_deref())
            .bind(read.redirects as i32)
            .bind(read.anchors.as_deref())
            .execute(&mut *$tx)
            .await?;
        let mut sites: Vec<Vec<u8>> = sqlx::query_scalar(held)
            .bind(&key[..])
            .fetch_all(&mut *$tx)
            .await?;
        let holds = !sites.is_empty();
        let mut decide: Vec<$crate::queue::Site> = Vec::new();
        let read_page = read.verdict == $crate::verdict::Verdict::Alive && read.anchors.is_some();
        if $decide && read_page && holds {
            decide = sqlx::query_as(&held_to_decide(dialect))
                .bind(&key[..])
                .fetch_all(&mut *$tx)
                .await?;
            let keys: std::collections::HashSet<[u8; 16]> = decide
                .iter()
                .map(|site| $crate::seed::url_key(&site.url))
                .collect();
            sites.retain(|site| !keys.contains(&site[..]));
        }
        let mut released: u64 = 0;
        for chunk in sites.chunks(CHUNK) {
            let chunk = padded_refs(chunk);
            let sql = release(dialect, chunk.len());
            let mut q = sqlx::query(&sql);
            for site in chunk {
                q = q.bind(&site[..]);
            }
            released += q.execute(&mut *$tx).await?.rows_affected();
        }
        if holds {
            sqlx::query(drop_holds)
                .bind(&key[..])
                .execute(&mut *$tx)
                .await?;
        }
        (released, decide)
    }};
}
pub(crate) use store_anchors;

/// Makes `n` held fragments (`url_key IN (…)`) due now, those still pending.
pub(crate) fn release(dialect: Dialect, n: usize) -> Cow<'static, str> {
    cached!(dialect, n, |dialect, n| {
        format!(
            "UPDATE {} SET next_check_at = {{now}} WHERE state = {{pending}} AND url_key IN ({})",
            sites_using_on_sqlite_too(dialect, SitesIndex::UrlKey),
            placeholders(n)
        )
    })
}

/// Of the fragments held for a page (`page_key = ?`), the sites still pending and never
/// checked, as a claim reads them (with no claim's token: 0): their page's read decides them.
pub(crate) fn held_to_decide(dialect: Dialect) -> &'static str {
    cached!(dialect, |dialect| {
        format!(
            "SELECT sites.id, COALESCE(sites.claim_token, 0) AS claim_token, sites.url, \
             sites.host, sites.part, sites.tries, sites.crawl, sites.depth, sites.verdict \
             FROM fragment_holds JOIN {} ON sites.url_key = fragment_holds.site_key \
             WHERE fragment_holds.page_key = ? AND sites.state = {{pending}} \
             AND sites.verdict IS NULL",
            sites_using_on_sqlite_too(dialect, SitesIndex::UrlKey)
        )
    })
}

/// Of `n` pages (`url_key IN (…)`), those of a crawl still to be read (pending or claimed):
/// their fragments are held for them. Their rows stay locked until the holds are in, as
/// [`page_lock`] locks a page's row before its anchors are stored: a read that stores them
/// meanwhile either comes first (then they are found stored, and nothing is held) or waits,
/// and then sees the holds it must end. (SQLite has one writer at a time: no lock needed.)
pub(crate) fn pages_to_read(dialect: Dialect, n: usize) -> Cow<'static, str> {
    cached!(dialect, n, |dialect, n| {
        format!(
            "SELECT url_key FROM {} WHERE url_key IN ({}) \
             AND crawl IS NOT NULL AND state IN ({{pending}}, {{claimed}}){}",
            sites_using_on_sqlite_too(dialect, SitesIndex::UrlKey),
            placeholders(n),
            for_update(dialect).unwrap_or_default()
        )
    })
}

/// Locks the row of a page (`url_key = ?`) whose anchors are about to be stored: see
/// [`pages_to_read`]. `None` on SQLite.
fn page_lock(dialect: Dialect) -> Option<&'static str> {
    let sql = cached!(dialect, |dialect| {
        format!(
            "SELECT id FROM sites WHERE url_key = ?{}",
            for_update(dialect).unwrap_or_default()
        )
    });
    for_update(dialect).map(|_| sql)
}

/// Of `n` pages (`page_key IN (…)`), those whose anchors are stored, read less than the bound
/// (the last parameter, [`ANCHORS_TTL_MS`]) ago.
pub(crate) fn pages_stored(dialect: Dialect, n: usize) -> Cow<'static, str> {
    cached!(dialect, n, |_, n| {
        format!(
            "SELECT page_key FROM anchors WHERE page_key IN ({}) AND read_at > {{now}} - ?",
            placeholders(n)
        )
    })
}

/// `n` rows of `fragment_holds` (page_key, site_key).
pub(crate) fn hold(dialect: Dialect, n: usize) -> Cow<'static, str> {
    cached!(dialect, n, |dialect, n| {
        insert_ignore(
            dialect,
            &format!(
                "INTO fragment_holds (page_key, site_key) VALUES {}",
                vec!["(?, ?)"; n].join(", ")
            ),
        )
    })
}

/// The key of the page of a link to a section (`page#section`), if `url` is one.
pub(crate) fn page_of_fragment(url: &str) -> Option<[u8; 16]> {
    url.split_once('#').map(|(page, _)| url_key(page))
}

impl Anchors<'_> {
    /// How many fragments are held for their pages' reads (tests: none is left after a
    /// drain, each was ended by its page's read).
    #[cfg(any(test, feature = "testing"))]
    pub async fn held_fragments(&self) -> Result<i64, Error> {
        let sql = "SELECT COUNT(*) FROM fragment_holds";
        Ok(with_pool!(self.db, pool => {
            sqlx::query_scalar(sql).fetch_one(pool).await?
        }))
    }

    /// Whether `page` (a URL without fragment) is a page of a crawl still to be read: its read
    /// stores its anchors (the worker's `SiteCheck::check_page`), so its fragments wait for it.
    pub async fn page_to_read(&self, page: &str) -> Result<bool, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT COUNT(*) FROM sites \
             WHERE url_key = ? AND crawl IS NOT NULL AND state IN ({pending}, {claimed})"
        );
        let key = url_key(page);
        let n: i64 = with_pool!(self.db, pool => {
            retry("find a fragment's page", || {
                sqlx::query_scalar(sql).bind(&key[..]).fetch_one(pool)
            })
            .await?
        });
        Ok(n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::db::tests::{sqlite_plan, sqlite_with_schema};

    #[tokio::test]
    async fn sites_by_a_list_of_url_keys_are_read_through_that_index() {
        let mut conn = sqlite_with_schema().await;
        // From a few dozen keys on, SQLite's planner, left to itself, reads these through
        // `sites_due` (`state = ?`): every pending row, for each statement.
        for n in [1, 64, 512] {
            let statements = [
                pages_to_read(Dialect::Sqlite, n),
                release(Dialect::Sqlite, n),
                crate::seed::due_again(Dialect::Sqlite, n),
            ];
            for sql in statements {
                let plan = sqlite_plan(&mut conn, &sql, n).await;
                assert!(
                    plan.lines()
                        .all(|step| step.contains("USING INDEX sites_url_key")),
                    "{n} keys: {sql}\n{plan}"
                );
            }
        }
        // A page's held fragments: its holds by their key, each site through the same index.
        let sql = held_to_decide(Dialect::Sqlite);
        let plan = sqlite_plan(&mut conn, sql, 1).await;
        let steps: Vec<&str> = plan.lines().collect();
        assert_eq!(steps.len(), 2, "{plan}");
        assert!(steps[0].contains("SEARCH fragment_holds"), "{plan}");
        assert!(
            steps[1].contains("SEARCH sites USING INDEX sites_url_key"),
            "{plan}"
        );
    }
}
