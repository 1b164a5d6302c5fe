//! Searches of the dead links in flight (`/api/dead?q=TEXT`): a text few URLs contain reads far
//! back, up to every done site (seconds at a million sites), so at most `--max-searches` run
//! at once, and one per client. A search beyond either is refused at once (429 for the
//! client's own, 503 for the dashboard's), not queued: the page asks again at its next poll.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::client::ClientKey;

/// Why a search may not start now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Busy {
    /// The client has one running.
    Client,
    /// The dashboard runs as many as it may.
    Dashboard,
}

/// The searches running.
#[derive(Debug)]
pub struct Searches {
    running: Arc<Semaphore>,
    /// The clients with one running. A std mutex: held for a set operation, never across an
    /// await.
    clients: Arc<Mutex<HashSet<ClientKey>>>,
}

/// A search's place, given back when it is dropped.
#[derive(Debug)]
pub struct Search {
    _slot: OwnedSemaphorePermit,
    client: ClientKey,
    clients: Arc<Mutex<HashSet<ClientKey>>>,
}

impl Drop for Search {
    fn drop(&mut self) {
        self.clients
            .lock()
            .expect("searches lock")
            .remove(&self.client);
    }
}

impl Searches {
    /// At most `max` searches at once (at least one).
    pub fn new(max: usize) -> Searches {
        Searches {
            running: Arc::new(Semaphore::new(max.max(1))),
            clients: Arc::default(),
        }
    }

    /// A place for a search of `client`, held until the returned value is dropped.
    pub fn start(&self, client: ClientKey) -> Result<Search, Busy> {
        let mut clients = self.clients.lock().expect("searches lock");
        if clients.contains(&client) {
            return Err(Busy::Client);
        }
        let slot = self
            .running
            .clone()
            .try_acquire_owned()
            .map_err(|_| Busy::Dashboard)?;
        clients.insert(client);
        Ok(Search {
            _slot: slot,
            client,
            clients: self.clients.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(last: u8) -> ClientKey {
        ClientKey::of(std::net::IpAddr::from([192, 0, 2, last]))
    }

    #[test]
    fn one_search_per_client_and_a_few_in_all() {
        let searches = Searches::new(2);
        let first = searches.start(client(1)).unwrap();
        assert_eq!(searches.start(client(1)).unwrap_err(), Busy::Client);
        let second = searches.start(client(2)).unwrap();
        assert_eq!(searches.start(client(3)).unwrap_err(), Busy::Dashboard);
        drop(first);
        assert!(searches.start(client(1)).is_ok());
        drop(second);
        let again = searches.start(client(3));
        assert!(again.is_ok());
    }
}
