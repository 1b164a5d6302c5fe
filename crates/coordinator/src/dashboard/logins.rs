//! Wrong tokens, counted per client: in the login form or as a bearer token, each is a guess.
//! A client gets [`FAILURES`] a [`WINDOW`]; after that, until the window ends, every login and
//! bearer token of it is answered 429 without being looked at. Each wrong token is also
//! answered late ([`FAILURE_DELAY`]), and logged with the client's address.
//!
//! A token of 16 characters or more is not guessed at five a minute; the limit keeps a guesser
//! from costing the server, and the log, more than that. Tokens sent side by side are each
//! looked at if the client was not refused when they came, so a burst may pass the limit by
//! the client's connections (`--max-connections-per-client`), once. The counts are the process's own (a
//! restart forgets them) and kept for [`MAX_CLIENTS`] clients at most, the oldest window
//! dropped first.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::client::ClientKey;

/// Wrong tokens a client may send per [`WINDOW`].
pub const FAILURES: u32 = 5;

/// The span the wrong tokens are counted over, from the first.
pub const WINDOW: Duration = Duration::from_secs(60);

/// How late a wrong token is answered.
pub const FAILURE_DELAY: Duration = Duration::from_millis(500);

/// The clients whose counts are kept.
const MAX_CLIENTS: usize = 65_536;

/// A client's wrong tokens in its current window.
#[derive(Clone, Copy, Debug)]
struct Window {
    started: Instant,
    failures: u32,
}

/// The count of wrong tokens per client. A std mutex: held for a map lookup, never across an
/// await.
#[derive(Debug, Default)]
pub struct Logins(Mutex<HashMap<ClientKey, Window>>);

impl Logins {
    /// How long `client` must wait before a token of it is looked at again; `None`: now.
    pub fn refused_for(&self, client: ClientKey) -> Option<Duration> {
        self.refused_for_at(client, Instant::now())
    }

    /// Counts a wrong token of `client`; returns its wrong tokens in this window, this one
    /// included.
    pub fn failed(&self, client: ClientKey) -> u32 {
        self.failed_at(client, Instant::now())
    }

    fn refused_for_at(&self, client: ClientKey, now: Instant) -> Option<Duration> {
        let windows = self.0.lock().expect("logins lock");
        let window = windows.get(&client)?;
        let ends = window.started + WINDOW;
        (window.failures >= FAILURES && ends > now).then(|| ends - now)
    }

    fn failed_at(&self, client: ClientKey, now: Instant) -> u32 {
        let mut windows = self.0.lock().expect("logins lock");
        if windows.len() >= MAX_CLIENTS && !windows.contains_key(&client) {
            windows.retain(|_, w| w.started + WINDOW > now);
            if windows.len() >= MAX_CLIENTS {
                let oldest = windows
                    .iter()
                    .min_by_key(|(_, w)| w.started)
                    .map(|(k, _)| *k);
                windows.remove(&oldest.expect("a full map has an entry"));
            }
        }
        let window = windows.entry(client).or_insert(Window {
            started: now,
            failures: 0,
        });
        if window.started + WINDOW <= now {
            *window = Window {
                started: now,
                failures: 0,
            };
        }
        window.failures += 1;
        window.failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(last: u8) -> ClientKey {
        ClientKey::of(std::net::IpAddr::from([192, 0, 2, last]))
    }

    #[test]
    fn a_client_is_refused_after_its_failures_until_the_window_ends() {
        let logins = Logins::default();
        let start = Instant::now();
        for n in 1..=FAILURES {
            assert_eq!(logins.refused_for_at(client(1), start), None);
            assert_eq!(logins.failed_at(client(1), start), n);
        }
        let later = start + Duration::from_secs(20);
        assert_eq!(
            logins.refused_for_at(client(1), later),
            Some(WINDOW - Duration::from_secs(20))
        );
        assert_eq!(logins.refused_for_at(client(2), later), None);
        assert_eq!(logins.refused_for_at(client(1), start + WINDOW), None);
        assert_eq!(logins.failed_at(client(1), start + WINDOW), 1);
    }

    #[test]
    fn the_counts_stay_bounded() {
        let logins = Logins::default();
        let start = Instant::now();
        for n in 0..MAX_CLIENTS as u32 + 10 {
            let ip = std::net::IpAddr::from(n.to_be_bytes());
            logins.failed_at(ClientKey::of(ip), start + Duration::from_nanos(n.into()));
        }
        assert_eq!(logins.0.lock().unwrap().len(), MAX_CLIENTS);
    }
}
