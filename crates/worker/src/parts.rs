//! The host partitions this worker holds (see `crawler_queue::parts`), kept every
//! [`keep_every`] (a third of the lease, at most 5 s):
//! extend their lease, notice the ones lost, balance with the fleet, and load what the fleet
//! learned about their hosts.
//!
//! Balance (the rule, as in the KCL lease table): every worker aims at a fair share,
//! `ceil(PARTS / live workers)`. Below it, it takes free partitions (never held, given back,
//! expired, or of a dead worker). Above it, it hands the excess over: no more claims from
//! them, and each is given back once none of its sites is in flight, so that two workers never
//! ask one host at once. A worker that joins a running fleet gets its share within about two
//! keeper periods (10 s by default): one for the others to notice it and hand over, one for
//! it to take.
//!
//! A partition lost (its lease expired while this worker was stalled, and another took it)
//! cancels the checks in flight on its hosts at once; their write-back would be refused anyway.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crawler_queue::{HeldPart, PARTS};
use rand::Rng;
use tokio_util::sync::CancellationToken;

use crate::run::Ctx;

/// The partitions held, each with a token cancelled when it is lost.
pub struct Parts {
    /// This worker's parts token: fresh per run, stamped on every partition it takes.
    pub token: i64,
    held: Mutex<HashMap<i16, Held>>,
}

/// One partition held.
struct Held {
    /// Cancelled when the partition is lost.
    lost: CancellationToken,
    /// Being handed over: when it goes, it was given back, not lost.
    draining: bool,
}

impl Default for Parts {
    fn default() -> Self {
        Parts {
            token: rand::rng().random_range(1..i64::MAX),
            held: Mutex::default(),
        }
    }
}

impl Parts {
    /// A token that is cancelled when partition `part` is lost; `None` if it is not held.
    pub fn watch(&self, part: i16) -> Option<CancellationToken> {
        let held = self.held.lock().expect("parts lock poisoned");
        held.get(&part).map(|h| h.lost.child_token())
    }

    /// Replaces the held set with what the database says; cancels the ones gone, and returns
    /// how many of them were lost (gone without being handed over).
    fn update(&self, now_held: &[HeldPart]) -> usize {
        let mut held = self.held.lock().expect("parts lock poisoned");
        let mut kept: HashMap<i16, Held> = HashMap::with_capacity(now_held.len());
        for part in now_held {
            let lost = held.remove(&part.id).map(|h| h.lost).unwrap_or_default();
            let draining = part.draining;
            kept.insert(part.id, Held { lost, draining });
        }
        let mut lost = 0;
        for (_, gone) in held.drain() {
            lost += usize::from(!gone.draining);
            gone.lost.cancel();
        }
        *held = kept;
        lost
    }

    /// Cancels everything (the worker is stopping and gives its partitions back).
    pub fn clear(&self) {
        for (_, held) in self.held.lock().expect("parts lock poisoned").drain() {
            held.lost.cancel();
        }
    }
}

/// How often the partitions are kept: a third of the lease (so a lease is extended twice before
/// it could lapse), and at most 5 s, so that a fleet rebalances within seconds of a worker
/// joining or leaving. Each round is a few statements on a 1,024-row table.
pub fn keep_every(lease: Duration) -> Duration {
    (lease / 3).min(Duration::from_secs(5))
}

/// The fair share of partitions among `live` workers.
fn fair_share(live: u64) -> u64 {
    u64::from(PARTS).div_ceil(live.max(1))
}

/// One keeper round: extend, notice losses, hand over the excess, take up to the share, and
/// load the hosts' shared backoffs into the checker.
pub async fn keep(ctx: &Ctx) {
    if let Err(error) = try_keep(ctx).await {
        tracing::warn!(error = %crate::chain(&error), "cannot keep the host partitions; will try again");
    }
}

async fn try_keep(ctx: &Ctx) -> Result<(), crawler_queue::Error> {
    let (queue, parts, config) = (&ctx.queue, &ctx.parts, &ctx.config);
    let held = queue.keep_parts(parts.token, config.lease).await?;
    let lost = parts.update(&held);
    if lost > 0 {
        tracing::warn!(
            partitions = lost,
            "lost host partitions (their lease expired while this worker was away)"
        );
    }
    let share = fair_share(queue.live_workers(config.dead_after).await?);
    let active = held.iter().filter(|p| !p.draining).count() as u64;
    if active > share {
        queue
            .drain_parts(parts.token, (active - share) as u32)
            .await?;
    }
    queue.release_drained(parts.token, &config.id).await?;
    if active < share {
        let taken = queue
            .take_parts(
                &config.id,
                parts.token,
                (share - active) as u32,
                config.lease,
            )
            .await?;
        if taken > 0 {
            let held = queue.keep_parts(parts.token, config.lease).await?;
            parts.update(&held);
        }
    }
    for (host, wait) in queue.host_backoffs(parts.token).await? {
        ctx.checker.defer_host(&host, wait);
    }
    Ok(())
}

impl Parts {
    /// How many partitions are held, those being handed over included (the metrics' gauge).
    pub fn count(&self) -> usize {
        self.held.lock().expect("parts lock poisoned").len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fair_share_covers_every_partition() {
        assert_eq!(fair_share(0), 1024);
        assert_eq!(fair_share(1), 1024);
        assert_eq!(fair_share(3), 342);
        for live in 1..300 {
            assert!(fair_share(live) * live >= u64::from(PARTS));
        }
    }

    #[test]
    fn a_lost_partition_cancels_its_watchers() {
        let parts = Parts::default();
        let held = |ids: &[i16]| -> Vec<HeldPart> {
            ids.iter()
                .map(|&id| HeldPart {
                    id,
                    draining: false,
                })
                .collect()
        };
        assert_eq!(parts.update(&held(&[1, 2])), 0);
        let on_two = parts.watch(2).expect("held");
        assert!(parts.watch(3).is_none());
        assert_eq!(parts.update(&held(&[1])), 1);
        assert!(on_two.is_cancelled());
        assert!(!parts.watch(1).unwrap().is_cancelled());
    }

    #[test]
    fn a_partition_handed_over_is_not_counted_as_lost() {
        let parts = Parts::default();
        parts.update(&[HeldPart {
            id: 5,
            draining: true,
        }]);
        assert_eq!(parts.update(&[]), 0);
    }
}
