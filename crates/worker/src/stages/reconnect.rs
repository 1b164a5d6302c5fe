//! How long the claimer and the writer wait for a database that refused them ([`RECONNECT`]).

use std::time::Duration;

use crawler_queue::backoff::Backoff;

/// The claimer's and the writer's wait after `failures` failures of the database in a row:
/// 200 ms doubling to 5 s, so that a database coming back is found within seconds and one
/// staying away is not pressed.
pub const RECONNECT: Backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(5));
