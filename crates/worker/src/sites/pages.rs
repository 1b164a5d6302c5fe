//! Storing the links (and anchors) of the pages this worker reads (`crawler_queue::Follow`).
//! On a server, a few pages at once ([`LINKS_WRITERS`]), each in its own transaction. On
//! SQLite, which writes one transaction at a time whatever its callers do, the pages that wait
//! while one is stored go together in the next ([`Follow::add_pages`], at most [`GROUP`]):
//! every commit writes each database page it changed, and pages read side by side change many
//! of the same (the sites they all link to, their referrers' and new sites' index pages).
//!
//! [`Follow::add_pages`]: crawler_queue::Follow::add_pages

use crawler_queue::{Added, Error, PageLinks, Queue};
use tokio::sync::{mpsc, oneshot, Semaphore};

/// Pages whose links are stored at once on a server: a few of the worker's pool (10
/// connections), so that claims, write-backs and the heartbeat always find one, however many
/// pages are read.
const LINKS_WRITERS: usize = 3;

/// Pages stored in one transaction on SQLite, at most.
const GROUP: usize = 16;

/// What a page's store answers: what it added, `None` when its claim was lost.
type Stored = Result<Option<Added>, Error>;

/// Stores pages' links, grouped on SQLite. Cheap to share; one per worker.
pub struct PageStore {
    queue: Queue,
    /// [`LINKS_WRITERS`] permits (servers): storing links waits here rather than in the pool.
    writers: Semaphore,
    /// To the task that stores the pages in groups (SQLite).
    grouped: Option<mpsc::UnboundedSender<(PageLinks, oneshot::Sender<Stored>)>>,
}

impl PageStore {
    /// A store for `queue`; on SQLite it starts the task that groups the pages (it ends with
    /// the store).
    pub fn new(queue: Queue) -> PageStore {
        let grouped = queue.follow().groups_pages().then(|| {
            let (send, receive) = mpsc::unbounded_channel();
            tokio::spawn(group_loop(queue.clone(), receive));
            send
        });
        PageStore {
            queue,
            writers: Semaphore::new(LINKS_WRITERS),
            grouped,
        }
    }

    /// Stores `page`'s links (and anchors), alone or with the pages waiting beside it.
    pub async fn store(&self, page: &PageLinks) -> Stored {
        if let Some(grouped) = &self.grouped {
            let (reply, answer) = oneshot::channel();
            if grouped.send((page.clone(), reply)).is_ok() {
                if let Ok(stored) = answer.await {
                    return stored;
                }
            }
        }
        let _permit = self.writers.acquire().await.expect("never closed");
        alone(&self.queue, page).await
    }
}

/// One page in its own transaction.
async fn alone(queue: &Queue, page: &PageLinks) -> Stored {
    let added = queue.follow().add_pages(std::slice::from_ref(page)).await?;
    Ok(added.into_iter().next().flatten())
}

/// Stores the pages sent, those waiting together, until every sender is gone. A group the
/// database refuses is stored again a page at a time, so that a page it refuses fails alone.
async fn group_loop(
    queue: Queue,
    mut pages: mpsc::UnboundedReceiver<(PageLinks, oneshot::Sender<Stored>)>,
) {
    while let Some(first) = pages.recv().await {
        let mut group = vec![first];
        while group.len() < GROUP {
            match pages.try_recv() {
                Ok(next) => group.push(next),
                Err(_) => break,
            }
        }
        let (group, replies): (Vec<PageLinks>, Vec<oneshot::Sender<Stored>>) =
            group.into_iter().unzip();
        match queue.follow().add_pages(&group).await {
            Ok(added) => {
                for (reply, added) in replies.into_iter().zip(added) {
                    let _ = reply.send(Ok(added));
                }
            }
            Err(error) if group.len() == 1 => {
                let reply = replies.into_iter().next().expect("one page, one reply");
                let _ = reply.send(Err(error));
            }
            Err(_) => {
                for (page, reply) in group.iter().zip(replies) {
                    let _ = reply.send(alone(&queue, page).await);
                }
            }
        }
    }
}
