//! Recursive checking (`crawler-seed --follow`): the crawls, and the frontier, which is the
//! `sites` table itself. A site with a `crawl` is a page of it; when a worker finds it alive
//! HTML it reads it and hands its links to [`Follow::add_links`], which in one transaction,
//! fenced by the page's claim, marks the page read (clears its `crawl`), adds the links not
//! known yet (those in scope as pages of the crawl, one link deeper), and counts the page as a
//! referrer of every link (`referrers.rs`). So a page's links are added once, whichever worker
//! read it, and before its verdict is written: a draining fleet never stops with links unseen.
//! All of it, and robots.txt shared by the fleet, is [`Follow`], a view of the queue
//! ([`Queue::follow`]); a page's anchors are the next module's, `anchors.rs`.

use std::collections::HashSet;

use sqlx::Row;

use crate::anchors::{
    hold, page_of_fragment, pages_stored, pages_to_read, store_anchors, PageAnchors,
    ANCHORS_TTL_MS, HOLD_FOR_PAGE_MS,
};
use crate::db::{with_pool, Db};
use crate::dialect::Dialect;
use crate::error::Error;
use crate::parts::part_of;
use crate::queue::Queue;
use crate::retry::retry;
use crate::seed::{url_key, NewSite};
use crate::sql::{cached, insert_ignore, insert_returning_id, padded, padded_refs, placeholders};
use crate::verdict::Fragment;

/// Rows per statement of a page's links (8 parameters each for an insert).
const CHUNK: usize = 512;

/// What `crawler-seed --follow` asked: how far the crawl goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NewCrawl {
    /// `KIND VALUE` lines (`crawler_links::Scope`): a link in any of them is followed.
    pub scopes: Vec<String>,
    /// `--include` / `--exclude` for discovered links (regular expressions).
    pub includes: Vec<String>,
    pub excludes: Vec<String>,
    /// Pages further than this many links from a start page are checked, not read.
    pub max_depth: Option<i32>,
    /// Pages read at most, fleet-wide.
    pub max_pages: Option<i64>,
    /// Followed pages obey robots.txt (`--ignore-robots` turns it off).
    pub robots: bool,
    /// Links' fragments are checked (`page#section`: a site of its own, decided from the
    /// page's anchors); `--no-fragments` turns it off.
    pub fragments: bool,
}

/// A crawl as the workers read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Crawl {
    pub id: i64,
    pub spec: NewCrawl,
}

/// Links found in one place, split by what becomes of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Links {
    /// Where they were found: a page's URL, `FILE:LINE`, a sitemap's URL; `None` for start
    /// pages, found nowhere.
    pub referrer: Option<String>,
    /// In scope: pages of the crawl (read if they are HTML), unless `--max-pages` is reached.
    pub follow: Vec<NewSite>,
    /// Only checked.
    pub check: Vec<NewSite>,
}

impl Links {
    /// Adds the site of a link: `page` to `follow` (a page of the crawl) or to `check`, and
    /// `fragment`, the site of the link's section when fragments are checked, to `check`
    /// (only checked: its page is the one read). Each URL once: `seen` holds those added.
    pub fn add(
        &mut self,
        seen: &mut HashSet<String>,
        follow: bool,
        page: NewSite,
        fragment: Option<NewSite>,
    ) {
        if seen.insert(page.url.clone()) {
            match follow {
                true => self.follow.push(page),
                false => self.check.push(page),
            }
        }
        if let Some(fragment) = fragment.filter(|f| seen.insert(f.url.clone())) {
            self.check.push(fragment);
        }
    }
}

/// Counts `referrer` on the sites of `keys` (url keys) and remembers it for them, in the
/// transaction `tx`, in `dialect`: the sites' keys sorted, so that two transactions update
/// rows in the same order and never deadlock. A macro, as the transaction's type is each
/// backend's (`with_pool!`).
macro_rules! count_referrer {
    ($dialect:expr, $tx:ident, $referrer:expr, $keys:expr) => {{
        let dialect: Dialect = $dialect;
        let mut keys: Vec<[u8; 16]> = $keys;
        keys.sort_unstable();
        keys.dedup();
        for chunk in keys.chunks(CHUNK) {
            let chunk = &padded(chunk)[..];
            let sql = cached!(dialect, chunk.len(), |_, n| {
                format!(
                    "UPDATE sites SET found_count = found_count + 1 WHERE url_key IN ({})",
                    placeholders(n)
                )
            });
            let mut q = sqlx::query(&sql);
            for key in chunk {
                q = q.bind(key.to_vec());
            }
            q.execute(&mut *$tx).await?;
            let sql = cached!(dialect, chunk.len(), |_, n| {
                format!(
                    "INSERT INTO referrers (site_id, n, referrer) \
                     SELECT id, found_count, ? FROM sites WHERE url_key IN ({}) AND found_count <= ?",
                    placeholders(n)
                )
            });
            let mut q = sqlx::query(&sql).bind($referrer);
            for key in chunk {
                q = q.bind(key.to_vec());
            }
            q.bind(crate::referrers::KEPT).execute(&mut *$tx).await?;
        }
    }};
}

/// One page's links (or a list's) in the transaction `$tx`, as [`Follow::add_found`] and
/// [`Follow::add_pages`] add them (the page's anchors first, if given with its URL):
/// evaluates to `None` when the page's claim no longer holds (then nothing is written), else
/// what was added. A macro, as the transaction's type is each backend's (`with_pool!`).
macro_rules! add_in_tx {
    ($dialect:expr, $tx:ident, $page:expr, $anchors:expr, $frontier:expr, $found:expr) => {{
        let dialect: Dialect = $dialect;
        let page: Option<Page> = $page;
        let anchors: Option<(&str, &PageAnchors)> = $anchors;
        let frontier: Option<Frontier> = $frontier;
        let found: &[Links] = $found;
        let fence = cached!(
            dialect,
            "UPDATE sites SET crawl = NULL \
             WHERE id = ? AND claim_token = ? AND state = {claimed} AND crawl IS NOT NULL"
        );
        let take_pages = cached!(dialect, "UPDATE crawls SET pages = pages + ? WHERE id = ?");
        let pages_of = cached!(dialect, "SELECT pages FROM crawls WHERE id = ?");
        let set_pages = cached!(dialect, "UPDATE crawls SET pages = ? WHERE id = ?");
        'page: {
            if let Some(page) = page {
                let fenced = sqlx::query(fence).bind(page.site_id).bind(page.token)
                    .execute(&mut *$tx).await?.rows_affected();
                if fenced == 0 {
                    break 'page None;
                }
            }
            let mut added = Added::default();
            // After the fence, which locks the page's row on a server (anchors.rs).
            if let Some((url, read)) = anchors {
                (added.released, added.held) = store_anchors!(dialect, $tx, url, read, true);
            }
            for links in found {
                let mut follow = links.follow.clone();
                let mut check = links.check.clone();
                if let Some(max) = frontier.and_then(|f| f.max_pages) {
                    let crawl = frontier.map_or(0, |f| f.crawl);
                    // The pages not known yet take the crawl's budget, in the page's order.
                    let mut fresh = Vec::new();
                    for chunk in follow.chunks(CHUNK) {
                        let known: Vec<Vec<u8>> = {
                            let sites = padded_refs(chunk);
                            let sql = cached!(dialect, sites.len(), |_, n| {
                                format!(
                                    "SELECT url_key FROM sites WHERE url_key IN ({})",
                                    placeholders(n)
                                )
                            });
                            let mut q = sqlx::query_scalar(&sql);
                            for site in sites {
                                q = q.bind(url_key(&site.url).to_vec());
                            }
                            q.fetch_all(&mut *$tx).await?
                        };
                        fresh.extend(chunk.iter().filter(|site| {
                            !known.iter().any(|k| k[..] == url_key(&site.url)[..])
                        }).cloned());
                    }
                    let wanted = fresh.len() as i64;
                    sqlx::query(take_pages).bind(wanted).bind(crawl).execute(&mut *$tx).await?;
                    let pages: i64 = sqlx::query_scalar(pages_of).bind(crawl).fetch_one(&mut *$tx).await?;
                    let allowed = (max - (pages - wanted)).clamp(0, wanted);
                    if allowed < wanted {
                        sqlx::query(set_pages).bind(pages - wanted + allowed).bind(crawl)
                            .execute(&mut *$tx).await?;
                        check.extend(fresh.split_off(allowed as usize));
                    }
                    follow = fresh;
                }
                // The links to sections of pages still to be read (once the pages are in)
                // wait for those reads: held, and listed for them (anchors.rs).
                let mut held = HashSet::new();
                let lists = [(&follow, frontier.map(|f| f.crawl)), (&check, None)];
                for (list, (sites, crawl)) in lists.into_iter().enumerate() {
                    // Once the pages are in: a page found on this one is to be read too.
                    if list == 1 {
                        let mut pages: Vec<[u8; 16]> =
                            check.iter().filter_map(|site| page_of_fragment(&site.url)).collect();
                        pages.sort_unstable();
                        pages.dedup();
                        for chunk in pages.chunks(CHUNK) {
                            let chunk = &padded(chunk)[..];
                            let sql = pages_to_read(dialect, chunk.len());
                            let mut q = sqlx::query_scalar(&sql);
                            for page in chunk {
                                q = q.bind(page.to_vec());
                            }
                            let to_read: Vec<Vec<u8>> = q.fetch_all(&mut *$tx).await?;
                            if to_read.is_empty() {
                                continue;
                            }
                            let to_read_padded = padded_refs(&to_read);
                            let sql = pages_stored(dialect, to_read_padded.len());
                            let mut q = sqlx::query_scalar(&sql);
                            for page in to_read_padded {
                                q = q.bind(page.clone());
                            }
                            let stored: Vec<Vec<u8>> =
                                q.bind(ANCHORS_TTL_MS).fetch_all(&mut *$tx).await?;
                            held.extend(
                                to_read
                                    .into_iter()
                                    .filter(|page| !stored.contains(page))
                                    .filter_map(|page| <[u8; 16]>::try_from(page).ok()),
                            );
                        }
                    }
                    let depth = frontier.map(|f| f.depth);
                    for chunk in sites.chunks(CHUNK) {
                        let chunk = padded_refs(chunk);
                        let sql = cached!(dialect, chunk.len(), |dialect, n| {
                            let row = "(?, ?, ?, ?, {now} - ?, {now}, ?, ?)";
                            insert_ignore(
                                dialect,
                                &format!(
                                    "INTO sites (url, url_key, host, part, next_check_at, created_at, crawl, depth) \
                                     VALUES {}",
                                    vec![row; n].join(", ")
                                ),
                            )
                        });
                        let mut q = sqlx::query(&sql);
                        for site in chunk {
                            let key = url_key(&site.url);
                            let spread = match page_of_fragment(&site.url) {
                                Some(page) if held.contains(&page) => -HOLD_FOR_PAGE_MS,
                                _ => i64::from(u32::from_le_bytes(key[..4].try_into().unwrap()))
                                    % crate::seed::SPREAD_MS,
                            };
                            q = q.bind(&site.url).bind(key.to_vec()).bind(&site.host)
                                .bind(part_of(&site.host)).bind(spread).bind(crawl).bind(depth);
                        }
                        let new = q.execute(&mut *$tx).await?.rows_affected();
                        added.new += new;
                        if crawl.is_some() {
                            added.pages += new;
                        }
                    }
                }
                let holds: Vec<([u8; 16], [u8; 16])> = check
                    .iter()
                    .filter_map(|site| {
                        let page = page_of_fragment(&site.url).filter(|p| held.contains(p))?;
                        Some((page, url_key(&site.url)))
                    })
                    .collect();
                for chunk in holds.chunks(CHUNK) {
                    let chunk = &padded(chunk)[..];
                    let sql = hold(dialect, chunk.len());
                    let mut q = sqlx::query(&sql);
                    for (page, site) in chunk {
                        q = q.bind(page.to_vec()).bind(site.to_vec());
                    }
                    q.execute(&mut *$tx).await?;
                }
                if let Some(referrer) = &links.referrer {
                    let keys = follow.iter().chain(&check).map(|s| url_key(&s.url)).collect();
                    count_referrer!(dialect, $tx, referrer, keys);
                }
            }
            Some(added)
        }
    }};
}

/// `found` as a page's transaction adds it: without a frontier, every link is only checked.
fn prepared(found: &[Links], frontier: Option<Frontier>) -> Vec<Links> {
    found
        .iter()
        .map(|links| {
            let mut links = links.clone();
            if frontier.is_none() {
                let follow = std::mem::take(&mut links.follow);
                links.check.extend(follow);
            }
            links
        })
        .collect()
}

/// A page of a crawl read, with what [`Follow::add_pages`] stores of it.
#[derive(Clone, Debug)]
pub struct PageLinks {
    pub page: Page,
    /// Its URL, which its anchors are stored under.
    pub url: String,
    /// Its result and anchors, when its crawl checks fragments.
    pub anchors: Option<PageAnchors>,
    pub frontier: Frontier,
    pub links: Links,
}

/// The page that links were read from, as claimed: the links count only if the claim holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page {
    pub site_id: i64,
    pub token: i64,
}

/// Where new pages go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frontier {
    pub crawl: i64,
    /// The new pages' depth.
    pub depth: i32,
    pub max_pages: Option<i64>,
}

/// What [`Follow::add_links`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Added {
    /// Sites not known before.
    pub new: u64,
    /// Of those, pages to read.
    pub pages: u64,
    /// Links to sections held for the page, made due by its anchors stored
    /// ([`Follow::add_pages`]).
    pub released: u64,
    /// Links to sections held for the page, pending and never checked, left to be decided
    /// from its read by the caller and written with
    /// [`Queue::complete_held`](crate::Queue::complete_held) (its anchors stored, alive): no
    /// claim and no request each. Not made due: left, they are claimed at their hold's end.
    pub held: Vec<crate::queue::Site>,
}

/// Recursive checking: the crawls, the links a page or a list adds, and robots.txt as the
/// fleet shares it. Obtained from [`Queue::follow`]; it borrows the queue's database handle.
#[derive(Clone, Copy, Debug)]
pub struct Follow<'q> {
    db: &'q Db,
}

impl Queue {
    /// Recursive checking in this queue's database ([`Follow`]).
    pub fn follow(&self) -> Follow<'_> {
        Follow { db: &self.db }
    }
}

impl Follow<'_> {
    /// Stores a crawl; its id goes with its start pages.
    pub async fn create_crawl(&self, crawl: &NewCrawl) -> Result<i64, Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
            insert_returning_id(
                dialect,
                "INTO crawls (scopes, includes, excludes, max_depth, max_pages, robots, fragments, \
                 created_at) VALUES (?, ?, ?, ?, ?, ?, ?, {now})",
            )
        });
        macro_rules! bound {
            ($sql:expr) => {
                sqlx::query($sql)
                    .bind(crawl.scopes.join("\n"))
                    .bind(crawl.includes.join("\n"))
                    .bind(crawl.excludes.join("\n"))
                    .bind(crawl.max_depth)
                    .bind(crawl.max_pages)
                    .bind(i16::from(crawl.robots))
                    .bind(i16::from(crawl.fragments))
            };
        }
        Ok(match self.db {
            Db::MySql(pool) => bound!(&sql).execute(pool).await?.last_insert_id() as i64,
            Db::Sqlite(pool) => bound!(&sql).execute(pool).await?.last_insert_rowid(),
            Db::Postgres(pool) => bound!(&sql).fetch_one(pool).await?.try_get("id")?,
        })
    }

    /// Every crawl (a few rows: one per `--follow` seed).
    pub async fn crawls(&self) -> Result<Vec<Crawl>, Error> {
        let sql = "SELECT id, scopes, includes, excludes, max_depth, max_pages, robots, fragments \
                   FROM crawls";
        let lines = |text: String| -> Vec<String> {
            text.lines()
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect()
        };
        Ok(with_pool!(self.db, pool => {
            let rows = retry("crawls", || sqlx::query(sql).fetch_all(pool)).await?;
            let mut crawls = Vec::new();
            for row in rows {
                let robots: i16 = row.try_get("robots")?;
                let fragments: i16 = row.try_get("fragments")?;
                crawls.push(Crawl {
                    id: row.try_get("id")?,
                    spec: NewCrawl {
                        scopes: lines(row.try_get("scopes")?),
                        includes: lines(row.try_get("includes")?),
                        excludes: lines(row.try_get("excludes")?),
                        max_depth: row.try_get("max_depth")?,
                        max_pages: row.try_get("max_pages")?,
                        robots: robots != 0,
                        fragments: fragments != 0,
                    },
                });
            }
            crawls
        }))
    }

    /// Adds `links`, found on `page` (if any; then only while its claim holds, and once) for
    /// `frontier` (if any: the pages to follow; without one every link is only checked).
    /// `None` when the page's claim was lost or its links were already added.
    pub async fn add_links(
        &self,
        page: Option<Page>,
        frontier: Option<Frontier>,
        links: &Links,
    ) -> Result<Option<Added>, Error> {
        self.add_found(page, frontier, std::slice::from_ref(links))
            .await
    }

    /// Adds each of `found` as [`Follow::add_links`] adds one `Links`, all in one transaction:
    /// the links of a file, each found at a line of its own (`--links-in`), cost one commit.
    pub async fn add_found(
        &self,
        page: Option<Page>,
        frontier: Option<Frontier>,
        found: &[Links],
    ) -> Result<Option<Added>, Error> {
        let found = prepared(found, frontier);
        let dialect = self.db.dialect();
        Ok(with_pool!(self.db, pool => {
            retry("links", || async {
                let mut tx = pool.begin().await?;
                let added = add_in_tx!(dialect, tx, page, None, frontier, &found);
                if added.is_some() {
                    tx.commit().await?;
                }
                Ok::<Option<Added>, sqlx::Error>(added)
            })
            .await?
        }))
    }

    /// Whether pages read together are better stored together ([`Follow::add_pages`]): on
    /// SQLite, which writes one transaction at a time anyway. On a server each page keeps its
    /// own transaction: workers storing pages side by side would lock the rows their pages
    /// share in another order, and wait for one another.
    pub fn groups_pages(&self) -> bool {
        self.db.dialect() == Dialect::Sqlite
    }

    /// The links of pages of crawls read by this worker, each added as [`Follow::add_links`]
    /// adds a page's, with its result and anchors when its crawl checks fragments, stored
    /// before its links (as [`Anchors::save`](crate::Anchors::save) stores them: the links to
    /// its own sections are not held for it, and the page costs one write, not two), all in one
    /// transaction: on SQLite, whose every commit writes each database page it changed, the
    /// rows that pages share (the sites they link to, the index pages of new ones) are written
    /// once for them all. Each page's result in order (`None`: its claim was lost, and nothing
    /// of it stored). All or none: on an error, none is stored.
    pub async fn add_pages(&self, pages: &[PageLinks]) -> Result<Vec<Option<Added>>, Error> {
        let found: Vec<Vec<Links>> = pages
            .iter()
            .map(|p| prepared(std::slice::from_ref(&p.links), Some(p.frontier)))
            .collect();
        let dialect = self.db.dialect();
        Ok(with_pool!(self.db, pool => {
            retry("links", || async {
                let mut tx = pool.begin().await?;
                let mut all = Vec::with_capacity(pages.len());
                for (p, found) in pages.iter().zip(&found) {
                    let anchors = p.anchors.as_ref().map(|a| (p.url.as_str(), a));
                    let frontier = Some(p.frontier);
                    all.push(add_in_tx!(dialect, tx, Some(p.page), anchors, frontier, found));
                }
                tx.commit().await?;
                Ok::<Vec<Option<Added>>, sqlx::Error>(all)
            })
            .await?
        }))
    }
}

impl Follow<'_> {
    /// Adds the links to sections of a local file found at `referrer` (`FILE:LINE`), decided
    /// by the seed from the file's own anchors (`crawler-seed --links-in`): each `url` (the
    /// file's `file://` URL and the fragment) a site already done, alive, with its
    /// `fragment`, never claimed; an existing one takes the new decision. Their referrers are
    /// counted as [`Follow::add_links`] counts them. Returns how many sites were new.
    pub async fn add_file_fragments(
        &self,
        referrer: &str,
        decided: &[(String, Fragment)],
    ) -> Result<u64, Error> {
        let dialect = self.db.dialect();
        let insert = cached!(dialect, |dialect| {
            insert_ignore(
                dialect,
                "INTO sites (url, url_key, host, part, state, verdict, fragment, checked_at, \
                 next_check_at, created_at, attempts, verdict_since) \
                 VALUES (?, ?, ?, ?, {done}, {alive}, ?, {now}, {now}, {now}, 1, {now})",
            )
        });
        let update = cached!(
            self.db.dialect(),
            "UPDATE sites SET fragment = ?, checked_at = {now} WHERE url_key = ? AND state = {done}"
        );
        Ok(with_pool!(self.db, pool => {
            retry("file fragments", || async {
                let mut tx = pool.begin().await?;
                let mut keys: Vec<[u8; 16]> = Vec::new();
                let mut new = 0;
                for (url, fragment) in decided {
                    let key = url_key(url);
                    new += sqlx::query(insert).bind(url).bind(key.to_vec()).bind(FILE_HOST)
                        .bind(part_of(FILE_HOST)).bind(fragment.as_str())
                        .execute(&mut *tx).await?.rows_affected();
                    sqlx::query(update).bind(fragment.as_str()).bind(key.to_vec())
                        .execute(&mut *tx).await?;
                    keys.push(key);
                }
                count_referrer!(dialect, tx, referrer, keys);
                tx.commit().await?;
                Ok::<u64, sqlx::Error>(new)
            })
            .await?
        }))
    }
}

/// The host of a local file's sites (`file://` URLs name none).
const FILE_HOST: &str = "localhost";

/// robots.txt as the fleet shares it: fetched once per origin (`scheme://host:port`).
impl Follow<'_> {
    /// The stored robots.txt of `origin`: `None` if nobody fetched it yet, `Some(None)` if it
    /// has none.
    pub async fn robots(&self, origin: &str) -> Result<Option<Option<String>>, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT body FROM robots WHERE origin = ?"
        );
        Ok(with_pool!(self.db, pool => {
            retry("robots", || sqlx::query_scalar(sql).bind(origin).fetch_optional(pool)).await?
        }))
    }

    /// Stores what `origin`'s robots.txt says (`None`: it has none); the first one stored wins.
    pub async fn store_robots(&self, origin: &str, body: Option<&str>) -> Result<(), Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
            insert_ignore(
                dialect,
                "INTO robots (origin, body, fetched_at) VALUES (?, ?, {now})",
            )
        });
        with_pool!(self.db, pool => {
            retry("robots", || sqlx::query(sql).bind(origin).bind(body).execute(pool)).await?;
        });
        Ok(())
    }
}
