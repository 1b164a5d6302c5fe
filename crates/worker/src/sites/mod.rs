//! A claimed site's check ([`SiteCheck`]), whatever the site is: a link is asked by the
//! checker; a link to a section (`page#section`) is decided from its page's anchors; a page
//! of a crawl (`crawler-seed --follow`, `Site::crawl`) is checked with GETs, and when it is
//! alive HTML its links are read, sorted by the crawl's rules (in scope: the crawl's next
//! pages; out of scope: checked only; excluded: left out) and handed to the queue with the page
//! as their referrer, before the page's verdict is written (`Follow::add_links`, fenced by the
//! page's claim), so any worker of the fleet checks them and a draining fleet never ends with
//! links unseen.
//!
//! # Layout
//! - `mod.rs`: [`SiteCheck`], a site's check, and one page's links.
//! - `crawls.rs`: the crawls' rules, read from the database once and when a new one appears.
//! - `robots.rs`: robots.txt per origin, fetched once for the fleet and kept in the host book.
//! - `fragments.rs`: a site with a fragment (`page#section`), decided from its page's anchors,
//!   read once for the fleet.
//! - `pages.rs`: storing the links of the pages read, grouped in one transaction on SQLite.

mod crawls;
mod fragments;
mod pages;
mod robots;

use std::sync::Arc;
use std::time::Duration;

use crawler_check::{Checker, Cut, Expected};
use crawler_links::html::HtmlLinks;
use crawler_links::Fate;
use crawler_queue::{
    Finding, Frontier, Links, NewSite, Next, Page, PageAnchors, PageLinks, Queue, Site, Verdict,
};
use url::Url;

use self::crawls::{CrawlRules, Crawls};
use self::fragments::Fragments;
use crate::nudge::Nudge;
use crate::stats::Stats;
use pages::PageStore;

/// A page whose links could not be stored (the database is away) is checked again after this,
/// page and links together, rather than given a verdict that would leave its links unseen.
const LINKS_RETRY: Duration = Duration::from_secs(30);

/// Tries at storing a page's links before giving up on it (1 s, 2 s, 4 s apart): a busy
/// database (SQLite's one writer, a pool kept waiting) is not a reason to read it again.
const LINKS_TRIES: u32 = 4;

/// Checks a claimed site: the queue, the checker, and what it learned of crawls and pages.
/// Cheap to clone; shared by every check task of the worker.
#[derive(Clone)]
pub struct SiteCheck {
    queue: Queue,
    checker: Checker,
    crawls: Arc<Crawls>,
    /// The pages being read for their fragments' anchors.
    fragments: Arc<Fragments>,
    /// Stores the links of the pages read (`pages.rs`).
    pages: Arc<PageStore>,
    /// Told when a page's links or its held fragments become due: the claimer claims them
    /// at once.
    nudge: Arc<Nudge>,
    /// What this worker stored: the write-backs', and the sections a page's read decided.
    stats: Arc<Stats>,
}

impl SiteCheck {
    pub fn new(queue: Queue, checker: Checker, nudge: Arc<Nudge>, stats: Arc<Stats>) -> SiteCheck {
        SiteCheck {
            nudge,
            stats,
            crawls: Arc::new(Crawls::default()),
            fragments: Arc::new(Fragments::default()),
            pages: Arc::new(PageStore::new(queue.clone())),
            queue,
            checker,
        }
    }

    /// Counts `site` as held until the guard is dropped: its host's connection is kept while
    /// another of its sites is held.
    pub fn expect(&self, site: &Site) -> Expected {
        self.checker.book().expect(&site.host)
    }

    /// Checks `site`; if it is a page of a crawl that may be read, reads it and adds its links.
    /// Every request it makes (robots.txt, a page for its anchors, the site) marks `cut`, so
    /// that the check is cut off only before its first (`stages/checking.rs`).
    pub async fn check(&self, site: &Site, cut: &Cut) -> Finding {
        let checker = self.checker.cut_by(cut);
        if site.crawl.is_none() {
            return self.check_link(site, &checker).await;
        }
        // From the check's first poll, before anything awaits: the page's fragments in the
        // same batch wait for this read rather than come back later (`fragments.rs`).
        let _read = self.fragments.reading(&site.url);
        // Boxed: reading a page (robots.txt, the page, storing its links) is a future of
        // several KB, which every link's task would otherwise carry and move.
        Box::pin(self.check_page(site, &checker)).await
    }

    /// [`SiteCheck::check`] of a site that is only checked, paced by its host's robots.txt when
    /// a crawl obeying it reads the host. A site with a fragment (`page#section`) is decided
    /// from its page's anchors (`fragments.rs`).
    async fn check_link(&self, site: &Site, checker: &Checker) -> Finding {
        self.pace_by_robots(site, checker).await;
        if site.url.contains('#') {
            // Boxed, as a page's check is: only a fragment's check reads a page.
            let fragment = Box::pin(self.fragments.check(&self.queue, checker, &site.url));
            if let Some(finding) = fragment.await {
                return finding;
            }
        }
        checker.check(&site.url).await
    }

    /// [`SiteCheck::check`] of a site that is a page of a crawl.
    async fn check_page(&self, site: &Site, checker: &Checker) -> Finding {
        let Some(crawl) = self.rules_of(site).await else {
            return self.check_link(site, checker).await;
        };
        if crawl.robots && !robots::allows(&self.queue, checker, &site.url).await {
            tracing::debug!(url = %site.url, "robots.txt disallows reading this page: checked only");
            return checker.check(&site.url).await;
        }
        let (finding, body) = checker.check_page(&site.url).await;
        // Parsed once, for its links and its anchors.
        let html = fragments::html_of(&finding, body.as_deref());
        drop(body);
        // Whatever the page's verdict: its fragments take it from here. A redirected page's
        // anchors are those of the page it ends at, as in a browser. Stored with its links,
        // or alone when it gives none.
        let anchors = (crawl.fragments && finding.next == Next::Final)
            .then(|| fragments::page_anchors(&finding, html.as_ref()));
        let final_url = finding.final_url.as_deref().unwrap_or(&site.url);
        let final_url = Url::parse(final_url).ok();
        let (Some(final_url), Verdict::Alive) = (final_url, finding.verdict) else {
            if let Some(anchors) = anchors {
                self.save_anchors(site, anchors).await;
            }
            return finding;
        };
        let depth = site.depth.unwrap_or(0);
        let (links, depth) = if Url::parse(&site.url).is_ok_and(|u| u == final_url) {
            let links = html.map(|html| links_of(&crawl, &final_url, &html, depth + 1));
            (links.unwrap_or_default(), depth + 1)
        } else {
            // Redirected: the page is the one it ends at, a site of its own at the same
            // depth, found here (so that it is read once, whichever way it is reached).
            (sort(&crawl, std::iter::once(final_url), depth), depth)
        };
        self.store(site, &crawl, depth, links, anchors, finding)
            .await
    }

    /// Stores `read`, the result and anchors of the page `site`, for the fleet: the links to
    /// its sections are decided from them without reading it again (`fragments.rs`).
    async fn save_anchors(&self, site: &Site, read: PageAnchors) {
        match self.queue.anchors().save(&site.url, &read).await {
            Ok(released) => self.anchors_stored(site, read, released),
            Err(error) => {
                tracing::debug!(url = %site.url, error = %crawler_queue::error_chain(&error), "cannot store a page's anchors: its fragments read it again");
            }
        }
    }

    /// Decides `held`, the sections held for a page's read, from `read`, its stored result,
    /// and writes their verdicts, with no claim (`Queue::complete_held`). On a failure they
    /// are claimed at their hold's end and decided then, as a page's sections always can be.
    async fn decide_held(&self, read: &PageAnchors, held: Vec<Site>) {
        if held.is_empty() {
            return;
        }
        let outcomes = fragments::decided(read, held);
        match self.queue.complete_held(&outcomes).await {
            Ok(completed) => self.stats.record(&completed),
            Err(error) => {
                tracing::debug!(error = %crawler_queue::error_chain(&error), "cannot write the sections a page's read decided: they are checked at their hold's end");
            }
        }
    }

    /// The anchors of the page `site` are stored, and `released` of its sections made due.
    fn anchors_stored(&self, site: &Site, read: PageAnchors, released: u64) {
        // Its sections, this worker's to claim now, are decided from this copy.
        self.fragments.keep(&site.url, read);
        if released > 0 {
            self.nudge.nudge();
        }
    }

    /// A site that is not a page, on a host a crawl reads obeying robots.txt: the origin's
    /// robots.txt is loaded first (from the fleet's copy, or fetched once), so that its
    /// `Crawl-delay` paces this check too, on a worker that has read no page of the host yet.
    async fn pace_by_robots(&self, site: &Site, checker: &Checker) {
        match self.crawls.paced_by_robots(&self.queue, &site.url).await {
            // Boxed, as a page's check is: only a crawl that obeys robots.txt gets here.
            Ok(Some(url)) => Box::pin(robots::pace(&self.queue, checker, &url)).await,
            Ok(None) => {}
            Err(error) => {
                tracing::debug!(error = %crawler_queue::error_chain(&error), "cannot read the crawls: checking the link without its robots.txt");
            }
        }
    }

    /// The rules of `site`'s crawl, if it is a page of one that is still known.
    async fn rules_of(&self, site: &Site) -> Option<Arc<CrawlRules>> {
        let crawl = site.crawl?;
        match self.crawls.get(&self.queue, crawl).await {
            Ok(rules) => rules,
            Err(error) => {
                tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot read the crawls: checking the page without reading it");
                None
            }
        }
    }

    /// Hands `links` to the queue, found on `site`, with the page's `anchors` when its crawl
    /// checks fragments; `finding` is the page's verdict, unless the links could not be stored
    /// (then it is checked again later).
    async fn store(
        &self,
        site: &Site,
        crawl: &CrawlRules,
        depth: i32,
        mut links: Links,
        anchors: Option<PageAnchors>,
        finding: Finding,
    ) -> Finding {
        links.referrer = Some(site.url.clone());
        let page = PageLinks {
            page: Page {
                site_id: site.id,
                token: site.token,
            },
            url: site.url.clone(),
            anchors,
            frontier: Frontier {
                crawl: crawl.id,
                depth,
                max_pages: crawl.max_pages,
            },
            links,
        };
        let mut tries = 0;
        let stored = loop {
            let stored = self.pages.store(&page).await;
            tries += 1;
            match stored {
                Err(error) if tries < LINKS_TRIES => {
                    tracing::debug!(url = %site.url, error = %crawler_queue::error_chain(&error), "cannot store a page's links yet");
                    tokio::time::sleep(Duration::from_secs(1 << (tries - 1))).await;
                }
                stored => break stored,
            }
        };
        let PageLinks { anchors, links, .. } = page;
        match stored {
            Ok(Some(added)) => {
                if let Some(read) = anchors {
                    self.decide_held(&read, added.held).await;
                    self.anchors_stored(site, read, added.released);
                }
                if added.new > 0 {
                    self.nudge.nudge();
                }
                tracing::debug!(url = %site.url, links = links.follow.len() + links.check.len(), new = added.new, pages = added.pages, "page read");
                finding
            }
            // The claim was lost (another worker has the page now) or the links were added.
            Ok(None) => finding,
            Err(error) => {
                tracing::warn!(url = %site.url, error = %crawler_queue::error_chain(&error), "cannot store a page's links: it will be read again");
                Finding::deferred(LINKS_RETRY)
            }
        }
    }
}

/// The links `found` in a page fetched from `page`, sorted by `crawl`'s rules, each once.
fn links_of(crawl: &CrawlRules, page: &Url, found: &HtmlLinks, depth: i32) -> Links {
    let base = found
        .base
        .as_deref()
        .and_then(|b| page.join(b).ok())
        .unwrap_or_else(|| page.clone());
    let resolve = match crawl.fragments {
        true => crawler_links::resolve_with_fragment,
        false => crawler_links::resolve,
    };
    let urls = found.links.iter().filter_map(|f| resolve(&base, &f.url));
    // A link to a section of this page (`#install`) is its fragment's site only: the page is
    // not a link of its own.
    let own = crawler_links::normalize(page.clone()).ok().map(|n| n.url);
    let mut links = sort(crawl, urls, depth);
    if let Some(own) = own.filter(|_| crawl.fragments) {
        links.follow.retain(|s| s.url != own);
        links.check.retain(|s| s.url != own);
    }
    links
}

/// `urls` by their fate under `crawl`, each once, in the page's order. With fragment checking,
/// a URL with a fragment that names an anchor is two sites: its page, and the fragment's own,
/// only checked (never read as a page of the crawl: its page is).
fn sort(crawl: &CrawlRules, urls: impl Iterator<Item = Url>, depth: i32) -> Links {
    let mut links = Links::default();
    let mut seen = std::collections::HashSet::new();
    for url in urls {
        let fragment = crawl.fragments.then(|| url.clone());
        let (follow, normal) = match crawl.rules.fate(url, depth) {
            Fate::Follow(normal) => (true, normal),
            Fate::Check(normal) => (false, normal),
            Fate::Skip => continue,
        };
        let fragment = fragment.and_then(|url| crawler_links::with_fragment(&normal, &url));
        links.add(&mut seen, follow, site(normal), fragment.map(site));
    }
    links
}

/// The site of a link's normal form.
fn site(normal: crawler_links::Normal) -> NewSite {
    NewSite {
        url: normal.url,
        host: normal.host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawler_links::{Rules, Scope, ScopeKind};

    fn crawl() -> CrawlRules {
        let start = Url::parse("http://a.example/docs/").unwrap();
        CrawlRules {
            id: 1,
            rules: Rules {
                scopes: vec![Scope::of(ScopeKind::Origin, &start)],
                exclude: vec![regex_lite("/skip/")],
                ..Rules::default()
            },
            max_pages: None,
            robots: true,
            fragments: false,
        }
    }

    fn regex_lite(p: &str) -> crawler_queue::filter::Regex {
        crawler_queue::filter::Regex::new(p).unwrap()
    }

    fn urls(sites: &[NewSite]) -> Vec<&str> {
        sites.iter().map(|s| s.url.as_str()).collect()
    }

    /// The links of an HTML `body` fetched from `page`, one link deep.
    fn links_in(crawl: &CrawlRules, page: &Url, body: &[u8]) -> Links {
        let found = crawler_links::html::extract(std::str::from_utf8(body).unwrap());
        links_of(crawl, page, &found, 1)
    }

    #[test]
    fn with_fragments_a_link_to_a_section_is_its_page_and_a_fragment_site() {
        let page = Url::parse("http://a.example/docs/guide.html").unwrap();
        let body = br##"<a href="#install">here</a><a href="#top">top</a><a href="#">none</a>
            <a href="a.html#x">a</a><a href="a.html#x">again</a><a href="a.html#:~:text=hi">t</a>
            <a href="http://b.example/p#Sec">out</a><a href="/skip/y#z">no</a>"##;
        let with = CrawlRules {
            fragments: true,
            ..crawl()
        };
        let links = links_in(&with, &page, body);
        assert_eq!(urls(&links.follow), ["http://a.example/docs/a.html"]);
        assert_eq!(
            urls(&links.check),
            [
                "http://a.example/docs/guide.html#install",
                "http://a.example/docs/a.html#x",
                "http://b.example/p",
                "http://b.example/p#Sec"
            ]
        );
        let without = links_in(&crawl(), &page, body);
        assert_eq!(urls(&without.check), ["http://b.example/p"]);
    }

    #[test]
    fn a_pages_links_are_resolved_against_its_base_and_sorted() {
        let page = Url::parse("http://a.example/docs/guide/index.html").unwrap();
        let body = br#"<base href="/docs/"><a href="a.html">a</a><a href="a.html#x">again</a>
            <img src="logo.png"><a href="http://b.example/">out</a><a href="/skip/x">no</a>
            <a href="mailto:me@a.example">mail</a>"#;
        let links = links_in(&crawl(), &page, body);
        assert_eq!(urls(&links.follow), ["http://a.example/docs/a.html"]);
        assert_eq!(
            urls(&links.check),
            ["http://a.example/docs/logo.png", "http://b.example/"]
        );
    }
}
