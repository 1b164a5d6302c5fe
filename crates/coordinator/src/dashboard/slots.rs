//! The open connections: at most `--max-connections` in all, and `--max-connections-per-client`
//! from one client (its address, or IPv6 /64), so that one client holding connections open
//! cannot take them all. A trusted proxy (`--trusted-proxy`) carries every client's
//! connections, so only the total bounds it.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::client::ClientKey;

/// Why a connection is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Full {
    /// `--max-connections` are open.
    Total,
    /// `--max-connections-per-client` of its client are open.
    Client,
}

/// The connections open, per client.
#[derive(Debug)]
pub struct Slots {
    total: Arc<Semaphore>,
    per_client: usize,
    /// Open connections per client. A std mutex: held for a map update, never across an await.
    open: Arc<Mutex<HashMap<ClientKey, usize>>>,
}

/// A connection's place, given back when it is dropped (when the connection closes).
#[derive(Debug)]
pub struct Slot {
    _total: OwnedSemaphorePermit,
    /// `None` for a trusted proxy's connection.
    client: Option<ClientKey>,
    open: Arc<Mutex<HashMap<ClientKey, usize>>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let Some(client) = self.client else { return };
        let mut open = self.open.lock().expect("slots lock");
        if let Some(n) = open.get_mut(&client) {
            *n -= 1;
            if *n == 0 {
                open.remove(&client);
            }
        }
    }
}

impl Slots {
    pub fn new(total: usize, per_client: usize) -> Slots {
        Slots {
            total: Arc::new(Semaphore::new(total.max(1))),
            per_client: per_client.max(1),
            open: Arc::default(),
        }
    }

    /// A place for a connection from `peer`, unless one of the limits is reached; a trusted
    /// proxy counts against the total only.
    pub fn take(&self, peer: IpAddr, trusted: bool) -> Result<Slot, Full> {
        let client = (!trusted).then(|| ClientKey::of(peer));
        let mut open = self.open.lock().expect("slots lock");
        if let Some(key) = client {
            if open.get(&key).copied().unwrap_or(0) >= self.per_client {
                return Err(Full::Client);
            }
        }
        let total = self
            .total
            .clone()
            .try_acquire_owned()
            .map_err(|_| Full::Total)?;
        if let Some(key) = client {
            *open.entry(key).or_default() += 1;
        }
        Ok(Slot {
            _total: total,
            client,
            open: self.open.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([192, 0, 2, last])
    }

    #[test]
    fn a_client_gets_its_share_and_the_total_bounds_all() {
        let slots = Slots::new(3, 2);
        let a = slots.take(ip(1), false).unwrap();
        let b = slots.take(ip(1), false).unwrap();
        assert_eq!(slots.take(ip(1), false).unwrap_err(), Full::Client);
        let c = slots.take(ip(2), false).unwrap();
        assert_eq!(slots.take(ip(3), false).unwrap_err(), Full::Total);
        assert_eq!(slots.take(ip(4), true).unwrap_err(), Full::Total);
        drop(a);
        let proxy = slots.take(ip(4), true).unwrap();
        drop((b, c, proxy));
        let ones: Vec<Slot> = (0..3).map(|_| slots.take(ip(4), true).unwrap()).collect();
        assert_eq!(ones.len(), 3);
        assert!(slots.open.lock().unwrap().is_empty());
    }
}
