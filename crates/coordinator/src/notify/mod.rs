//! `crawler-reap --notify URL`: each change of verdict POSTed to a webhook, in digests, at least
//! once and none lost. The queue keeps the cursor and the digests (`crawler_queue::notify`);
//! this sends them, under the notifier's lease, so one process of a fleet sends.
//!
//! A pass: take or renew the lease; send the oldest digest not yet acknowledged, again until it
//! is (the same body, the same id); then make the next digest of the changes settled since the
//! cursor, store it with the cursor moved past it, and send it; until no change waits. A
//! digest holds at most [`MAX_CHANGES`] changes and [`MAX_BYTES`].
//!
//! A notifier started on a database whose notifier never ran begins at that moment: the history
//! before it is not sent (a new deployment would otherwise flood its channel with every verdict
//! the crawl ever gave). Every later start goes on from the cursor.
//!
//! # Layout
//! - `digest`: a digest's JSON body and text.
//! - `post`: one POST, its signature, and what its answer means.

mod digest;
mod post;

use std::time::Duration;

use crawler_queue::backoff::Backoff;
use crawler_queue::{Advanced, Cursor, Digest, Queue, Verdict};
use tokio_util::sync::CancellationToken;

pub use digest::{MAX_BYTES, MAX_CHANGES};
pub use post::{signature, BadUrl, Receiver};

use crate::error::Error;

/// The waits between POSTs of a digest that was not acknowledged: 1 s doubling to 5 min,
/// ±20 %, unless the receiver asked for another (`Retry-After`, bounded).
const BETWEEN_POSTS: Backoff =
    Backoff::new(Duration::from_secs(1), Duration::from_secs(300)).with_jitter(80, 120);

/// POSTs of one digest a single pass (`crawler-reap --notify` without `--every`) makes before
/// it gives up; the digest stays stored, and the next run sends it.
const ONCE_POSTS: u32 = 5;

#[derive(Clone, Debug)]
pub struct NotifyConfig {
    pub receiver: Receiver,
    /// The new verdicts told; every verdict by default.
    pub on: Vec<Verdict>,
    /// How long a change waits before it is read: longer than any write-back statement runs
    /// (`crawler_queue::notify`).
    pub settle: Duration,
    /// Each POST's time limit (the receiver's `timeout`).
    pub timeout: Duration,
    /// This process's name in the lease.
    pub owner: String,
}

impl NotifyConfig {
    /// The lease: longer than a POST and a pass's wait, so a holder keeps it while it sends;
    /// a killed holder's lease lapses after it, and another sends.
    fn lease(&self, every: Duration) -> Duration {
        (every * 3).max(self.timeout + every)
    }
}

/// What a pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    pub digests: u64,
    pub changes: u64,
}

/// Passes every `every` until `stop` is cancelled; failures are logged and the next pass tries
/// again.
pub async fn notify_every(
    queue: &Queue,
    config: &NotifyConfig,
    every: Duration,
    stop: CancellationToken,
) {
    loop {
        match pass(queue, config, every, None, &stop).await {
            Ok(sent) if sent.digests > 0 => crawler_cli::print_line(describe(sent)),
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(error = %crate::error::chain(&error), "notify failed; will try again")
            }
        }
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(every) => {}
        }
    }
    let _ = queue.notifier().resign(&config.owner).await;
}

/// One pass, until no settled change waits: what `crawler-reap --notify` does without
/// `--every`. Fails when a digest is not acknowledged after a few POSTs (it stays stored).
pub async fn notify_once(queue: &Queue, config: &NotifyConfig) -> Result<Sent, Error> {
    let every = Duration::from_secs(1);
    let sent = pass(
        queue,
        config,
        every,
        Some(ONCE_POSTS),
        &CancellationToken::new(),
    )
    .await;
    let _ = queue.notifier().resign(&config.owner).await;
    sent
}

/// `sent 2 digests of 1500 changes`.
pub fn describe(sent: Sent) -> String {
    let digests = if sent.digests == 1 {
        "digest"
    } else {
        "digests"
    };
    format!(
        "sent {} {digests} of {} changes",
        sent.digests, sent.changes
    )
}

/// Sends what waits while this process holds the lease; `posts` bounds the POSTs of one digest.
async fn pass(
    queue: &Queue,
    config: &NotifyConfig,
    every: Duration,
    posts: Option<u32>,
    stop: &CancellationToken,
) -> Result<Sent, Error> {
    let notifier = queue.notifier();
    let lease = config.lease(every);
    let mut sent = Sent::default();
    while !stop.is_cancelled() && notifier.lead(&config.owner, lease).await? {
        let digest = match notifier.undelivered().await? {
            Some(digest) => digest,
            None => match next_digest(queue, config).await? {
                Next::Made(digest) => digest,
                Next::Again => continue,
                Next::None => break,
            },
        };
        if !deliver(queue, config, &digest, lease, posts, stop).await? {
            break;
        }
        sent.digests += 1;
        sent.changes += digest.changes.max(0) as u64;
    }
    Ok(sent)
}

/// What [`next_digest`] found.
enum Next {
    Made(Digest),
    /// Another notifier moved the cursor meanwhile: read again.
    Again,
    /// No settled change waits.
    None,
}

/// Makes and stores the next digest, of the changes settled after the cursor.
async fn next_digest(queue: &Queue, config: &NotifyConfig) -> Result<Next, Error> {
    let notifier = queue.notifier();
    let now = queue.now().await?;
    let cursor = notifier.cursor(now).await?;
    let until = now - i64::try_from(config.settle.as_millis()).unwrap_or(i64::MAX);
    if until <= cursor.since {
        return Ok(Next::None);
    }
    let mut changes = notifier
        .changes_after(cursor, until, &config.on, MAX_CHANGES)
        .await?;
    // Whether the digest holds every change settled by `until`: then the cursor passes
    // `until`, else it stops at the digest's last change.
    let mut whole = changes.len() < MAX_CHANGES as usize;
    let id = format!(
        "{:016x}{:016x}",
        rand::random::<u64>(),
        rand::random::<u64>()
    );
    let end = |whole: bool, changes: &[crawler_queue::Change]| match (whole, changes.last()) {
        (false, Some(last)) => last.cursor(),
        _ => Cursor::after_all(until),
    };
    let mut body = digest::body(&id, cursor.since, end(whole, &changes).since, &changes);
    while body.len() > MAX_BYTES && changes.len() > 1 {
        changes.truncate(changes.len() / 2);
        whole = false;
        body = digest::body(&id, cursor.since, end(whole, &changes).since, &changes);
    }
    let to = end(whole, &changes);
    let digest =
        (!changes.is_empty()).then_some((id.as_str(), changes.len() as i32, body.as_str()));
    Ok(match notifier.advance(cursor, to, digest).await? {
        Advanced::Moved(Some(digest)) => Next::Made(digest),
        Advanced::Moved(None) => Next::None,
        Advanced::Lost => Next::Again,
    })
}

/// POSTs `digest` until a receiver acknowledges it, waiting [`BETWEEN_POSTS`] (or what the
/// receiver asked for) between tries and renewing the lease before each. Returns whether it
/// was acknowledged: not when `stop` came or the lease passed to another process (which sends
/// it); an error after `posts` tries, if bounded.
async fn deliver(
    queue: &Queue,
    config: &NotifyConfig,
    digest: &Digest,
    lease: Duration,
    posts: Option<u32>,
    stop: &CancellationToken,
) -> Result<bool, Error> {
    let notifier = queue.notifier();
    let mut tries = 0;
    loop {
        notifier.attempted(digest.seq).await?;
        tries += 1;
        let refused = match config.receiver.post(&digest.digest_id, &digest.body).await {
            Ok(()) => {
                notifier.delivered(digest.seq).await?;
                return Ok(true);
            }
            Err(refused) => refused,
        };
        let attempts = u32::try_from(digest.attempts).unwrap_or(0) + tries;
        tracing::warn!(
            digest = %digest.digest_id,
            attempts,
            "the notify URL did not acknowledge a digest ({refused}); it will be sent again"
        );
        if posts.is_some_and(|bound| tries >= bound) {
            return Err(Error::Notify {
                digest: digest.digest_id.clone(),
                tries,
                refused: refused.to_string(),
            });
        }
        let wait = refused
            .retry_after()
            .unwrap_or_else(|| BETWEEN_POSTS.delay(attempts));
        tokio::select! {
            _ = stop.cancelled() => return Ok(false),
            _ = tokio::time::sleep(wait) => {}
        }
        if !notifier.lead(&config.owner, lease.max(wait)).await? {
            return Ok(false);
        }
    }
}
