//! Findings and outcomes the queue tests and benchmarks write back, without an HTTP check, and
//! the claimed sites they are about.

use std::time::Duration;

use crawler_queue::{Finding, Next, Outcome, Site, Verdict};

/// A 200: alive, final, no redirect.
pub fn alive() -> Finding {
    Finding {
        verdict: Verdict::Alive,
        status: Some(200),
        error_kind: None,
        final_url: None,
        redirects: 0,
        latency: Duration::from_millis(20),
        attempts: 1,
        next: Next::Final,
        detail: None,
        fragment: None,
        moved_to: None,
    }
}

/// Site `id` of `host` as a claim (token 7) hands it to a worker, at `https://{host}/`.
pub fn claimed_site(id: i64, host: &str) -> Site {
    Site {
        id,
        token: 7,
        url: format!("https://{host}/"),
        host: host.to_owned(),
        part: 0,
        tries: 0,
        crawl: None,
        depth: None,
        last_verdict: None,
        parts_token: None,
    }
}

/// Every site of `sites` with `finding`.
pub fn outcomes_of(sites: impl IntoIterator<Item = Site>, finding: &Finding) -> Vec<Outcome> {
    sites
        .into_iter()
        .map(|site| Outcome {
            site,
            finding: finding.clone(),
        })
        .collect()
}
