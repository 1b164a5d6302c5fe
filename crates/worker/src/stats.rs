//! What this worker has done, as the write-backs stored it: a site counts once, when it gets
//! its verdict. A result sent back for another check counts as retrying, a site given back
//! unchecked (its host busy) as deferred, neither as checked; a result whose lease was lost
//! counts as stale.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crawler_queue::{Completed, Verdict, VerdictCounts};

#[derive(Debug, Default)]
pub struct Stats {
    /// Sites given their verdict (the write-backs' `done`).
    checked: AtomicU64,
    /// The same sites by verdict, in `Verdict::ALL` order.
    verdicts: [AtomicU64; Verdict::ALL.len()],
    /// Results sent back to the queue for another check.
    retrying: AtomicU64,
    /// Sites given back unchecked, their host busy.
    deferred: AtomicU64,
    /// Results dropped because this worker had lost the site's lease meanwhile.
    stale: AtomicU64,
}

impl Stats {
    /// Counts what one write-back stored, here and in the metrics (the one place both count).
    pub fn record(&self, completed: &Completed) {
        crate::metrics::record_completed(completed);
        self.checked.fetch_add(completed.done, Relaxed);
        for ((_, n), count) in completed.verdicts.iter().zip(&self.verdicts) {
            count.fetch_add(n, Relaxed);
        }
        self.retrying.fetch_add(completed.retrying, Relaxed);
        self.deferred.fetch_add(completed.deferred, Relaxed);
        self.stale.fetch_add(completed.stale, Relaxed);
    }

    /// Sites given a verdict by this worker.
    pub fn checked(&self) -> u64 {
        self.checked.load(Relaxed)
    }

    /// Sites given each verdict by this worker.
    pub fn verdicts(&self) -> VerdictCounts {
        let mut counts = VerdictCounts::default();
        for (v, n) in Verdict::ALL.into_iter().zip(&self.verdicts) {
            counts.add(v, n.load(Relaxed));
        }
        counts
    }

    /// Results sent back for another check, so far.
    pub fn retrying(&self) -> u64 {
        self.retrying.load(Relaxed)
    }

    /// `1234 checked (alive 1000, dead 200, …), 3 retrying, 40 deferred, 0 stale`; `excluded
    /// N` only when the worker's filter left some out, as the seed's summary says it.
    pub fn line(&self) -> String {
        let verdicts: Vec<String> = self
            .verdicts()
            .iter()
            .filter(|&(v, n)| v != Verdict::Excluded || n > 0)
            .map(|(v, n)| format!("{v} {n}"))
            .collect();
        format!(
            "{} checked ({}), {} retrying, {} deferred, {} stale",
            self.checked(),
            verdicts.join(", "),
            self.retrying(),
            self.deferred.load(Relaxed),
            self.stale.load(Relaxed)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completed(done: &[Verdict], retrying: u64, stale: u64) -> Completed {
        Completed {
            done: done.len() as u64,
            verdicts: done.iter().copied().collect(),
            retrying,
            stale,
            ..Completed::default()
        }
    }

    #[test]
    fn a_site_counts_once_when_it_gets_its_verdict_not_when_it_is_retried() {
        let stats = Stats::default();
        // First round: two sites answer 500 and go back for a retry; one is dead.
        stats.record(&completed(&[Verdict::Dead], 2, 0));
        // Second round: the two answer 500 again, and that is their verdict.
        stats.record(&completed(&[Verdict::Error, Verdict::Error], 0, 0));
        assert_eq!(stats.checked(), 3);
        assert_eq!(stats.retrying(), 2);
        assert_eq!(
            stats.line(),
            "3 checked (alive 0, dead 1, blocked 0, unreachable 0, error 2), 2 retrying, \
             0 deferred, 0 stale"
        );
        stats.record(&completed(&[Verdict::Excluded], 0, 0));
        assert!(
            stats.line().contains(", error 2, excluded 1), "),
            "{}",
            stats.line()
        );
    }

    #[test]
    fn a_result_whose_lease_was_lost_is_stale_not_checked() {
        let stats = Stats::default();
        stats.record(&completed(&[Verdict::Alive], 0, 4));
        assert_eq!(stats.checked(), 1);
        assert_eq!(stats.verdicts().get(Verdict::Alive), 1);
        assert!(stats.line().ends_with("0 retrying, 0 deferred, 4 stale"));
    }

    #[test]
    fn a_site_given_back_unchecked_is_deferred_not_retrying() {
        let stats = Stats::default();
        stats.record(&Completed {
            deferred: 40,
            ..Completed::default()
        });
        assert_eq!((stats.checked(), stats.retrying()), (0, 0));
        assert!(stats.line().ends_with("0 retrying, 40 deferred, 0 stale"));
    }

    #[test]
    fn the_counters_are_what_the_stats_count_from_the_same_write_backs() {
        let stats = Stats::default();
        let text = crate::metrics::rendered(|| {
            stats.record(&Completed {
                done: 3,
                verdicts: [Verdict::Dead, Verdict::Alive, Verdict::Alive]
                    .into_iter()
                    .collect(),
                retrying: 2,
                deferred: 4,
                stale: 1,
            });
        });
        for line in [
            r#"crawler_verdicts_total{verdict="alive"} 2"#,
            r#"crawler_verdicts_total{verdict="dead"} 1"#,
            r#"crawler_verdicts_total{verdict="error"} 0"#,
            "crawler_retries_total 2",
            "crawler_deferred_total 4",
            "crawler_dropped_writes_total 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        assert_eq!(stats.checked(), 3);
    }
}
