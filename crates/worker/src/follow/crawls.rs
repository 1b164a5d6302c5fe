//! The crawls' rules as this worker knows them: read from the database the first time a page
//! of an unknown crawl is claimed (a seed may add a crawl while the fleet runs), then kept.

use std::collections::HashMap;
use std::sync::Arc;

use crawler_links::{Rules, Scope};
use crawler_queue::filter::Regex;
use crawler_queue::{Crawl, Error, Queue};
use tokio::sync::Mutex;

/// One crawl's rules, ready to sort links.
#[derive(Debug)]
pub struct CrawlRules {
    pub id: i64,
    pub rules: Rules,
    pub max_pages: Option<i64>,
    /// Pages obey robots.txt.
    pub robots: bool,
}

/// Known crawls by id. A tokio mutex: a reload holds it across the query, so that the pages
/// of a new crawl, claimed together, read the table once.
#[derive(Default)]
pub struct Crawls {
    known: Mutex<HashMap<i64, Arc<CrawlRules>>>,
}

impl Crawls {
    /// The rules of crawl `id`; `None` if the database has no such crawl (then its pages are
    /// checked, not read).
    pub async fn get(&self, queue: &Queue, id: i64) -> Result<Option<Arc<CrawlRules>>, Error> {
        let mut known = self.known.lock().await;
        if let Some(rules) = known.get(&id) {
            return Ok(Some(rules.clone()));
        }
        for crawl in queue.crawls().await? {
            known.insert(crawl.id, Arc::new(rules_of(crawl)));
        }
        Ok(known.get(&id).cloned())
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
    }
}
