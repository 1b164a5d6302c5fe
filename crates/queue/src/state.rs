//! A site's place in the queue, as `sites.state` stores it, and the names SQL text gives the
//! states (`sql::statement` fills them in). A module of its own so that `sql.rs` need not import
//! the queue that runs its statements.

/// A site's place in the queue, as stored in `sites.state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i8)]
pub enum State {
    /// Waiting for `next_check_at`, then claimable.
    Pending = 0,
    /// Held by a worker until `expires_at`.
    Claimed = 1,
    /// Has its current verdict.
    Done = 2,
}

impl State {
    /// Every state, with the name SQL text uses for it (`{pending}`, …; see `sql::statement`).
    pub const ALL: [(State, &'static str); 3] = [
        (State::Pending, "pending"),
        (State::Claimed, "claimed"),
        (State::Done, "done"),
    ];

    /// The number stored in `sites.state`.
    pub const fn as_sql(self) -> i16 {
        self as i16
    }

    /// The state stored as `n`, if any.
    pub fn from_sql(n: i64) -> Option<State> {
        State::ALL
            .iter()
            .map(|&(state, _)| state)
            .find(|state| i64::from(state.as_sql()) == n)
    }
}
