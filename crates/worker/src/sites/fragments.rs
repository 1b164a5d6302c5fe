//! Fragments (`page#section`), the worker's side: a site whose URL has a fragment takes its
//! page's verdict, and `fragment: found|missing` when the page was read (alive HTML). The page's
//! result and anchors are stored once for the fleet (`crawler_queue::anchors`), by the first
//! worker that needs them, and every fragment of the page is decided from them: a page with 50
//! fragments asked is read once. Inside a worker the read is single-flight: the fragments of a
//! page checked at once wait for the one read in flight.
//!
//! A page that is itself a page of a crawl, still to be read, stores its anchors when it is
//! read for its links (`SiteCheck::check_page`): its fragments wait for that rather than read it a
//! second time. Where this worker is reading it (a page and its fragments are on one host, so
//! mostly in one worker's batch) they wait for that read in-process ([`Fragments::reading`]);
//! otherwise they are due again after [`WAIT_FOR_PAGE`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crawler_links::html::{self, HtmlLinks};
use crawler_links::{fragment, Anchors};
use crawler_queue::{Finding, Fragment, Next, Outcome, PageAnchors, Queue, Site, Verdict};
use tokio::sync::{watch, OnceCell};
use url::Url;

use crawler_check::Checker;

/// A fragment whose page is a page of a crawl not read yet is checked again after this, by
/// when the page's read has stored its anchors.
pub const WAIT_FOR_PAGE: Duration = Duration::from_secs(2);

/// What a page's read gave its fragments: the stored result, or a finding that is no verdict
/// yet (a transient failure, a deferral), which the fragments take as theirs.
#[derive(Clone, Debug)]
enum Read {
    Settled(PageAnchors),
    Unsettled(Finding),
}

/// The longest a fragment waits in-process for its page's read by this worker; past it, the
/// fragment reads the stored anchors, or the page, itself.
const WAIT_FOR_READ: Duration = Duration::from_secs(60);

/// How long a page's stored result and anchors, once this worker has stored or read them,
/// decide its sections without reading them from the database again. A page's sections come
/// together or soon after one another (its read makes those held for it due at once), and
/// each would otherwise read the page's whole stored text: on Python's documentation, 20,890
/// reads of 27,000 statements. A section decided from a copy a minute old is as right as one
/// decided a minute earlier (a page's stored anchors are good for an hour, `ANCHORS_TTL_MS`).
const KEEP_STORED: Duration = Duration::from_secs(60);

/// Pages kept so ([`KEEP_STORED`]), at most: memory stays bounded whatever the pages.
const KEPT_PAGES: usize = 1024;
/// The kept pages' anchors, in bytes, at most (a page whose anchors alone are more is not kept).
const KEPT_BYTES: usize = 4 << 20;

/// Pages' stored results lately stored or read by this worker, by URL, with when.
#[derive(Default)]
struct Kept {
    pages: HashMap<String, (Instant, Arc<PageAnchors>)>,
    /// The anchors' bytes of `pages`.
    bytes: usize,
}

impl Kept {
    fn remove(&mut self, page: &str) {
        if let Some((_, stored)) = self.pages.remove(page) {
            self.bytes -= bytes_of(&stored);
        }
    }
}

fn bytes_of(stored: &PageAnchors) -> usize {
    stored.anchors.as_ref().map_or(0, String::len)
}

/// The pages being read for their fragments, by URL (without fragment). Std mutexes: held only
/// to find or drop an entry, never across an await.
#[derive(Default)]
pub struct Fragments {
    reading: Mutex<HashMap<String, Arc<OnceCell<Read>>>>,
    /// The pages of a crawl this worker is reading for their links, by URL: set to `true` once
    /// the read is over and its anchors stored.
    crawl_reads: Mutex<HashMap<String, watch::Sender<bool>>>,
    /// Pages' stored results lately stored or read by this worker ([`KEEP_STORED`]).
    kept: Mutex<Kept>,
}

/// A page of a crawl being read by this worker ([`Fragments::reading`]); its fragments wait
/// until it is dropped.
pub struct PageRead<'a> {
    fragments: &'a Fragments,
    page: String,
}

impl Drop for PageRead<'_> {
    fn drop(&mut self) {
        let mut reads = self.fragments.crawl_reads.lock().expect("never poisoned");
        if let Some(done) = reads.remove(&self.page) {
            done.send_replace(true);
        }
    }
}

impl Fragments {
    /// Marks `page`, a page of a crawl, as read by this worker until the guard is dropped (once
    /// its anchors are stored): its fragments checked meanwhile wait for it.
    pub fn reading(&self, page: &str) -> PageRead<'_> {
        let mut reads = self.crawl_reads.lock().expect("never poisoned");
        reads
            .entry(page.to_owned())
            .or_insert_with(|| watch::Sender::new(false));
        PageRead {
            fragments: self,
            page: page.to_owned(),
        }
    }

    /// Keeps `stored`, the stored result of `page`, for its sections ([`KEEP_STORED`]).
    pub fn keep(&self, page: &str, stored: PageAnchors) {
        self.keep_at(page, stored, Instant::now());
    }

    fn keep_at(&self, page: &str, stored: PageAnchors, now: Instant) {
        let mut kept = self.kept.lock().expect("never poisoned");
        kept.remove(page);
        let bytes = bytes_of(&stored);
        if bytes > KEPT_BYTES {
            return;
        }
        // The oldest go first: those past `KEEP_STORED`, then the least recent.
        let full = |kept: &Kept| kept.pages.len() >= KEPT_PAGES || kept.bytes + bytes > KEPT_BYTES;
        while full(&kept) {
            let oldest = kept.pages.iter().min_by_key(|(_, (at, _))| *at);
            let Some(oldest) = oldest.map(|(page, _)| page.clone()) else {
                break;
            };
            kept.remove(&oldest);
        }
        kept.bytes += bytes;
        kept.pages.insert(page.to_owned(), (now, Arc::new(stored)));
    }

    /// The stored result of `page` kept less than [`KEEP_STORED`] ago, if any.
    fn kept_at(&self, page: &str, now: Instant) -> Option<Arc<PageAnchors>> {
        let kept = self.kept.lock().expect("never poisoned");
        let (at, stored) = kept.pages.get(page)?;
        (now.saturating_duration_since(*at) < KEEP_STORED).then(|| stored.clone())
    }

    /// Waits for this worker's read of `page`, if it is reading it; whether it was.
    async fn waited_for_read(&self, page: &str) -> bool {
        let done = {
            let reads = self.crawl_reads.lock().expect("never poisoned");
            reads.get(page).map(watch::Sender::subscribe)
        };
        let Some(mut done) = done else { return false };
        // The sender goes with the guard: a read that ended either way has ended.
        let _ = tokio::time::timeout(WAIT_FOR_READ, done.wait_for(|d| *d)).await;
        true
    }

    /// The finding of the fragment site `url`, or `None` when its fragment is no anchor to
    /// look for (`#top`, a text fragment: the caller checks it as any URL).
    pub async fn check(&self, queue: &Queue, checker: &Checker, url: &str) -> Option<Finding> {
        let started = Instant::now();
        let (page, anchor) = fragment::split(&Url::parse(url).ok()?)?;
        let page = page.as_str();
        // Its page read already (the usual case: a fragment is held until then, see
        // `crawler_queue::anchors`): decided at once, whatever the page's row says meanwhile.
        if let Some(finding) = self.decided_from_kept(page, &anchor, started) {
            return Some(finding);
        }
        if let Ok(Some(stored)) = queue.anchors().of_page(page).await {
            return Some(self.decide_keeping(page, stored, &anchor, started));
        }
        match queue.anchors().page_to_read(page).await {
            Ok(true) if !self.waited_for_read(page).await => {
                return Some(Finding::deferred(WAIT_FOR_PAGE))
            }
            Ok(_) => {}
            Err(error) => {
                tracing::debug!(error = %crawler_queue::error_chain(&error), "cannot tell whether a fragment's page is to be read: reading it");
            }
        }
        // This worker's read of the page, just waited for, kept what it stored.
        if let Some(finding) = self.decided_from_kept(page, &anchor, started) {
            return Some(finding);
        }
        let cell = {
            let mut reading = self.reading.lock().expect("never poisoned");
            reading.entry(page.to_owned()).or_default().clone()
        };
        let read = cell
            .get_or_init(|| read(queue, checker, page))
            .await
            .clone();
        {
            let mut reading = self.reading.lock().expect("never poisoned");
            if reading.get(page).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
                reading.remove(page);
            }
        }
        Some(match read {
            Read::Unsettled(finding) => finding,
            Read::Settled(stored) => self.decide_keeping(page, stored, &anchor, started),
        })
    }

    /// `anchor`'s finding from the kept copy of `page`'s stored result, if there is one.
    fn decided_from_kept(&self, page: &str, anchor: &str, started: Instant) -> Option<Finding> {
        let stored = self.kept_at(page, Instant::now())?;
        Some(decide(&stored, anchor, started.elapsed()))
    }

    /// `anchor`'s finding from `stored`, the stored result of `page`, which is kept for the
    /// page's other sections.
    fn decide_keeping(
        &self,
        page: &str,
        stored: PageAnchors,
        anchor: &str,
        started: Instant,
    ) -> Finding {
        let finding = decide(&stored, anchor, started.elapsed());
        self.keep(page, stored);
        finding
    }
}

/// The fragment `anchor`'s finding from its page's stored result.
fn decide(page: &PageAnchors, anchor: &str, latency: Duration) -> Finding {
    let fragment = page
        .anchors
        .as_deref()
        .map(|text| match Anchors::text_has(text, anchor) {
            true => Fragment::Found,
            false => Fragment::Missing,
        });
    Finding {
        verdict: page.verdict,
        status: page.status,
        error_kind: page.error_kind,
        final_url: page.final_url.clone(),
        redirects: page.redirects,
        latency,
        attempts: 1,
        next: Next::Final,
        detail: None,
        fragment,
        moved_to: None,
    }
}

/// The outcomes of `held`, sections of the page whose stored result is `page`, decided from it
/// (a site whose fragment is no anchor, which is never held, is left out).
pub fn decided(page: &PageAnchors, held: Vec<Site>) -> Vec<Outcome> {
    held.into_iter()
        .filter_map(|site| {
            let url = Url::parse(&site.url).ok()?;
            let (_, anchor) = fragment::split(&url)?;
            let finding = decide(page, &anchor, Duration::ZERO);
            Some(Outcome { site, finding })
        })
        .collect()
}

/// `page`'s result and anchors: the fleet's copy, or read now (GET, up to `PAGE_CAP`) and
/// stored for the fleet.
async fn read(queue: &Queue, checker: &Checker, page: &str) -> Read {
    match queue.anchors().of_page(page).await {
        Ok(Some(stored)) => return Read::Settled(stored),
        Ok(None) => {}
        Err(error) => {
            tracing::debug!(error = %crawler_queue::error_chain(&error), "cannot read a page's stored anchors: reading the page");
        }
    }
    let (finding, body) = checker.check_page(page).await;
    if finding.next != Next::Final {
        return Read::Unsettled(finding);
    }
    let stored = page_anchors(&finding, html_of(&finding, body.as_deref()).as_ref());
    if let Err(error) = queue.anchors().save(page, &stored).await {
        tracing::debug!(error = %crawler_queue::error_chain(&error), "cannot store a page's anchors: its other fragments read it again");
    }
    Read::Settled(stored)
}

/// The links and anchors of a page read with `finding`: its `body` parsed once, when it was
/// alive (and so read as HTML); both its links and its anchors are taken from it.
pub fn html_of(finding: &Finding, body: Option<&[u8]>) -> Option<HtmlLinks> {
    body.filter(|_| finding.verdict == Verdict::Alive)
        .map(|body| html::extract(&String::from_utf8_lossy(body)))
}

/// What the fleet stores of a page read with `finding`: its result, and its anchors when it
/// was alive and HTML (`html`, from [`html_of`], which has none otherwise).
pub fn page_anchors(finding: &Finding, html: Option<&HtmlLinks>) -> PageAnchors {
    let anchors = html.map(|html| html.anchors.iter().cloned().collect::<Anchors>().to_text());
    PageAnchors {
        verdict: finding.verdict,
        status: finding.status,
        error_kind: finding.error_kind,
        final_url: finding.final_url.clone(),
        redirects: finding.redirects,
        anchors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alive() -> Finding {
        Finding {
            verdict: Verdict::Alive,
            status: Some(200),
            ..Finding::excluded()
        }
    }

    #[test]
    fn a_fragment_is_found_only_where_the_page_has_its_anchor() {
        let body = br#"<h2 id="Install">x</h2><a name="old">"#;
        let page = page_anchors(&alive(), html_of(&alive(), Some(body)).as_ref());
        let fragment = |a: &str| decide(&page, a, Duration::ZERO).fragment;
        assert_eq!(fragment("Install"), Some(Fragment::Found));
        assert_eq!(fragment("old"), Some(Fragment::Found));
        assert_eq!(fragment("install"), Some(Fragment::Missing));
        assert_eq!(decide(&page, "x", Duration::ZERO).verdict, Verdict::Alive);
    }

    #[test]
    fn a_pages_stored_result_is_kept_a_minute_for_a_bounded_number_of_pages() {
        let fragments = Fragments::default();
        let page = page_anchors(&alive(), html_of(&alive(), Some(b"<p id=x>")).as_ref());
        let t0 = Instant::now();
        fragments.keep_at("http://a.example/", page.clone(), t0);
        let kept = |at: Duration| fragments.kept_at("http://a.example/", t0 + at);
        assert_eq!(kept(Duration::ZERO).as_deref(), Some(&page));
        assert_eq!(
            kept(KEEP_STORED - Duration::from_millis(1)).as_deref(),
            Some(&page)
        );
        assert_eq!(kept(KEEP_STORED), None);
        assert_eq!(fragments.kept_at("http://b.example/", t0), None);
        // More pages than kept: the oldest go, the newest stay.
        for i in 0..2 * KEPT_PAGES {
            let at = t0 + Duration::from_millis(i as u64);
            fragments.keep_at(&format!("http://p{i}.example/"), page.clone(), at);
        }
        assert_eq!(fragments.kept.lock().unwrap().pages.len(), KEPT_PAGES);
        let last = format!("http://p{}.example/", 2 * KEPT_PAGES - 1);
        assert!(fragments.kept_at(&last, t0).is_some());
        assert!(fragments.kept_at("http://p0.example/", t0).is_none());
        // And no more bytes of anchors than kept: a page alone over them is not kept.
        let big = |n: usize| PageAnchors {
            anchors: Some("x".repeat(n)),
            ..page.clone()
        };
        fragments.keep_at("http://big.example/", big(KEPT_BYTES + 1), t0);
        assert!(fragments.kept_at("http://big.example/", t0).is_none());
        for i in 0..3 {
            fragments.keep_at(&format!("http://h{i}.example/"), big(KEPT_BYTES / 2), t0);
        }
        let kept = fragments.kept.lock().unwrap();
        assert!(kept.bytes <= KEPT_BYTES, "{}", kept.bytes);
        let sum: usize = kept.pages.values().map(|(_, p)| bytes_of(p)).sum();
        assert_eq!(kept.bytes, sum);
        assert!(kept.pages.contains_key("http://h2.example/"));
    }

    #[test]
    fn a_page_not_read_gives_its_fragments_its_verdict_only() {
        let dead = Finding {
            verdict: Verdict::Dead,
            status: Some(404),
            ..Finding::excluded()
        };
        let page = page_anchors(&dead, html_of(&dead, Some(b"<p id=x>")).as_ref());
        let finding = decide(&page, "x", Duration::ZERO);
        assert_eq!((finding.verdict, finding.fragment), (Verdict::Dead, None));
        let pdf = page_anchors(&alive(), None);
        assert_eq!(decide(&pdf, "page=2", Duration::ZERO).fragment, None);
    }
}
