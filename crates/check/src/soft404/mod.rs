//! Soft 404s (`--soft-404`): dead pages that answer 200 (a "not found" template, a redirect
//! home or to a login page, an app shell for every path).
//!
//! As Bar-Yossef et al. (WWW 2004): ask the host for a path that cannot exist and compare.
//! Before a page of a host is checked, the worker gets the host's probe, of a path at its root
//! (`probe.rs`: cached, shared through the database, or made now through the host's limits
//! like any request). The page is asked with GETs keeping the first 64 KiB of a text body, and
//! an alive answer is compared with the probe's (`decide.rs`, on the fingerprints of
//! `fingerprint.rs`). Only a page that the host's probe does not match and that looks like a
//! not-found page (its title, `noindex`, a redirect elsewhere) gets its own directory and
//! extension probed: a wiki or a blog under a host that answers otherwise. So a host costs
//! one probe request unless parts of it behave differently, or a page is in the gray zone
//! (`decide::gray`): then the probe is asked a second time, to learn what of the host's
//! not-found page varies between requests.
//!
//! # Layout
//! - `probe.rs`: patterns, probe paths, where a probe comes from (the host book's cells, the
//!   fleet's store, or a request now) and the fleet's store
//! - `fingerprint.rs`: shingles of the visible text, with echoed paths masked; title, noindex
//! - `decide.rs`: the decision and its reason

// The host book keeps a host's probes, and so names what a probe's answer is (`decide.rs`).
pub(crate) mod decide;
mod fingerprint;
mod probe;

use std::sync::Arc;
use std::time::Duration;

use crawler_verdict::{ErrorKind, Finding, Next, Verdict};
use url::Url;

pub(crate) use self::probe::ProbeSource;
pub use self::probe::{LastCheck, ProbeStore, StoredProbe, TTL};

use self::decide::{decide, gray, is_root, mask_url, percent_decode, same_shape, Answer, Decision};
use self::probe::{host_pattern, pattern_of, probe_path, Pattern};
use crate::ask::Ask;
use crate::asker::Asker;
use crate::classify::without_userinfo;
use crate::cut::Cut;
use crate::hosts::Probe;
use crate::redirect::attempt;
use crate::reply::{Attempt, End};

/// How long after finding a soft 404 on a site that its last check found alive the site is
/// checked again, to confirm it before its verdict turns dead: a deploy, or an app briefly
/// serving its shell, is over by then. Within the queue's defer horizon (1 h by default), so
/// that the check comes in the same round.
pub const CONFIRM_AFTER: Duration = Duration::from_secs(600);

/// Soft-404 detection for one [`Checker`](crate::Checker): whether it is on, and where its
/// probes come from. Its requests go through the checker's [`Asker`], like any other, and
/// mark the check's `cut` as they go.
#[derive(Default)]
pub(crate) struct Soft404 {
    /// `--soft-404`.
    pub(crate) on: bool,
    pub(crate) source: ProbeSource,
}

impl Soft404 {
    /// `finding`, the check of the site seeded as `url`, made `dead`/`soft_404` when the
    /// comparison found a `reason`. A site whose last check found it alive is not turned dead
    /// at once: the finding is transient, due again after [`CONFIRM_AFTER`] (the queue keeps
    /// its verdict meanwhile, and takes the next check's, or this one's once the site's
    /// attempts are spent).
    pub(crate) async fn finding(
        &self,
        url: &str,
        finding: Finding,
        reason: Option<String>,
    ) -> Finding {
        let Some(reason) = reason else {
            return finding;
        };
        let last = match self.source.store() {
            Some(store) => store.last_check(url).await,
            None => None,
        };
        soft_404(finding, reason, last)
    }

    /// The host's probe, which every page of `url`'s host is compared with first: `None` when
    /// `--soft-404` is off, or for the root and its default documents without a query (never
    /// soft 404s); `Err`
    /// with how long the host is busy. With a probe, the page is asked with a GET.
    pub(crate) async fn host_probe(
        &self,
        asker: &Asker,
        url: &Url,
        cut: Option<&Cut>,
    ) -> Result<Option<Arc<Probe>>, Duration> {
        if !self.on || pattern_of(url).is_none() && root_query(url).is_none() {
            return Ok(None);
        }
        let Some(pattern) = host_pattern(url) else {
            return Ok(None);
        };
        // Boxed: the probe's future is some 8 KB, which every check's task would carry (and
        // move) otherwise, with the option off too.
        Box::pin(self.probe_of(asker, url, &pattern, cut))
            .await
            .map(Some)
    }

    /// The probe of `pattern` on `url`'s host: cached, stored by the fleet, or made now, with
    /// one request. A not-found page in the host's layout is asked again only for a page in
    /// the gray zone ([`Soft404::settled`]).
    async fn probe_of(
        &self,
        asker: &Asker,
        url: &Url,
        pattern: &Pattern,
        cut: Option<&Cut>,
    ) -> Result<Arc<Probe>, Duration> {
        let host = asker.host(url.host_str().unwrap_or_default());
        let make = async {
            let (path, answer) = probe_once(asker, url, pattern, cut).await?;
            let settled = !answer.as_ref().is_some_and(varies);
            Ok(Probe {
                path,
                answer,
                settled,
            })
        };
        self.source.get(host.probes(), pattern, make).await
    }

    /// `first`, a probe of `pattern` asked once, asked a second time, to learn what of the
    /// host's not-found page changes between requests (dates, request ids, "popular now"
    /// lists): what both answers shared, and how much either had beyond it. Once per pattern.
    async fn settled(
        &self,
        asker: &Asker,
        url: &Url,
        (pattern, first): (&Pattern, &Arc<Probe>),
        cut: Option<&Cut>,
    ) -> Result<Arc<Probe>, Duration> {
        let host = asker.host(url.host_str().unwrap_or_default());
        let make = async {
            let (_, second) = probe_once(asker, url, pattern, cut).await?;
            let answer = first.answer.clone().zip(second);
            Ok(Probe {
                path: first.path.clone(),
                answer: answer.and_then(|(a, b)| combined(a, b)),
                settled: true,
            })
        };
        self.source
            .settle(host.probes(), pattern, first, make)
            .await
    }

    /// Why `attempt`, the final answer for `url`, is a soft 404, if it is: judged by the
    /// host's probe, then, only when the page looks like a not-found page that the host's
    /// probe did not explain (its title says so, it asks not to be indexed, or it was sent
    /// elsewhere), by a probe of its own directory and extension (a wiki or a blog under a
    /// host whose other paths answer otherwise). `Err` with how long the host is busy.
    pub(crate) async fn of(
        &self,
        asker: &Asker,
        url: &Url,
        (attempt, host_probe): (&Attempt, &Arc<Probe>),
        cut: Option<&Cut>,
    ) -> Result<Option<String>, Duration> {
        let End::Answered(reply) = &attempt.end else {
            return Ok(None);
        };
        if !reply.accepted || !(200..300).contains(&reply.status) {
            return Ok(None);
        }
        let Some(page) = answer_of(attempt, url.path(), true) else {
            return Ok(None);
        };
        let Some(host) = host_pattern(url) else {
            return Ok(None);
        };
        let Some(own) = pattern_of(url) else {
            // The root with a query (`/?p=999999`) is the home page unless it says it is
            // missing: then it is judged by the host's probe, as the path with its query.
            return match missing_root(url, &page) {
                Some(path) => {
                    let page = (path.as_str(), &page);
                    self.judged(asker, url, page, (&host, host_probe), cut)
                        .await
                }
                None => Ok(None),
            };
        };
        let page = (url.path(), &page);
        let by_host = (&host, host_probe);
        if let Some(reason) = self.judged(asker, url, page, by_host, cut).await? {
            return Ok(Some(reason));
        }
        if own.key == host.key || !looks_missing(page.1) {
            return Ok(None);
        }
        let probe = self.probe_of(asker, url, &own, cut).await?;
        self.judged(asker, url, page, (&own, &probe), cut).await
    }

    /// Why `page`, the answer to `path`, is a soft 404 against `probe`, the probe of
    /// `pattern`, if it is: when the probe was asked once and the page is in its gray zone,
    /// against the probe asked twice.
    async fn judged(
        &self,
        asker: &Asker,
        url: &Url,
        (path, page): (&str, &Answer),
        (pattern, probe): (&Pattern, &Arc<Probe>),
        cut: Option<&Cut>,
    ) -> Result<Option<String>, Duration> {
        if let Some(reason) = judge(path, page, probe) {
            return Ok(Some(reason));
        }
        let gray = probe.answer.as_ref().is_some_and(|p| gray(path, page, p));
        if probe.settled || !gray {
            return Ok(None);
        }
        let probe = self.settled(asker, url, (pattern, probe), cut).await?;
        Ok(judge(path, page, &probe))
    }
}

/// Asks `url`'s host for a path of `pattern` that cannot exist: the path and the answer.
async fn probe_once(
    asker: &Asker,
    url: &Url,
    pattern: &Pattern,
    cut: Option<&Cut>,
) -> Result<(String, Option<Answer>), Duration> {
    let path = probe_path(pattern);
    let mut probe_url = url.clone();
    probe_url.set_path(&path);
    probe_url.set_query(None);
    tracing::debug!(url = %probe_url, "soft-404 probe");
    let attempt = attempt(
        asker,
        &probe_url,
        Ask {
            keep_body: true,
            get_first: true,
            reading: None,
            cut,
        },
    )
    .await;
    if let Some(wait) = attempt.busy() {
        return Err(wait);
    }
    let answer = answer_of(&attempt, &path, false);
    Ok((path, answer))
}

/// `url`'s root with its query (`/?p=999999`, also for `/index.php?p=999999`), when its path
/// is the root or a default document and it has a query: such a URL may name something
/// missing, unlike the root alone.
fn root_query(url: &Url) -> Option<String> {
    let query = url.query().filter(|q| !q.is_empty())?;
    is_root(url.path()).then(|| format!("/?{query}"))
}

/// The path `page`, the answer to the root with a query, is judged as (`/?p=999999`, no
/// root for the decision), when its title says it is missing: a missing post asked by its
/// id. Otherwise `None`: the home page (`/?utm_source=…`, a search), never a soft 404.
fn missing_root(url: &Url, page: &Answer) -> Option<String> {
    root_query(url).filter(|_| page.signals.title_says_missing())
}

/// Whether a probe's answer is a page worth asking twice (in the gray zone): a body in the
/// host's layout, not a redirect, whose variation between requests a second answer shows.
fn varies(answer: &Answer) -> bool {
    answer.redirects == 0 && answer.body.as_ref().is_some_and(|b| !b.shingles.is_empty())
}

/// `finding` made `dead`/`soft_404` for `reason`; transient, due again after
/// [`CONFIRM_AFTER`], when `last` says the site was alive and this is not already the check
/// that confirms it.
fn soft_404(mut finding: Finding, reason: String, last: Option<LastCheck>) -> Finding {
    finding.verdict = Verdict::Dead;
    finding.error_kind = Some(ErrorKind::Soft404);
    let was_alive =
        last.is_some_and(|last| last.verdict == Some(Verdict::Alive) && last.tries == 0);
    finding.detail = Some(if was_alive {
        finding.next = Next::Transient {
            not_before: Some(CONFIRM_AFTER),
        };
        format!("{reason}; alive at the last check: to be confirmed")
    } else {
        reason
    });
    finding
}

/// Whether a page the host's probe did not match is worth its directory's probe: a page
/// that says it is missing (its title), asks not to be indexed, or was sent elsewhere. Real
/// pages rarely do any, so a host costs one probe unless a part of it behaves otherwise.
fn looks_missing(page: &Answer) -> bool {
    page.redirects > 0 || page.signals.noindex || page.signals.title_says_missing()
}

/// Why `page`, the answer to `path`, is a soft 404 against `probe`, if it is.
fn judge(path: &str, page: &Answer, probe: &Probe) -> Option<String> {
    if !probe.compares() {
        return None;
    }
    match decide(path, page, &probe.path, probe.answer.as_ref()?) {
        Decision::Alive => None,
        Decision::Soft404(reason) => Some(reason.chars().take(1000).collect()),
    }
}

/// Two probes of one pattern as one: what their bodies shared, and how much either had
/// beyond it. `None` (nothing judged) when the host answered them differently.
fn combined(first: Answer, second: Answer) -> Option<Answer> {
    let same = first.status == second.status && second.redirects == 0;
    let (a, b) = (first.body.as_ref()?, second.body.as_ref()?);
    if !same {
        return None;
    }
    let stable = a.intersection(b);
    let spread = a.missing_from(&stable).max(b.missing_from(&stable));
    Some(Answer {
        body: Some(stable),
        spread,
        ..first
    })
}

/// What the decision needs of an answer to `path` (a page's when `page`, with its body
/// also read unmasked): `None` when no server answered. A redirect that only rewrote `path` into its
/// canonical shape (`/wiki/old_page` to `/wiki/Old_page`) is no move: the answer is judged
/// as if it had come for `path`, with both spellings masked.
fn answer_of(attempt: &Attempt, path: &str, page: bool) -> Option<Answer> {
    let End::Answered(reply) = &attempt.end else {
        return None;
    };
    let final_url = attempt.final_url.clone()?;
    let landed = final_url.path().to_owned();
    let canonical = attempt.redirects > 0 && same_shape(path, &landed);
    let mut masks = masks(path);
    let mut final_url = mask_url(&without_userinfo(final_url), path);
    if canonical && landed != path {
        masks.extend(self::masks(&landed));
        final_url = mask_url(&final_url, &landed);
    }
    let (body, bare, signals) = match &reply.body {
        Some(body) => {
            let (fp, signals) = fingerprint::fingerprint(body, &masks);
            let bare = page.then(|| fingerprint::fingerprint(body, &[]).0);
            (Some(fp), bare, signals)
        }
        None => Default::default(),
    };
    Some(Answer {
        status: reply.status,
        final_url,
        redirects: if canonical { 0 } else { attempt.redirects },
        body,
        bare,
        spread: 0,
        signals,
    })
}

/// What a page may echo of the path it was asked for: the path (as sent and decoded), its
/// last segment, and that segment without its extension when it is more than one word or
/// long enough to be no common word (masks are whole words: see `fingerprint.rs`).
fn masks(path: &str) -> Vec<String> {
    let decoded = percent_decode(path);
    let last = decoded.rsplit('/').next().unwrap_or_default().to_owned();
    let stem = last.split('.').next().unwrap_or_default().to_owned();
    let several = stem.contains(|c: char| !c.is_alphanumeric());
    let mut masks = vec![path.to_owned(), decoded];
    if last.len() >= 3 {
        masks.push(last);
    }
    if stem.len() >= 6 || several {
        masks.push(stem);
    }
    masks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(path: &str, landed: &str, body: &str) -> Attempt {
        let reply = crate::reply::Reply {
            status: 200,
            location: None,
            retry_after: None,
            cf_mitigated: false,
            accepted: true,
            body: Some(body.as_bytes().to_vec()),
        };
        Attempt {
            end: End::Answered(reply),
            final_url: Some(Url::parse(&format!("http://wiki.example{landed}")).unwrap()),
            redirects: u32::from(path != landed),
            moved_to: None,
        }
    }

    fn wiki(title: &str) -> String {
        let menu = "main page recent changes random page help tools what links here special";
        format!(
            "<title>{title} - Acme wiki</title><meta name=\"robots\" content=\"noindex,nofollow\">\
             <nav>{menu}</nav><h1>{title}</h1><p>There is currently no text in this page. You \
             can search for this page title in other pages, or search the related logs.</p>"
        )
    }

    #[test]
    fn a_probe_and_a_page_canonicalised_by_a_wiki_are_judged_where_they_landed() {
        let probe = answer_of(
            &attempt("/wiki/7qk3x", "/wiki/7qk3x", &wiki("7qk3x")),
            "/wiki/7qk3x",
            false,
        )
        .unwrap();
        // The wiki capitalises the title and shows it with spaces.
        let page = answer_of(
            &attempt(
                "/wiki/missing_article",
                "/wiki/Missing_article",
                &wiki("Missing article"),
            ),
            "/wiki/missing_article",
            true,
        )
        .unwrap();
        assert_eq!(page.redirects, 0, "a canonical redirect is no move");
        let probe = Probe {
            path: "/wiki/7qk3x".into(),
            answer: Some(probe),
            settled: true,
        };
        assert!(judge("/wiki/missing_article", &page, &probe).is_some());
        // A probe the wiki did redirect (an older token shape) is judged where it landed too.
        let moved = answer_of(
            &attempt("/wiki/qk3xz", "/wiki/Qk3xz", &wiki("Qk3xz")),
            "/wiki/qk3xz",
            false,
        )
        .unwrap();
        assert_eq!(moved.redirects, 0);
        let moved = Probe {
            path: "/wiki/qk3xz".into(),
            answer: Some(moved),
            settled: true,
        };
        assert!(judge("/wiki/missing_article", &page, &moved).is_some());
        // A real article is not.
        let real = answer_of(
            &attempt(
                "/wiki/Widgets",
                "/wiki/Widgets",
                "<title>Widgets - Acme wiki</title><h1>Widgets</h1><p>A widget is a small \
                 gadget or mechanical device, especially one whose name is unknown or \
                 unspecified, made in the copper works of the river town since 1890.</p>",
            ),
            "/wiki/Widgets",
            true,
        )
        .unwrap();
        assert_eq!(judge("/wiki/Widgets", &real, &probe), None);
    }

    #[test]
    fn a_soft_404_on_a_site_alive_at_its_last_check_waits_for_a_later_check() {
        let alive = || Finding {
            verdict: Verdict::Alive,
            status: Some(200),
            attempts: 1,
            ..Finding::internal_error(String::new())
        };
        let last = |verdict: Option<Verdict>, tries| Some(LastCheck { verdict, tries });
        let held = soft_404(alive(), "same body".into(), last(Some(Verdict::Alive), 0));
        assert_eq!(
            (held.verdict, held.error_kind, held.next),
            (
                Verdict::Dead,
                Some(ErrorKind::Soft404),
                Next::Transient {
                    not_before: Some(CONFIRM_AFTER)
                }
            )
        );
        assert!(held.detail.unwrap().contains("to be confirmed"));
        // The check after it confirms; a site not alive before, or new, is dead at once.
        for last in [
            last(Some(Verdict::Alive), 1),
            last(Some(Verdict::Dead), 0),
            last(None, 0),
            None,
        ] {
            let dead = soft_404(alive(), "same body".into(), last.clone());
            assert_eq!(dead.next, Next::Final, "{last:?}");
            assert_eq!(dead.detail.as_deref(), Some("same body"));
            assert_eq!(dead.status, Some(200));
            assert_eq!(dead.verdict, Verdict::Dead);
        }
    }

    #[test]
    fn the_root_with_a_query_is_judged_only_when_its_title_says_missing() {
        let wordpress = |title: &str| {
            format!(
                "<title>{title} - Acme blog</title><nav>home about posts contact archives \
                 categories</nav><h1>{title}</h1><p>It looks like nothing was found at this \
                 location. Maybe try a search?</p>"
            )
        };
        let answer =
            |path: &str, body: &str| answer_of(&attempt(path, path, body), path, true).unwrap();
        let probe = Probe {
            path: "/7qk3x".into(),
            answer: Some(answer("/7qk3x", &wordpress("Page not found"))),
            settled: true,
        };
        let url = |u: &str| Url::parse(&format!("http://wiki.example{u}")).unwrap();
        let missing = answer("/", &wordpress("Page not found"));
        let path = missing_root(&url("/?p=999999"), &missing).unwrap();
        assert_eq!(path, "/?p=999999");
        assert!(judge(&path, &missing, &probe).is_some());
        assert_eq!(judge("/", &missing, &probe), None, "the root alone");
        let index = missing_root(&url("/index.php?page_id=9"), &missing);
        assert_eq!(index.as_deref(), Some("/?page_id=9"));
        // The home page with a query, the root without one and other paths are not.
        let home = answer("/", &wordpress("Latest posts"));
        assert_eq!(missing_root(&url("/?utm_source=mail"), &home), None);
        assert_eq!(missing_root(&url("/"), &missing), None);
        assert_eq!(missing_root(&url("/?"), &missing), None);
        assert_eq!(missing_root(&url("/docs/a?x=1"), &missing), None);
    }

    #[test]
    fn masks_cover_the_path_its_last_segment_and_a_long_stem() {
        assert_eq!(
            masks("/docs/caf%C3%A9-menu.html"),
            [
                "/docs/caf%C3%A9-menu.html",
                "/docs/café-menu.html",
                "café-menu.html",
                "café-menu"
            ]
        );
        assert_eq!(masks("/a/to.html"), ["/a/to.html", "/a/to.html", "to.html"]);
        assert_eq!(masks("/w/a_b"), ["/w/a_b", "/w/a_b", "a_b", "a_b"]);
    }
}
