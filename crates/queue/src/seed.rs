//! Loading URLs: multi-row inserts that skip URLs already known.

use std::borrow::Cow;

use sha2::{Digest, Sha256};

use crate::db::with_pool;
use crate::dialect::Dialect;
use crate::error::Error;
use crate::parts::part_of;
use crate::queue::Queue;
use crate::retry::retry;
use crate::sql::{cached, insert_ignore, placeholders, sites_using_on_sqlite_too, SitesIndex};

/// Rows per INSERT: 6 parameters each, 30,000 in all, under SQLite's 32,766 and the 65,535 of
/// MySQL and PostgreSQL. A statement is a commit: on SQLite each one writes every index page it
/// touched to the log again, and the unique key's pages are touched at random, so fewer, larger
/// statements write the log less (a seed of 100,000 URLs: 0.47 s of system time in chunks of
/// 1,000, 0.18 s in chunks of 5,000).
pub const SEED_CHUNK: usize = 5000;

/// New sites start due at a moment up to this far in the past, picked by a hash of the URL.
/// Claims take due sites oldest first, so a batch gets a mix of hosts rather than hundreds of
/// URLs of one site in a row (lists are often sorted), which per-host politeness would slow.
pub(crate) const SPREAD_MS: i64 = 1_000_000;

/// How far in the past a new site with this key is due: [`SPREAD_MS`] at most, by the key's
/// first bytes (a hash of the URL).
fn spread(key: &[u8; 16]) -> i64 {
    i64::from(u32::from_le_bytes([key[0], key[1], key[2], key[3]])) % SPREAD_MS
}

/// A normalized URL to load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSite {
    pub url: String,
    pub host: String,
}

/// What a seed did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seeded {
    pub added: u64,
    /// Already in the queue (or repeated in the input); their results are kept.
    pub known: u64,
    /// Known sites made due again (with `recheck`).
    pub rechecked: u64,
}

impl std::ops::AddAssign for Seeded {
    fn add_assign(&mut self, other: Seeded) {
        self.added += other.added;
        self.known += other.known;
        self.rechecked += other.rechecked;
    }
}

/// The unique key of a normalized URL: the first 16 bytes of its SHA-256. A URL may be 8 KiB,
/// too long for a unique index; 128 bits make a collision in ten million URLs about 1e-25 likely.
pub fn url_key(url: &str) -> [u8; 16] {
    let digest = Sha256::digest(url.as_bytes());
    digest[..16].try_into().expect("SHA-256 is 32 bytes")
}

impl Queue {
    /// Adds `sites`, skipping URLs already known. With `recheck`, known sites that are done (or
    /// waiting for a retry) become due now; claimed ones are left to their worker.
    pub async fn seed(&self, sites: &[NewSite], recheck: bool) -> Result<Seeded, Error> {
        let mut seeded = Seeded::default();
        for chunk in sites.chunks(SEED_CHUNK) {
            let keys: Vec<[u8; 16]> = chunk.iter().map(|s| url_key(&s.url)).collect();
            let added = self.insert(chunk, &keys).await?;
            seeded.added += added;
            seeded.known += chunk.len() as u64 - added;
            if recheck && added < chunk.len() as u64 {
                seeded.rechecked += self.recheck_keys(&keys).await?;
            }
        }
        Ok(seeded)
    }

    async fn insert(&self, chunk: &[NewSite], keys: &[[u8; 16]]) -> Result<u64, Error> {
        let sql = cached!(self.db.dialect(), chunk.len(), |dialect, n| {
            let row = "(?, ?, ?, ?, ?, ?)";
            insert_ignore(
                dialect,
                &format!(
                    "INTO sites (url, url_key, host, part, next_check_at, created_at) VALUES {}",
                    vec![row; n].join(", ")
                ),
            )
        });
        // In the order they will be claimed (earliest due first), so that the rows a claim
        // takes from this chunk are neighbours in the table, not scattered over it.
        let mut rows: Vec<(&NewSite, &[u8; 16], i64)> = chunk
            .iter()
            .zip(keys)
            .map(|(site, key)| (site, key, spread(key)))
            .collect();
        rows.sort_by_key(|&(_, _, spread)| std::cmp::Reverse(spread));
        // The database's clock, read once for the chunk and bound, not written as `{now}` in
        // every row: SQLite compares each constant expression of a statement with every other
        // when it prepares it, which for 10,000 of them cost more than the inserts.
        let now = crate::queue::now(&self.db).await?;
        Ok(with_pool!(&self.db, pool => {
            retry("seed", || {
                let mut q = sqlx::query(&sql);
                for &(site, key, spread) in &rows {
                    q = q
                        .bind(&site.url)
                        .bind(&key[..])
                        .bind(&site.host)
                        .bind(part_of(&site.host))
                        .bind(now - spread)
                        .bind(now);
                }
                q.execute(pool)
            })
            .await?
            .rows_affected()
        }))
    }

    async fn recheck_keys(&self, keys: &[[u8; 16]]) -> Result<u64, Error> {
        let sql = due_again(self.db.dialect(), keys.len());
        Ok(with_pool!(&self.db, pool => {
            retry("recheck", || {
                let mut q = sqlx::query(&sql);
                for key in keys {
                    q = q.bind(&key[..]);
                }
                q.execute(pool)
            })
            .await?
            .rows_affected()
        }))
    }
}

/// Makes `n` known sites (`url_key IN (…)`) due again now (`crawler-seed --recheck`): those
/// done, and those pending but due later.
pub(crate) fn due_again(dialect: Dialect, n: usize) -> Cow<'static, str> {
    cached!(dialect, n, |dialect, n| {
        format!(
            "UPDATE {} SET state = {{pending}}, tries = 0, next_check_at = {{now}} \
             WHERE url_key IN ({}) \
             AND (state = {{done}} OR (state = {{pending}} AND next_check_at > {{now}}))",
            sites_using_on_sqlite_too(dialect, SitesIndex::UrlKey),
            placeholders(n)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_key_is_stable_and_distinct() {
        assert_eq!(url_key("https://a.example/"), url_key("https://a.example/"));
        assert_ne!(url_key("https://a.example/"), url_key("https://b.example/"));
    }
}
