//! What this worker learns about its hosts, shared with the fleet after each write-back (see
//! `crawler_queue::hosts`): which hosts throttled (429/503, and the `Retry-After` they asked),
//! and each troubled host's checks and failures, for its recent error rate. Best effort: the
//! worker's own limiter already knows; the table is for whoever holds the hosts next.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crawler_queue::{ErrorKind, Finding, HostChecks, HostPace, Next, Outcome, Queue, Throttled};

use crate::check::{is_throttling, Checker};

/// How often the hosts' paces (throttled rates, deferrals) are shared with the fleet.
const PACES_EVERY: Duration = Duration::from_secs(2);

/// Troubled hosts remembered, so that their successes are counted too and their error rate
/// comes back down; past this many, new ones are counted only while they fail.
const TROUBLED_MAX: usize = 10_000;

#[derive(Default)]
pub struct HostHealth {
    /// Hosts this worker saw fail: their every check is recorded, not only their failures.
    troubled: Mutex<HashSet<String>>,
    /// The paces last shared, and when.
    paces: Mutex<(HashMap<String, HostPace>, Option<Instant>)>,
}

impl HostHealth {
    /// Shares what the checker decided of its hosts since last time: hosts decided unreachable
    /// (every pending URL of each gets its verdict in one write), hosts that answered again,
    /// and the paces of throttled and deferred hosts (every [`PACES_EVERY`]). A decision the
    /// database refused is tried again next time; the checks of the host end the same way
    /// meanwhile, so nothing waits on it.
    pub async fn share(&self, queue: &Queue, checker: &Checker, parts_token: i64) {
        for decision in checker.take_host_decisions() {
            match queue
                .decide_host(
                    parts_token,
                    &decision.host,
                    &decision.origin,
                    &decision.unreachable,
                )
                .await
            {
                Ok(sites) => tracing::info!(
                    origin = %decision.origin,
                    sites,
                    why = %decision.unreachable.detail,
                    "host decided unreachable; its pending sites have their verdict"
                ),
                Err(error) => {
                    tracing::warn!(error = %crate::chain(&error), host = %decision.host, "cannot write a host's decision; its checks end without requests meanwhile");
                    checker.retake_host_decision(decision);
                }
            }
        }
        for host in checker.take_host_recoveries() {
            if let Err(error) = queue.record_unreachable(&host, None).await {
                tracing::warn!(error = %crate::chain(&error), %host, "cannot record that a host answers again");
            }
        }
        let changed = {
            let mut paces = self.paces.lock().expect("paces lock poisoned");
            let (last, at) = &mut *paces;
            if at.is_some_and(|at| at.elapsed() < PACES_EVERY) {
                return;
            }
            *at = Some(Instant::now());
            let now: HashMap<String, HostPace> = checker
                .pace_reports()
                .into_iter()
                .map(|p| {
                    let pace = HostPace {
                        host: p.host.clone(),
                        rate: p.rate,
                        deferred: p.deferred.unwrap_or_default(),
                    };
                    (p.host, pace)
                })
                .collect();
            // Back to full rate and not deferred: the fleet forgets the rate.
            let mut changed: Vec<HostPace> = last
                .keys()
                .filter(|h| !now.contains_key(*h))
                .map(|h| HostPace {
                    host: h.clone(),
                    rate: None,
                    deferred: Duration::ZERO,
                })
                .collect();
            changed.extend(
                now.values()
                    .filter(|p| {
                        last.get(&p.host)
                            .is_none_or(|l| l.rate != p.rate || p.deferred > l.deferred)
                    })
                    .cloned(),
            );
            *last = now;
            changed
        };
        if !changed.is_empty() {
            if let Err(error) = queue.record_paces(&changed).await {
                tracing::warn!(error = %crate::chain(&error), "cannot record the hosts' paces");
            }
        }
    }

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
        for o in written.iter().filter(|o| !o.finding.next.is_deferred()) {
            let host = o.site.host.as_str();
            let asked = o.finding.attempts > 0;
            if let Some(status) = o.finding.status.filter(|&s| asked && is_throttling(s)) {
                if !throttled.iter().any(|t| t.host == host) {
                    throttled.push(Throttled {
                        host: host.to_owned(),
                        status,
                        retry_after: match o.finding.next {
                            Next::Transient { not_before } => not_before,
                            Next::Final | Next::Deferred { .. } => None,
                        },
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
