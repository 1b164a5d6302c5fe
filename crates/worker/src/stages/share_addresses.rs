//! This worker's shares of the server addresses it asks (`--ip-concurrency`, `--ip-rate`), kept
//! with the fleet: the rule is `crawler_queue::addresses`, what the checker does with a share
//! is `crawler_check`'s `addresses.rs`; this stage carries one to the other.
//!
//! A round, whenever a request waits for an address not registered yet, and every [`ROUND`]
//! otherwise: give back the addresses idle for `crawler_check::ADDRESS_IDLE`, register the
//! ones wanted, read the holders and apply the shares, tell when the starts of shares that
//! shrank are out of the window (`Addresses::clear`), then, when it shares any, acknowledge
//! that read once no address has more requests in flight than its new share (so that the
//! workers who wait for this acknowledgement can count on it). The holders of every address
//! held are read at most every [`ROUND`]; a round between two such reads reads those of the
//! new addresses only, and acknowledges nothing. A worker alone on its addresses writes only
//! its new ones. A request to a new address therefore waits for one round (a few statements
//! on its own addresses, at most [`GATHER`] after the last) before it goes; a worker alone on
//! an address takes its whole budget then.
//!
//! The fleet's only worker skips all of that: at its start, if it finds no other live worker
//! (`Addresses::try_alone`), it takes every address as its own from the first request, with no
//! row and no round trip, and only counts the other workers every [`ROUND`]. When one has
//! started, it registers every address it holds, then clears its flag
//! (`Addresses::leave_alone`), and shares from then on. A worker that finds another alone
//! registers and uses no address until that flag is cleared. So a list of new servers costs a
//! worker alone nothing here (the memory bench's 20,000 servers: 3.3-3.7 s with a round before
//! each new address, 2.6-2.9 s without, as with the limits off).
//!
//! Beside the rounds, never inside one, the names asked at each address and the requests
//! waiting per address are written for the reports every [`LOADS_EVERY`]: on a list of 20,000
//! hosts (the memory bench), the names took SQLite one to four seconds a round, and every new
//! address's first request waited that long.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crawler_check::AddressShare;
use crawler_queue::{error_chain, AddressHolders, AddressLoad, Among};
use tokio_util::sync::CancellationToken;

use super::ctx::Ctx;

/// How often the holders are read when nothing new is wanted: how soon a share grows back
/// after another worker gave its part back, and how soon a worker that registered after this
/// one is acknowledged.
pub const ROUND: Duration = Duration::from_millis(250);
/// The least time between two rounds started for new addresses: the addresses wanted
/// meanwhile are registered together (politeness z, a thousand servers at once, made 300
/// rounds of six statements in its first second, one per few addresses).
const GATHER: Duration = Duration::from_millis(20);
/// How often the host names asked at each address and the requests waiting per address are
/// written, for the per-address view (loads only for the addresses requests wait for, and
/// those that had some).
const LOADS_EVERY: Duration = Duration::from_secs(2);
/// How often the shares of workers gone from the `workers` table are deleted.
const FORGET_DEAD_EVERY: Duration = Duration::from_secs(60);
/// How often every address held is registered again (rows already there are left as they
/// are): a worker taken for dead and deleted while it was only stalled gets its rows back,
/// unconfirmed, rather than using shares the others no longer count.
const REREGISTER_EVERY: Duration = Duration::from_secs(10);

/// Keeps this worker's shares until `done`, then gives them all back.
pub async fn share_loop(ctx: Arc<Ctx>, done: CancellationToken) {
    let book = ctx.checker.addresses();
    if !book.is_on() {
        return;
    }
    let id = &ctx.config.id;
    // Rows of an earlier process of the same id are not this one's.
    if let Err(error) = ctx.queue.addresses().release_all(id).await {
        tracing::warn!(error = %error_chain(&error), "cannot clear this worker's old address shares");
    }
    match ctx
        .queue
        .addresses()
        .try_alone(id, ctx.config.dead_after)
        .await
    {
        Ok(alone) => book.set_alone(alone),
        Err(error) => {
            tracing::warn!(error = %error_chain(&error), "cannot tell whether this worker is alone; it shares its server addresses with the fleet")
        }
    }
    // The rounds register and confirm; what is told for the reports is written beside them,
    // so that thousands of names never hold up a new address's first request.
    tokio::join!(rounds(&ctx, &done), tells(&ctx, &done));
    if let Err(error) = ctx.queue.addresses().release_all(id).await {
        tracing::warn!(error = %error_chain(&error), "cannot give back the server addresses' shares; they count until this worker is found dead");
    }
}

/// Rounds until `done`: one whenever a request waits for an address not registered, at most
/// every [`GATHER`], and every [`ROUND`] otherwise.
async fn rounds(ctx: &Ctx, done: &CancellationToken) {
    let book = ctx.checker.addresses();
    let mut state = Rounds::default();
    let mut last_round = tokio::time::Instant::now();
    loop {
        tokio::select! {
            _ = done.cancelled() => break,
            _ = book.wait_for_wanted(ROUND) => {}
        }
        tokio::select! {
            _ = done.cancelled() => break,
            _ = tokio::time::sleep_until(last_round + GATHER) => {}
        }
        last_round = tokio::time::Instant::now();
        if let Err(error) = round(ctx, &mut state).await {
            tracing::warn!(error = %error_chain(&error), "cannot keep the server addresses' shares; will try again");
        }
    }
}

/// What the rounds remember between them.
#[derive(Default)]
struct Rounds {
    forgot_dead_at: Option<Instant>,
    registered_at: Option<Instant>,
    /// The last read of the holders of every address held (alone: the last count of the
    /// other workers).
    read_at: Option<Instant>,
    /// No longer alone, but the addresses taken alone not yet registered: the flag that
    /// holds the others back stays until they are.
    leaving_alone: bool,
    /// Another worker was alone at the last read of every address held: this one registers
    /// and uses none until it is not. Looked up with that read only, not before each new
    /// address: a worker that starts while this one is live counts it and is not alone.
    held_back: bool,
}

/// Tells the fleet's reports every [`LOADS_EVERY`] until `done`, and once more then: the host
/// names asked at each address, and the requests waiting per address.
async fn tells(ctx: &Ctx, done: &CancellationToken) {
    let mut loads = HashMap::new();
    loop {
        let stop = tokio::select! {
            _ = done.cancelled() => true,
            _ = tokio::time::sleep(LOADS_EVERY) => false,
        };
        if let Err(error) = tell(ctx, &mut loads).await {
            tracing::warn!(error = %error_chain(&error), "cannot write the server addresses' names and loads; will try again");
        }
        if stop {
            break;
        }
    }
}

async fn round(ctx: &Ctx, rounds: &mut Rounds) -> Result<(), crawler_queue::Error> {
    let book = ctx.checker.addresses();
    let addresses = ctx.queue.addresses();
    let id = &ctx.config.id;
    let idle = book.take_idle();
    if !idle.is_empty() {
        addresses.release(id, &texts(&idle)).await?;
    }
    if rounds
        .forgot_dead_at
        .is_none_or(|at| at.elapsed() >= FORGET_DEAD_EVERY)
    {
        rounds.forgot_dead_at = Some(Instant::now());
        addresses.forget_dead().await?;
    }
    if book.is_alone() {
        return alone_round(ctx, rounds).await;
    }
    if rounds.leaving_alone {
        addresses.leave_alone(id, &texts(&book.held())).await?;
        rounds.leaving_alone = false;
        rounds.registered_at = Some(Instant::now());
    }
    if rounds
        .registered_at
        .is_some_and(|at| at.elapsed() >= REREGISTER_EVERY)
    {
        addresses.register(id, &texts(&book.held())).await?;
        rounds.registered_at = Some(Instant::now());
    }
    rounds.registered_at.get_or_insert_with(Instant::now);
    let wanted = book.wanted();
    // The holders of every address held at most every ROUND; between, those of the new only.
    let among = if rounds.read_at.is_none_or(|at| at.elapsed() >= ROUND) {
        rounds.read_at = Some(Instant::now());
        Some(Among::All)
    } else if !wanted.is_empty() {
        Some(Among::These)
    } else {
        None
    };
    if among == Some(Among::All) {
        rounds.held_back = addresses.alone_elsewhere(id, ctx.config.dead_after).await?;
    }
    if among.is_some() && rounds.held_back {
        // Its addresses are not registered yet: none is ours to use or register until then.
        book.unregister(&wanted);
        return Ok(());
    }
    if let Some(among) = among {
        let read = match addresses
            .join(id, &texts(&wanted), ctx.config.dead_after, among)
            .await
        {
            Ok(read) => read,
            Err(error) => {
                book.unregister(&wanted);
                return Err(error);
            }
        };
        let shares = shares(&read.addresses);
        if among == Among::These {
            book.set_shares_of(&wanted, &shares);
        } else {
            book.set_shares(&shares);
            // Shares that shrank while closer starts were in the window: when they are out,
            // written before the acknowledgement that lets the newcomer count on them.
            let clears = book.clears();
            if !clears.is_empty() {
                let clears: Vec<(String, Duration)> = clears
                    .into_iter()
                    .map(|(ip, within)| (ip.to_string(), within))
                    .collect();
                addresses.clear(id, &clears).await?;
            }
            // Only a worker that shares an address can be waited for (a newcomer's row is in
            // the read that counts it): alone everywhere, it writes nothing.
            if !read.addresses.is_empty() && book.within_shares() {
                addresses.acknowledge(id, read.started_at).await?;
            }
        }
    }
    Ok(())
}

/// A round of the fleet's only worker: the addresses wanted before it knew it was alone are
/// its own; every [`ROUND`], it counts the other workers, and when there is one (or its flag
/// is gone: taken for dead, it was registered again) it leaves
/// (its addresses are registered from the next round on, before anyone else may use one).
async fn alone_round(ctx: &Ctx, rounds: &mut Rounds) -> Result<(), crawler_queue::Error> {
    let book = ctx.checker.addresses();
    let wanted = book.wanted();
    if !wanted.is_empty() {
        book.set_shares_of(&wanted, &[]);
    }
    if rounds.read_at.is_none_or(|at| at.elapsed() >= ROUND) {
        rounds.read_at = Some(Instant::now());
        let alone = ctx
            .queue
            .addresses()
            .still_alone(&ctx.config.id, ctx.config.dead_after)
            .await?;
        if !alone {
            // New addresses wait from now on; those taken alone are all in `held`.
            book.set_alone(false);
            rounds.leaving_alone = true;
            rounds.read_at = None;
            tracing::info!(
                "no longer the only worker: the server addresses' budgets are shared from now on"
            );
        }
    }
    Ok(())
}

/// Writes the names asked at each address not told yet, and the loads that changed.
async fn tell(
    ctx: &Ctx,
    loads: &mut HashMap<IpAddr, (usize, usize)>,
) -> Result<(), crawler_queue::Error> {
    let book = ctx.checker.addresses();
    let names = book.take_names();
    if !names.is_empty() {
        let names: Vec<(String, String)> = names
            .into_iter()
            .map(|(host, ip)| (host, ip.to_string()))
            .collect();
        ctx.queue.addresses().record_names(&names).await?;
    }
    let now: HashMap<IpAddr, (usize, usize)> = book
        .reports()
        .into_iter()
        .map(|r| (r.ip, (r.waiting, r.in_flight)))
        .collect();
    let mut changed: Vec<AddressLoad> = Vec::new();
    for (ip, load) in &now {
        if loads.get(ip) != Some(load) {
            changed.push(load_of(*ip, *load));
        }
    }
    for ip in loads.keys().filter(|ip| !now.contains_key(ip)) {
        changed.push(load_of(*ip, (0, 0)));
    }
    ctx.queue
        .addresses()
        .record_loads(&ctx.config.id, &changed, book.is_alone())
        .await?;
    *loads = now;
    Ok(())
}

fn load_of(ip: IpAddr, (waiting, in_flight): (usize, usize)) -> AddressLoad {
    AddressLoad {
        address: ip.to_string(),
        waiting: waiting as u64,
        in_flight: in_flight as u64,
    }
}

/// The shares of a read, the addresses this worker cannot parse left out.
fn shares(read: &[AddressHolders]) -> Vec<AddressShare> {
    read.iter()
        .filter_map(|a| {
            Some(AddressShare {
                ip: a.address.parse().ok()?,
                holders: a.holders,
                confirmed: a.confirmed,
                clear_in: a.clear_in,
            })
        })
        .collect()
}

fn texts(ips: &[IpAddr]) -> Vec<String> {
    ips.iter().map(IpAddr::to_string).collect()
}
