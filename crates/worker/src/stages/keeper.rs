//! The keeper of the host partitions this worker holds (see `crawler_queue::parts`; what it
//! holds is `parts.rs`), every [`keep_every`] (a third of the lease, at most 5 s) once
//! settled, and every [`MOVING`] while partitions move ([`Cadence`]): extend their lease,
//! notice the ones lost, answer requests for them, balance with the fleet, and load what the
//! fleet learned about their hosts.
//!
//! Balance (the rule, as in the KCL lease table): every worker aims at a fair share,
//! `ceil(PARTS / live workers)`. Below it, it takes free partitions (never held, given back,
//! expired, or of a dead worker). Above it, it hands the excess over: no more claims from
//! them, and each is given back once none of its sites is in flight, so that two workers never
//! ask one host at once. A worker that joins a running fleet gets its share within a few
//! seconds: the others notice it and hand over, then it takes, at a quarter second's cadence.
//!
//! Work-aware balance (see `crawler_queue::balance`): an idle worker asks a worker holding at
//! least two of the partitions with sites due for one, and hands over one with nothing due in
//! exchange; the holder declines while it works the partition's hosts with room to spare
//! ([`answer_asks`]), and otherwise comes straight to it once nothing of it is in flight.
//!
//! A partition handed over goes to its heir once the checks of its hosts are written (those
//! that had sent nothing were cut off, `parts.rs`), so the host never sees two holders at
//! once. For a partition lost (this worker stalled past its lease), their write-back is
//! refused, being fenced by the partition, and the next holder checks those sites again: a
//! stalled worker's cost.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use crawler_check::FleetSaid;
use crawler_queue::{error_chain, DuePart, HeldPart, HostState, PARTS};
use rand::Rng;

use super::ctx::Ctx;

/// How often the partitions are kept once settled: a third of the lease (so a lease is extended
/// twice before it could lapse), and at most 5 s. Each round is a few statements on a
/// 1,024-row table.
pub fn keep_every(lease: Duration) -> Duration {
    (lease / 3).min(Duration::from_secs(5))
}

/// How soon the keeper of a worker that wants more partitions than it could take comes back
/// first, when none is moving; then after twice as long each time, up to the settled period.
pub const SETTLING: Duration = Duration::from_secs(1);

/// How soon the keeper comes back while partitions move (taken, handed over, waiting for their
/// checks to end), so that a fleet starting together, or a worker joining, settles within a
/// few seconds: each move waits for a round of the worker that gives the partition back and
/// one of the worker that takes it, while its hosts are asked by no one (four workers started
/// together: a stall of 3.4-4.7 s on the hosts of a partition moved at 1 s rounds).
pub const MOVING: Duration = Duration::from_millis(250);

/// What a keeper round saw, for when the next one comes ([`Cadence`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Round {
    /// Partitions moved or are moving: taken, handed over, or waiting for their checks to end.
    moving: bool,
    /// Fewer held than the fair share after this round's take.
    wanting: bool,
}

/// When the keeper comes back: every [`MOVING`] while partitions move (this worker's, or,
/// while it is short of its share, others' that it waits for: four workers started together
/// backed off 1 s, then 2, while the first handed over what it took, and a host of a partition
/// in between went unasked for 4 s, a fifth of the politeness bench's `a0`); while this worker
/// wants more than it could take, after [`SETTLING`] (after a move, twice [`MOVING`]), then
/// twice as long each time up to the settled period (the 1,024 partitions do not divide evenly
/// among most fleets, so some worker always wants one); otherwise every [`keep_every`].
pub struct Cadence {
    settled: Duration,
    wait: Duration,
    wanting: bool,
}

impl Cadence {
    pub fn new(lease: Duration) -> Cadence {
        Cadence {
            settled: keep_every(lease),
            wait: SETTLING,
            wanting: false,
        }
    }

    /// The wait before the round after `round`.
    pub fn next(&mut self, round: Round) -> Duration {
        self.wait = match round {
            Round { moving: true, .. } => MOVING,
            Round { wanting: true, .. } if self.wanting => self.wait * 2,
            Round { wanting: true, .. } => SETTLING,
            Round { .. } => self.settled,
        }
        .min(self.settled);
        self.wanting = round.wanting;
        self.wait
    }
}

/// The fair share of partitions among `live` workers.
fn fair_share(live: u64) -> u64 {
    u64::from(PARTS).div_ceil(live.max(1))
}

/// One keeper round: extend, answer requests for partitions held, notice losses, hand over the
/// excess, take up to the share, ask for busy partitions when idle, and load what the fleet
/// learned about the hosts. A round that fails counts as settled: a database gone away
/// is not asked every second.
pub async fn keep(ctx: &Ctx) -> Round {
    match try_keep(ctx).await {
        Ok(round) => round,
        Err(error) => {
            tracing::warn!(error = %error_chain(&error), "cannot keep the host partitions; will try again");
            Round::default()
        }
    }
}

async fn try_keep(ctx: &Ctx) -> Result<Round, crawler_queue::Error> {
    let (queue, parts, config) = (&ctx.queue, &ctx.parts, &ctx.config);
    let mut held = queue.parts().keep(parts.token, config.lease).await?;
    answer_asks(ctx, &mut held).await?;
    let lost = parts.update(&held);
    if lost > 0 {
        tracing::warn!(
            partitions = lost,
            "lost host partitions (their lease expired while this worker was away)"
        );
    }
    let share = fair_share(queue.parts().live_workers(config.dead_after).await?);
    let mut active = held.iter().filter(|p| !p.draining).count() as u64;
    let mut moved = false;
    if active > share {
        queue
            .parts()
            .drain(parts.token, (active - share) as u32)
            .await?;
        // Known as draining before it goes, so that its going is not taken for a loss.
        held = queue.parts().keep(parts.token, config.lease).await?;
        parts.update(&held);
        moved = true;
    }
    moved |= queue
        .parts()
        .release_drained(parts.token, &config.id, config.lease)
        .await?
        > 0;
    if active < share {
        let taken = queue
            .parts()
            .take(
                &config.id,
                parts.token,
                (share - active) as u32,
                config.lease,
            )
            .await?;
        if taken > 0 {
            held = queue.parts().keep(parts.token, config.lease).await?;
            parts.update(&held);
            active += taken;
            moved = true;
        }
    }
    // An ask is answered at the holder's round; the partition, if it comes, is seen at this
    // worker's next settled round, as before: asking often would only ask again.
    balance_by_work(ctx).await?;
    load_host_states(ctx).await?;
    let wanting = active < share;
    // Short of its share while another worker hands partitions over (a fleet started
    // together: the first to start took them all): they are free within a round or two, and
    // their hosts are asked by no one meanwhile.
    let awaited = wanting && queue.parts().draining_elsewhere(parts.token).await?;
    Ok(Round {
        moving: moved || held.iter().any(|p| p.draining) || awaited,
        wanting,
    })
}

/// Answers the requests of idle workers for partitions this worker holds
/// (`crawler_queue::balance`). It declines those it is working (it holds sites of them,
/// claimed and not yet written back) while it has room on the wire: such a host goes at its
/// own pace here, moving it gains nothing, and it would stop while it moves (its checks cut
/// off, nothing asked until the heir's next round). It accepts the others, and all of them
/// when short of room, so that an idle worker takes part of its load: marked draining, they go
/// to their heir once nothing of them is in flight.
async fn answer_asks(ctx: &Ctx, held: &mut [HeldPart]) -> Result<(), crawler_queue::Error> {
    if !held.iter().any(|p| p.asked && !p.draining) {
        return Ok(());
    }
    // Short of room, every request is accepted: which partitions are worked does not matter.
    let worked = match ctx.checker.has_room() {
        true => ctx.held.parts(),
        false => HashSet::new(),
    };
    for part in held.iter_mut().filter(|p| p.asked && !p.draining) {
        if worked.contains(&part.id) {
            if ctx
                .queue
                .parts()
                .decline_ask(ctx.parts.token, part.id)
                .await?
            {
                tracing::debug!(
                    partition = part.id,
                    "declined to hand over a partition whose hosts are being worked"
                );
            }
            part.asked = false;
        } else if ctx
            .queue
            .parts()
            .drain_part(ctx.parts.token, part.id)
            .await?
        {
            tracing::debug!(
                partition = part.id,
                "handing a partition to the worker that asked"
            );
            part.draining = true;
        }
    }
    Ok(())
}

/// Work-aware balance (see `crawler_queue::balance`): an idle worker (its last claim found
/// nothing due, it has nothing in flight, and none of its partitions is among those with the
/// earliest due sites) asks a worker that holds at least two of those for one, and hands over
/// in exchange one partition that has nothing due. One request per round, as KCL steals one.
/// A worker with any work never asks: the hand-over cuts off the checks of the partition at
/// its holder, worth it only to put an idle worker to work (a politeness-bound worker, whose
/// claims come back deferred, is busy, not idle).
async fn balance_by_work(ctx: &Ctx) -> Result<(), crawler_queue::Error> {
    let (queue, parts) = (&ctx.queue, &ctx.parts);
    // Paused, every worker is idle: nothing would be gained by moving partitions around.
    if !parts.is_idle() || !ctx.held.is_empty() || ctx.paused.is_paused() {
        return Ok(());
    }
    let due = queue.parts().due().await?;
    let Some((holder, part)) = busiest_other(&due, parts.token) else {
        return Ok(());
    };
    if !queue
        .parts()
        .ask_for_part(part, holder, parts.token, &ctx.config.id)
        .await?
    {
        return Ok(());
    }
    tracing::debug!(partition = part, "asked a busier worker for a partition");
    let busy: HashSet<i16> = due.iter().map(|p| p.id).collect();
    if let Some(idle) = parts.active().into_iter().find(|id| !busy.contains(id)) {
        queue.parts().drain_part(parts.token, idle).await?;
    }
    Ok(())
}

/// The holder with the most due partitions and one of them, when it has at least two and
/// `mine` has none; a worker's last busy partition is never asked for.
fn busiest_other(due: &[DuePart], mine: i64) -> Option<(i64, i16)> {
    let mut by_holder: HashMap<i64, Vec<i16>> = HashMap::new();
    for part in due {
        if let Some(holder) = part.holder {
            by_holder.entry(holder).or_default().push(part.id);
        }
    }
    let own = by_holder.get(&mine).map_or(0, Vec::len);
    let (&holder, theirs) = by_holder
        .iter()
        .filter(|(&holder, _)| holder != mine)
        .max_by_key(|(&holder, parts)| (parts.len(), holder))?;
    if own > 0 || theirs.len() < 2 {
        return None;
    }
    let pick = theirs[rand::rng().random_range(0..theirs.len())];
    Some((holder, pick))
}

/// Loads what the fleet learned about the hosts of the partitions held into the host book,
/// which takes each change once (`crawler-check`'s `hosts/`): a host-wide deferral is waited
/// out, a throttling host starts at its last rate, and a host decided unreachable is probed
/// once before its checks go on.
async fn load_host_states(ctx: &Ctx) -> Result<(), crawler_queue::Error> {
    let hosts = ctx.queue.hosts().states(ctx.parts.token).await?;
    crate::metrics::hosts_in_backoff(hosts.iter().filter(|h| !h.backoff.is_zero()).count());
    let book = ctx.checker.book();
    for host in &hosts {
        book.hear(&host.host, &fleet_said(host));
    }
    Ok(())
}

/// What the book acts on of a host's `hosts` row.
fn fleet_said(row: &HostState) -> FleetSaid {
    FleetSaid {
        backoff: row.backoff,
        rate: row.rate,
        unreachable: row.unreachable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keeper_comes_back_soon_while_partitions_move_and_backs_off_while_it_only_wants() {
        let secs = Duration::from_secs;
        let moving = Round {
            moving: true,
            wanting: false,
        };
        let wanting = Round {
            moving: false,
            wanting: true,
        };
        let mut cadence = Cadence::new(secs(30));
        assert_eq!(cadence.next(moving), MOVING);
        assert_eq!(cadence.next(wanting), SETTLING);
        assert_eq!(cadence.next(wanting), secs(2));
        assert_eq!(cadence.next(wanting), secs(4));
        assert_eq!(cadence.next(wanting), secs(5), "at most the settled period");
        assert_eq!(cadence.next(Round::default()), secs(5));
        assert_eq!(cadence.next(wanting), SETTLING, "wanting again starts over");
        assert_eq!(cadence.next(moving), MOVING);
        assert_eq!(
            Cadence::new(Duration::from_millis(900)).next(wanting),
            Duration::from_millis(300),
            "never slower than a third of the lease"
        );
    }

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
    fn only_a_worker_with_nothing_due_asks_and_never_for_a_holders_last_busy_partition() {
        let due = |id, holder| DuePart {
            id,
            holder: Some(holder),
            sites: 1,
        };
        let mine = 1;
        assert_eq!(busiest_other(&[due(10, 2)], mine), None, "its last one");
        let (holder, part) = busiest_other(&[due(10, 2), due(11, 2), due(12, 3)], mine).unwrap();
        assert_eq!(holder, 2);
        assert!([10, 11].contains(&part));
        assert_eq!(
            busiest_other(&[due(10, 2), due(11, 2), due(12, 2), due(13, 1)], mine),
            None,
            "a worker with anything due does not ask"
        );
        let free = DuePart {
            holder: None,
            ..due(13, 0)
        };
        assert_eq!(busiest_other(&[free, due(10, 2)], mine), None);
    }
}
