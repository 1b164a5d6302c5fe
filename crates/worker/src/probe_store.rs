//! The fleet's store of soft-404 probes, for the checker (`crawler-check`'s `soft404/`): its
//! [`ProbeStore`] on the queue's view of probes (`Queue::probes`). Here, beside the rest of what
//! the worker asks of the queue: the checker speaks of probes in its own words
//! ([`StoredProbe`], [`LastCheck`]), the queue in its rows (`ProbeRow`, `soft404::LastCheck`),
//! and this is where one becomes the other.

use crawler_check::{LastCheck, ProbeStore, StoredProbe, SOFT_404_TTL as TTL};
use crawler_queue::soft404::{self, ProbeRow};
use crawler_queue::Queue;
use futures::future::BoxFuture;

/// The queue, as the checker's store of the fleet's soft-404 probes.
pub struct FleetProbes(pub Queue);

impl ProbeStore for FleetProbes {
    fn load<'a>(&'a self, host: &'a str, pattern: &'a str) -> BoxFuture<'a, Option<StoredProbe>> {
        Box::pin(async move {
            let ttl = TTL.as_millis() as i64;
            self.0
                .probes()
                .load_probe(host, pattern, ttl)
                .await
                .inspect_err(|e| {
                    let error = crawler_queue::error_chain(e);
                    tracing::debug!(%error, host, "cannot load a soft-404 probe")
                })
                .ok()
                .flatten()
                .map(stored)
        })
    }

    fn save<'a>(
        &'a self,
        host: &'a str,
        pattern: &'a str,
        probe: StoredProbe,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Err(e) = self.0.probes().save_probe(host, pattern, &row(probe)).await {
                let error = crawler_queue::error_chain(&e);
                tracing::debug!(%error, host, "cannot store a soft-404 probe");
            }
        })
    }

    fn patterns<'a>(&'a self, host: &'a str) -> BoxFuture<'a, Vec<String>> {
        Box::pin(async move {
            let ttl = TTL.as_millis() as i64;
            self.0
                .probes()
                .probed_patterns(host, ttl)
                .await
                .inspect_err(|e| {
                    let error = crawler_queue::error_chain(e);
                    tracing::debug!(%error, host, "cannot list a host's soft-404 probes")
                })
                .unwrap_or_default()
        })
    }

    fn last_check<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Option<LastCheck>> {
        Box::pin(async move {
            self.0
                .probes()
                .last_check(url)
                .await
                .inspect_err(|e| {
                    let error = crawler_queue::error_chain(e);
                    tracing::debug!(%error, url, "cannot read a site's last check")
                })
                .ok()
                .flatten()
                .map(last_check)
        })
    }
}

/// The same probe in the other's words: the checker's [`StoredProbe`] and the queue's
/// [`ProbeRow`] have the same fields, and a field one gains fails the build here.
macro_rules! probe_as {
    ($probe:expr, $to:ident) => {{
        let p = $probe;
        $to {
            probe_path: p.probe_path,
            status: p.status,
            final_url: p.final_url,
            redirects: p.redirects,
            fingerprint: p.fingerprint,
            spread: p.spread,
            noindex: p.noindex,
        }
    }};
}

/// A probe row of the queue, as the checker reads it.
fn stored(row: ProbeRow) -> StoredProbe {
    probe_as!(row, StoredProbe)
}

/// A probe of the checker, as the queue stores it.
fn row(probe: StoredProbe) -> ProbeRow {
    probe_as!(probe, ProbeRow)
}

/// A site's last check as the queue holds it, for the checker: a verdict name this version
/// does not know is no verdict.
fn last_check(row: soft404::LastCheck) -> LastCheck {
    LastCheck {
        verdict: row.verdict.and_then(|name| name.parse().ok()),
        tries: row.tries,
    }
}

#[cfg(test)]
mod tests {
    use crawler_queue::Verdict;

    use super::*;

    #[test]
    fn a_probe_row_and_a_stored_probe_are_the_same_probe() {
        let probe = StoredProbe {
            probe_path: "/docs/7qk3x.html".into(),
            status: Some(200),
            final_url: Some("http://a.example/login?next={path}".into()),
            redirects: 2,
            fingerprint: Some(vec![1, 0, 0, 0, 0, 0, 0, 0]),
            spread: -1,
            noindex: true,
        };
        assert_eq!(stored(row(probe.clone())), probe);
        assert_eq!(row(probe.clone()).probe_path, "/docs/7qk3x.html");
        assert_eq!(row(probe).spread, -1);
    }

    #[test]
    fn a_last_check_keeps_its_verdict_when_this_version_knows_it() {
        let row = |verdict: Option<&str>| soft404::LastCheck {
            verdict: verdict.map(str::to_owned),
            tries: 1,
        };
        let alive = last_check(row(Some("alive")));
        assert_eq!((alive.verdict, alive.tries), (Some(Verdict::Alive), 1));
        assert_eq!(last_check(row(Some("gone"))).verdict, None);
        assert_eq!(last_check(row(None)).verdict, None);
    }
}
