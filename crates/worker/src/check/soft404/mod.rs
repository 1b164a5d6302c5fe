//! Soft 404s (`--soft-404`): dead pages that answer 200 (a "not found" template, a redirect
//! home or to a login page, an app shell for every path).
//!
//! As Bar-Yossef et al. (WWW 2004): ask the host for a path that cannot exist, in the same
//! directory and with the same extension, and compare. Before a page of a host is checked, the
//! worker gets the host's probe for the page's pattern (`probe.rs`: cached, shared through the
//! database, or made now through the host's limits like any request). A host whose probe gets
//! an honest 4xx/5xx is checked as without `--soft-404`; otherwise the page is asked with GETs
//! keeping the first 64 KiB of a text body, and an alive answer is compared with the probe's
//! (`decide.rs`, on the fingerprints of `fingerprint.rs`).
//!
//! # Layout
//! - `probe.rs`: patterns, probe paths, the per-worker cache and the fleet's store
//! - `fingerprint.rs`: shingles of the visible text, with echoed paths masked; title, noindex
//! - `decide.rs`: the decision and its reason

mod decide;
mod fingerprint;
mod probe;

use std::sync::Arc;
use std::time::Duration;

use url::Url;

pub(crate) use self::probe::{Probe, Probes};
pub use self::probe::{ProbeStore, TTL};

use self::decide::{decide, mask_url, Answer, Decision};
use self::probe::{pattern_of, probe_path, Pattern};
use super::classify::without_userinfo;
use super::reply::{Attempt, End};
use super::Inner;

impl Inner {
    /// The probe `url` is to be compared with: `None` when `--soft-404` is off, for the root,
    /// or when the host answered its probe honestly; `Err` with how long its host is busy.
    pub(crate) async fn soft_404_probe(&self, url: &Url) -> Result<Option<Arc<Probe>>, Duration> {
        if !self.config.soft_404 {
            return Ok(None);
        }
        let Some(pattern) = pattern_of(url) else {
            return Ok(None);
        };
        let host = url.host_str().unwrap_or_default();
        let make = async {
            let (path, first) = self.probe_once(url, &pattern).await?;
            // A not-found page in the host's layout is asked twice, to learn what of it
            // changes between requests (dates, request ids, "popular now" lists).
            let twice = first.as_ref().is_some_and(|a| {
                a.redirects == 0 && a.body.as_ref().is_some_and(|b| !b.shingles.is_empty())
            });
            if !twice {
                return Ok(Probe {
                    path,
                    answer: first,
                });
            }
            let (_, second) = self.probe_once(url, &pattern).await?;
            Ok(Probe {
                path,
                answer: first.zip(second).and_then(|(a, b)| combined(a, b)),
            })
        };
        let probe = self.probes.get(host, &pattern, make).await?;
        Ok(probe.compares().then_some(probe))
    }

    /// Asks `url`'s host for a path of `pattern` that cannot exist: the path and the answer.
    async fn probe_once(
        &self,
        url: &Url,
        pattern: &Pattern,
    ) -> Result<(String, Option<Answer>), Duration> {
        let path = probe_path(pattern);
        let mut probe_url = url.clone();
        probe_url.set_path(&path);
        probe_url.set_query(None);
        tracing::debug!(url = %probe_url, "soft-404 probe");
        let attempt = self.attempt(&probe_url, true).await;
        if let Some(wait) = attempt.busy() {
            return Err(wait);
        }
        let answer = answer_of(&attempt, &path);
        Ok((path, answer))
    }

    /// Why `attempt`, the final answer for `url`, is a soft 404 against `probe`, if it is.
    pub(crate) fn soft_404_of(
        &self,
        url: &Url,
        attempt: &Attempt,
        probe: &Probe,
    ) -> Option<String> {
        let End::Answered(reply) = &attempt.end else {
            return None;
        };
        if !reply.accepted || !(200..300).contains(&reply.status) {
            return None;
        }
        let page = answer_of(attempt, url.path())?;
        let probe_answer = probe.answer.as_ref()?;
        match decide(url.path(), &page, &probe.path, probe_answer) {
            Decision::Alive => None,
            Decision::Soft404(reason) => Some(reason.chars().take(1000).collect()),
        }
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

/// What the decision needs of an answer to `path`: `None` when no server answered.
fn answer_of(attempt: &Attempt, path: &str) -> Option<Answer> {
    let End::Answered(reply) = &attempt.end else {
        return None;
    };
    let final_url = attempt.final_url.clone().map(without_userinfo)?;
    let (body, signals) = match &reply.body {
        Some(body) => {
            let (fp, signals) = fingerprint::fingerprint(body, &masks(path));
            (Some(fp), signals)
        }
        None => Default::default(),
    };
    Some(Answer {
        status: reply.status,
        final_url: mask_url(&final_url, path),
        redirects: attempt.redirects,
        body,
        spread: 0,
        signals,
    })
}

/// What a page may echo of the path it was asked for: the path (as sent and decoded), its
/// last segment, and that segment without its extension when it is long enough to be no
/// common word.
fn masks(path: &str) -> Vec<String> {
    let decoded = percent_decode(path);
    let last = decoded.rsplit('/').next().unwrap_or_default().to_owned();
    let stem = last.split('.').next().unwrap_or_default().to_owned();
    let mut masks = vec![path.to_owned(), decoded];
    if last.len() >= 3 {
        masks.push(last);
    }
    if stem.len() >= 6 {
        masks.push(stem);
    }
    masks
}

fn percent_decode(path: &str) -> String {
    url::form_urlencoded::parse(format!("p={}", path.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
