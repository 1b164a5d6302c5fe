//! robots.txt for the pages a crawl reads, per origin (`scheme://host:port`): taken from the
//! database if any worker fetched it already, else fetched through the checker (the host's
//! limits apply) and stored for the fleet. Kept in the host's entry of the checker's host book
//! (`crawler-check`'s `hosts/`), forgotten with it; the checks of one origin that need it at
//! once wait for one fetch. Its `Crawl-delay` is handed to the book when it is loaded, and
//! paces every request to the host from then on (`crawler-check`'s `ratelimit.rs`).

use std::sync::Arc;

use crawler_check::Checker;
use crawler_links::Robots;
use crawler_queue::{Queue, Verdict};
use url::Url;

/// The product token robots.txt groups are matched against.
const AGENT: &str = "crawler";

/// Whether robots.txt lets the crawler read `url`.
pub async fn allows(queue: &Queue, checker: &Checker, url: &str) -> bool {
    let Ok(url) = Url::parse(url) else {
        return true;
    };
    let robots = robots_of(queue, checker, &url).await;
    let path = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    robots.allows(&path)
}

/// Loads the robots.txt of `url`'s origin, if this worker has not yet, for its `Crawl-delay`
/// alone: a link only checked on a host a crawl reads is paced like its pages.
pub async fn pace(queue: &Queue, checker: &Checker, url: &Url) {
    robots_of(queue, checker, url).await;
}

/// The robots.txt of `url`'s origin, loaded once; its `Crawl-delay` set in the host book
/// then, for the host.
async fn robots_of(queue: &Queue, checker: &Checker, url: &Url) -> Arc<Robots> {
    let origin = url.origin().ascii_serialization();
    let host = url.host_str().unwrap_or_default();
    let load = || async {
        let robots = load(queue, checker, &origin).await;
        if let Some(delay) = robots.crawl_delay {
            tracing::debug!(%origin, ?delay, "robots.txt asks for a crawl delay");
            checker.book().crawl_delay(host, delay);
        }
        Arc::new(robots)
    };
    let cell = checker.book().robots(host, &origin);
    cell.get_or_init(load).await.clone()
}

/// The rules of `origin`: stored by the fleet, or fetched now (and stored). No robots.txt (a
/// 4xx), or one that cannot be had (no answer, 5xx, the database away) allows everything.
async fn load(queue: &Queue, checker: &Checker, origin: &str) -> Robots {
    match queue.follow().robots(origin).await {
        Ok(Some(body)) => return parse(body.as_deref()),
        Ok(None) => {}
        Err(error) => {
            tracing::debug!(%origin, error = %crawler_queue::error_chain(&error), "cannot read the stored robots.txt");
        }
    }
    let (finding, body) = checker.fetch_text(&format!("{origin}/robots.txt")).await;
    let body = body.map(|b| String::from_utf8_lossy(&b).into_owned());
    let stored = match finding.verdict {
        Verdict::Alive => Some(body.as_deref()),
        Verdict::Dead => Some(None),
        // No answer, or not one to go by: allow, and ask again next time this worker starts.
        _ => None,
    };
    if let Some(body) = stored {
        if let Err(error) = queue.follow().store_robots(origin, body).await {
            tracing::debug!(%origin, error = %crawler_queue::error_chain(&error), "cannot store robots.txt");
        }
    }
    parse(
        body.as_deref()
            .filter(|_| finding.verdict == Verdict::Alive),
    )
}

fn parse(body: Option<&str>) -> Robots {
    body.map_or_else(Robots::allow_all, |text| Robots::parse(text, AGENT))
}
