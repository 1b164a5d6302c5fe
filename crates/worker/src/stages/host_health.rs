//! What this worker learns about its hosts, shared with the fleet after each write-back (see
//! `crawler_queue::hosts`): which hosts throttled (429/503, and the `Retry-After` they asked),
//! and each troubled host's checks and failures, for its recent error rate. Best effort: the
//! worker's own limiter already knows; the table is for whoever holds the hosts next.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crawler_queue::{ErrorKind, Finding, HostChecks, Outcome, Queue, Throttled};

/// Troubled hosts remembered, so that their successes are counted too and their error rate
/// comes back down; past this many, new ones are counted only while they fail.
const TROUBLED_MAX: usize = 10_000;

#[derive(Default)]
pub struct HostHealth {
    /// Hosts this worker saw fail: their every check is recorded, not only their failures.
    troubled: Mutex<HashSet<String>>,
}

impl HostHealth {
    /// Records what `written` (one write-back's outcomes) says of their hosts.
    pub async fn record(&self, queue: &Queue, written: &[Outcome]) {
        let (throttled, checks) = self.tally(written);
        if !throttled.is_empty() {
            if let Err(error) = queue.record_throttled(&throttled).await {
                tracing::warn!(error = %crate::chain(&error), "cannot record throttled hosts");
            }
        }
        if !checks.is_empty() {
            if let Err(error) = queue.record_checks(&checks).await {
                tracing::warn!(error = %crate::chain(&error), "cannot record hosts' errors");
            }
        }
    }

    fn tally(&self, written: &[Outcome]) -> (Vec<Throttled>, Vec<HostChecks>) {
        let mut throttled: Vec<Throttled> = Vec::new();
        let mut checks: HashMap<&str, HostChecks> = HashMap::new();
        for o in written.iter().filter(|o| !o.finding.deferred) {
            let host = o.site.host.as_str();
            if let Some(status @ (429 | 503)) = o.finding.status {
                if !throttled.iter().any(|t| t.host == host) {
                    throttled.push(Throttled {
                        host: host.to_owned(),
                        status,
                        retry_after: o.finding.retry_after,
                    });
                }
            }
            let c = checks.entry(host).or_insert_with(|| HostChecks {
                host: host.to_owned(),
                checks: 0,
                errors: 0,
            });
            c.checks += 1;
            c.errors += u32::from(failed(&o.finding));
        }
        let mut troubled = self.troubled.lock().expect("troubled hosts lock poisoned");
        let checks = checks
            .into_values()
            .filter(|c| {
                if c.errors > 0 && troubled.len() < TROUBLED_MAX {
                    troubled.insert(c.host.clone());
                }
                c.errors > 0 || troubled.contains(&c.host)
            })
            .collect();
        (throttled, checks)
    }
}

/// A check that found the server struggling: no answer at all (a timeout, a refused or reset
/// connection). A 5xx is an answer, often about one page only; a name that does not resolve
/// has no server to spare.
fn failed(finding: &Finding) -> bool {
    matches!(
        finding.error_kind,
        Some(ErrorKind::Timeout | ErrorKind::Connect)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawler_queue::Verdict;
    use crawler_tests::findings::{alive, claimed_site, outcomes_of};

    fn outcome(host: &str, verdict: Verdict, status: Option<u16>) -> Outcome {
        let site = claimed_site(1, host);
        let finding = Finding {
            verdict,
            status,
            ..alive()
        };
        outcomes_of([site], &finding).remove(0)
    }

    #[test]
    fn healthy_hosts_are_not_recorded_until_they_fail_then_every_check_is() {
        let health = HostHealth::default();
        let first = [
            outcome("ok.example", Verdict::Alive, Some(200)),
            Outcome {
                finding: Finding {
                    error_kind: Some(ErrorKind::Timeout),
                    ..outcome("bad.example", Verdict::Unreachable, None).finding
                },
                ..outcome("bad.example", Verdict::Unreachable, None)
            },
            outcome("broken.example", Verdict::Error, Some(500)),
            outcome("bad.example", Verdict::Alive, Some(200)),
            outcome("gone.example", Verdict::Dead, Some(404)),
        ];
        let (throttled, checks) = health.tally(&first);
        assert!(throttled.is_empty());
        assert_eq!(
            checks,
            [HostChecks {
                host: "bad.example".into(),
                checks: 2,
                errors: 1
            }]
        );
        let (_, checks) = health.tally(&[outcome("bad.example", Verdict::Alive, Some(200))]);
        assert_eq!(checks.len(), 1, "its recovery counts too");
        assert_eq!(checks[0].errors, 0);
    }

    #[test]
    fn a_throttling_host_is_named_once_per_write_back() {
        let health = HostHealth::default();
        let (throttled, checks) = health.tally(&[
            outcome("busy.example", Verdict::Blocked, Some(429)),
            outcome("busy.example", Verdict::Blocked, Some(429)),
        ]);
        assert_eq!(throttled.len(), 1);
        assert!(checks.is_empty(), "a 429 is not a failure of the server");
    }
}
