//! What this worker learns about its hosts, shared with the fleet after each write-back (see
//! `crawler_queue::hosts`): hosts decided unreachable and hosts that answer again, which hosts
//! throttled (429/503, and the `Retry-After` they asked), the paces that changed, and each
//! troubled host's checks and failures, for its recent error rate. What the worker knows of a
//! host, and what it last told the fleet, is in the checker's host book (`crawler-check`'s
//! `hosts/`);
//! this stage writes it. Best effort: the worker's own limiter already knows; the table is for
//! whoever holds the hosts next.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crawler_check::{is_throttling, Checker, HostDecision, PaceReport};
use crawler_queue::{
    ErrorKind, Finding, HostChecks, HostPace, Next, Outcome, Queue, Throttled, Unreachable,
};

/// How often the hosts' paces (throttled rates, deferrals) are shared with the fleet.
const PACES_EVERY: Duration = Duration::from_secs(2);

pub struct HostSharing {
    /// Whose host book this stage writes.
    checker: Checker,
    /// When the paces were last shared.
    paces_shared: Mutex<Option<Instant>>,
}

impl HostSharing {
    pub fn new(checker: Checker) -> Self {
        Self {
            checker,
            paces_shared: Mutex::default(),
        }
    }

    /// Shares what the checker decided of its hosts since last time: hosts decided unreachable
    /// (every pending URL of each gets its verdict in one write), hosts that answered again,
    /// and the paces of throttled and deferred hosts (every [`PACES_EVERY`]). A decision the
    /// database refused is tried again next time; the checks of the host end the same way
    /// meanwhile, so nothing waits on it.
    pub async fn share(&self, queue: &Queue, parts_token: i64) {
        let book = self.checker.book();
        for decision in book.take_decisions() {
            let HostDecision { host, origin, .. } = &decision;
            match queue
                .hosts()
                .decide(parts_token, host, origin, &unreachable(&decision))
                .await
            {
                Ok(sites) => tracing::info!(
                    %origin,
                    sites,
                    why = %decision.detail,
                    "host decided unreachable; its pending sites have their verdict"
                ),
                Err(error) => {
                    tracing::warn!(error = %crawler_queue::error_chain(&error), %host, "cannot write a host's decision; its checks end without requests meanwhile");
                    book.retake_decision(decision);
                }
            }
        }
        for host in book.take_recoveries() {
            if let Err(error) = queue.hosts().record_unreachable(&host, None).await {
                tracing::warn!(error = %crawler_queue::error_chain(&error), %host, "cannot record that a host answers again");
            }
        }
        let changed = {
            let mut at = self.paces_shared.lock().expect("paces lock poisoned");
            if at.is_some_and(|at| at.elapsed() < PACES_EVERY) {
                return;
            }
            *at = Some(Instant::now());
            book.pace_changes()
                .into_iter()
                .map(pace)
                .collect::<Vec<_>>()
        };
        if !changed.is_empty() {
            if let Err(error) = queue.hosts().record_paces(&changed).await {
                tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot record the hosts' paces");
            }
        }
    }

    /// Records what `written` (one write-back's outcomes) says of their hosts.
    pub async fn record(&self, queue: &Queue, written: &[Outcome]) {
        let book = self.checker.book();
        let troubled = |c: &HostChecks| book.troubled(&c.host, c.checks, c.errors);
        let (throttled, checks) = tally(written, troubled);
        if !throttled.is_empty() {
            if let Err(error) = queue.hosts().record_throttled(&throttled).await {
                tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot record throttled hosts");
            }
        }
        if !checks.is_empty() {
            if let Err(error) = queue.hosts().record_checks(&checks).await {
                tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot record hosts' errors");
            }
        }
    }
}

/// What the fleet's `hosts` row keeps of a host decided unreachable: the error kind its pending
/// sites get, and the detail that says it was decided for the host.
fn unreachable(decision: &HostDecision) -> Unreachable {
    Unreachable {
        kind: decision.kind,
        detail: decision.detail.clone(),
    }
}

/// A host's pace as the fleet's `hosts` row keeps it: no deferral is a zero one.
fn pace(report: PaceReport) -> HostPace {
    HostPace {
        host: report.host,
        rate: report.rate,
        deferred: report.deferred.unwrap_or_default(),
    }
}

/// The throttled hosts of one write-back, and the checks of its troubled hosts: `troubled`
/// takes a host's checks and says whether they are counted (`HostBook::troubled`).
fn tally(
    written: &[Outcome],
    troubled: impl Fn(&HostChecks) -> bool,
) -> (Vec<Throttled>, Vec<HostChecks>) {
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
    let checks = checks.into_values().filter(|c| troubled(c)).collect();
    (throttled, checks)
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
        let checker = Checker::new(Default::default()).unwrap();
        let troubled = |c: &HostChecks| checker.book().troubled(&c.host, c.checks, c.errors);
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
        let (throttled, checks) = tally(&first, troubled);
        assert!(throttled.is_empty());
        assert_eq!(
            checks,
            [HostChecks {
                host: "bad.example".into(),
                checks: 2,
                errors: 1
            }]
        );
        let (_, checks) = tally(
            &[outcome("bad.example", Verdict::Alive, Some(200))],
            troubled,
        );
        assert_eq!(checks.len(), 1, "its recovery counts too");
        assert_eq!(checks[0].errors, 0);
    }

    #[test]
    fn a_throttling_host_is_named_once_per_write_back() {
        let (throttled, checks) = tally(
            &[
                outcome("busy.example", Verdict::Blocked, Some(429)),
                outcome("busy.example", Verdict::Blocked, Some(429)),
            ],
            |c| c.errors > 0,
        );
        assert_eq!(throttled.len(), 1);
        assert!(checks.is_empty(), "a 429 is not a failure of the server");
    }
}
