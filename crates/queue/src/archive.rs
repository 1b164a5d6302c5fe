//! Archived copies of dead links (`crawler-worker --archive-lookup`): what is left to look up,
//! and where the answer is kept.
//!
//! The answer is kept on the site's row (`archived_url`, `archived_at`, and
//! `archive_checked_at` for when it was asked, found or not), so a URL is looked up once
//! however many workers and rounds see it dead: the row is the cache. One process of the fleet
//! looks up at a time, the holder of the `archive` lease, so the archive sees one polite client.
//! These columns are not the verdict's: a write-back never touches them, so a lookup needs no
//! claim. The view [`Archive`] ([`Queue::archive`]).

use std::time::Duration;

use crate::db::with_pool;
use crate::error::Error;
use crate::queue::Queue;
use crate::retry::retry;
use crate::sql::cached;
use crate::verdict::Verdict;

/// The singleton lease under which one process of the fleet looks up archived copies.
const ARCHIVER: &str = "archive";

/// A dead site whose archived copy was not looked up yet.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct ToArchive {
    pub id: i64,
    pub url: String,
    /// Unix milliseconds: the copy to ask for is the closest to this, the last time the site
    /// was seen alive (or, if never, its check).
    pub wanted_at: i64,
}

/// What the archive has of a URL: its closest copy, and that copy's time (Unix milliseconds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Archived {
    pub url: String,
    pub at: Option<i64>,
}

/// The archived copies of dead links: the lease of the one process that looks them up, what
/// is left to look up, and the answers. Obtained from [`Queue::archive`]; it borrows the queue.
#[derive(Clone, Copy, Debug)]
pub struct Archive<'q> {
    queue: &'q Queue,
}

impl Queue {
    /// The archived copies of dead links ([`Archive`]).
    pub fn archive(&self) -> Archive<'_> {
        Archive { queue: self }
    }
}

impl Archive<'_> {
    /// Takes or renews the archive lease for `owner` for `ttl`: whether `owner` should look up
    /// archived copies now.
    pub async fn lead(&self, owner: &str, ttl: Duration) -> Result<bool, Error> {
        self.queue.leases().lead(ARCHIVER, owner, ttl).await
    }

    /// Gives the archive lease up (at a clean shutdown).
    pub async fn resign(&self, owner: &str) -> Result<(), Error> {
        self.queue.leases().resign(ARCHIVER, owner).await
    }

    /// Up to `limit` dead sites not looked up yet, with ids above `after`, in id order.
    pub async fn to_archive(&self, after: i64, limit: u32) -> Result<Vec<ToArchive>, Error> {
        let sql = cached!(
            self.queue.db.dialect(),
            "SELECT id, url, COALESCE(last_alive_at, checked_at, 0) AS wanted_at FROM sites \
             WHERE verdict = ? AND id > ? AND archive_checked_at IS NULL \
             ORDER BY verdict, id LIMIT ?"
        );
        let rows = with_pool!(&self.queue.db, pool => {
            retry("read dead sites to look up", || {
                sqlx::query_as(sql)
                    .bind(Verdict::Dead.as_str())
                    .bind(after)
                    .bind(i64::from(limit))
                    .fetch_all(pool)
            })
            .await?
        });
        Ok(rows)
    }

    /// Keeps what the archive answered for site `id`: its copy, or none (then it is not asked
    /// again either).
    pub async fn store(&self, id: i64, found: Option<&Archived>) -> Result<(), Error> {
        let sql = cached!(
            self.queue.db.dialect(),
            "UPDATE sites SET archived_url = ?, archived_at = ?, archive_checked_at = {now} \
             WHERE id = ?"
        );
        with_pool!(&self.queue.db, pool => {
            retry("store an archived copy", || {
                sqlx::query(sql)
                    .bind(found.map(|f| f.url.as_str()))
                    .bind(found.and_then(|f| f.at))
                    .bind(id)
                    .execute(pool)
            })
            .await?;
        });
        Ok(())
    }
}
