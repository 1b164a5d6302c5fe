//! The crawls' rules as this worker knows them: read from the database the first time a page
//! of an unknown crawl is claimed (a seed may add a crawl while the fleet runs), or the first
//! time a link is checked (to know the hosts whose robots.txt paces it), then kept.

use std::collections::HashMap;
use std::sync::Arc;

use crawler_links::{Rules, Scope};
use crawler_queue::filter::Regex;
use crawler_queue::{Crawl, Error, Queue};
use tokio::sync::Mutex;
use url::Url;

/// One crawl's rules, ready to sort links.
#[derive(Debug)]
pub struct CrawlRules {
    pub id: i64,
    pub rules: Rules,
    pub max_pages: Option<i64>,
    /// Pages obey robots.txt.
    pub robots: bool,
    /// Links' fragments are sites of their own (`page#section`).
    pub fragments: bool,
}

/// Known crawls by id. A tokio mutex: a reload holds it across the query, so that the pages
/// of a new crawl, claimed together, read the table once.
#[derive(Default)]
pub struct Crawls {
    known: Mutex<Known>,
}

#[derive(Default)]
struct Known {
    crawls: HashMap<i64, Arc<CrawlRules>>,
    /// The table was read at least once.
    read: bool,
}

impl Known {
    async fn read(&mut self, queue: &Queue) -> Result<(), Error> {
        for crawl in queue.follow().crawls().await? {
            self.crawls.insert(crawl.id, Arc::new(rules_of(crawl)));
        }
        self.read = true;
        Ok(())
    }
}

impl Crawls {
    /// The rules of crawl `id`; `None` if the database has no such crawl (then its pages are
    /// checked, not read).
    pub async fn get(&self, queue: &Queue, id: i64) -> Result<Option<Arc<CrawlRules>>, Error> {
        let mut known = self.known.lock().await;
        if let Some(rules) = known.crawls.get(&id) {
            return Ok(Some(rules.clone()));
        }
        known.read(queue).await?;
        Ok(known.crawls.get(&id).cloned())
    }

    /// `url`, parsed, when it is in the scope of a crawl that obeys robots.txt: on a host
    /// whose robots.txt paces every request (its `Crawl-delay`), pages or not. The table is
    /// read the first time; a crawl added since is known once one of its pages is claimed.
    /// Without such a crawl (a plain list of links) the URL is not even parsed.
    pub async fn paced_by_robots(&self, queue: &Queue, url: &str) -> Result<Option<Url>, Error> {
        let mut known = self.known.lock().await;
        if !known.read {
            // Tried once: a failure is not tried again by every check (the database away
            // would slow them all); a page of an unknown crawl reads the table again.
            known.read = true;
            known.read(queue).await?;
        }
        let obeying = || known.crawls.values().filter(|c| c.robots);
        if obeying().next().is_none() {
            return Ok(None);
        }
        let Ok(url) = Url::parse(url) else {
            return Ok(None);
        };
        let paced = obeying().any(|c| c.rules.scopes.iter().any(|s| s.contains(&url)));
        Ok(paced.then_some(url))
    }
}

/// A stored crawl's rules; a scope or pattern that does not parse (written by a newer seed)
/// is left out, and said.
fn rules_of(crawl: Crawl) -> CrawlRules {
    let spec = crawl.spec;
    let scopes = spec.scopes.iter().filter_map(|line| {
        let scope = Scope::from_line(line);
        if scope.is_none() {
            tracing::warn!(crawl = crawl.id, scope = %line, "a scope this worker does not know: left out");
        }
        scope
    });
    let regexes = |patterns: &[String]| -> Vec<Regex> {
        patterns.iter().filter_map(|p| Regex::new(p).ok()).collect()
    };
    CrawlRules {
        id: crawl.id,
        rules: Rules {
            scopes: scopes.collect(),
            include: regexes(&spec.includes),
            exclude: regexes(&spec.excludes),
            max_depth: spec.max_depth,
        },
        max_pages: spec.max_pages,
        robots: spec.robots,
        fragments: spec.fragments,
    }
}
