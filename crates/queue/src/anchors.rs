//! Fragments (`page#section`): a page's anchors, read once for the fleet. A link to a section
//! is a site of its own (its URL keeps the fragment); the worker that checks it decides it from
//! the page's anchors, stored once per page, keyed by the page's URL without fragment, with the
//! page's own result (which every fragment of it takes). Whichever worker checks
//! `page#a`, `page#b`…, the page is read once (within [`ANCHORS_TTL_MS`]).

use crate::db::with_pool;
use crate::error::Error;
use crate::queue::Queue;
use crate::retry::retry;
use crate::seed::url_key;
use crate::sql::{cached, replace};
use crate::verdict::{ErrorKind, Verdict};

pub use crate::verdict::Fragment;

/// A page's anchors are read again after this (a recheck round reads the page again).
pub const ANCHORS_TTL_MS: i64 = 60 * 60 * 1000;

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

impl Queue {
    /// The stored anchors of `page` (a URL without fragment, as the queue stores it), read
    /// less than [`ANCHORS_TTL_MS`] ago (database clock), if any.
    pub async fn page_anchors(&self, page: &str) -> Result<Option<PageAnchors>, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT verdict, http_status, error_kind, final_url, redirects, anchors \
             FROM anchors WHERE page_key = ? AND read_at > {now} - ?"
        );
        let key = url_key(page);
        let row: Option<AnchorsRow> = with_pool!(&self.db, pool => {
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

    /// Stores (or replaces) the result and anchors of `page`, stamped now.
    pub async fn save_page_anchors(&self, page: &str, read: &PageAnchors) -> Result<(), Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
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
        let key = url_key(page);
        with_pool!(&self.db, pool => {
            retry("save a page's anchors", || {
                sqlx::query(sql)
                    .bind(&key[..])
                    .bind(page)
                    .bind(read.verdict.as_str())
                    .bind(read.status.map(i32::from))
                    .bind(read.error_kind.map(|k| k.as_str()))
                    .bind(read.final_url.as_deref())
                    .bind(read.redirects as i32)
                    .bind(read.anchors.as_deref())
                    .execute(pool)
            })
            .await?;
        });
        Ok(())
    }
}

impl Queue {
    /// Whether `page` (a URL without fragment) is a page of a crawl still to be read: its read
    /// stores its anchors (the worker's `Follow::check_page`), so its fragments wait for it.
    pub async fn page_to_read(&self, page: &str) -> Result<bool, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT COUNT(*) FROM sites \
             WHERE url_key = ? AND crawl IS NOT NULL AND state IN ({pending}, {claimed})"
        );
        let key = url_key(page);
        let n: i64 = with_pool!(&self.db, pool => {
            retry("find a fragment's page", || {
                sqlx::query_scalar(sql).bind(&key[..]).fetch_one(pool)
            })
            .await?
        });
        Ok(n > 0)
    }
}
