//! The dashboard's ended sessions: a session cookie names its id and expiry (signed by the
//! dashboard, which alone knows its token); a log out ends it early by listing its id here until
//! that expiry, when the cookie is refused anyway. The list is in the database so that a log out
//! holds in every dashboard of a fleet and across a restart, and the expiry is on the database's
//! clock, as every lease is. The view [`Sessions`] ([`Queue::sessions`]).

use crate::db::{with_pool, Db};
use crate::error::Error;
use crate::queue::Queue;
use crate::retry::retry;
use crate::sql::{cached, insert_ignore};

/// What a dashboard needs to judge a session cookie: the database's clock and whether the
/// session was ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionCheck {
    /// Unix milliseconds, on the database's clock.
    pub now: i64,
    /// Whether a log out ended the session.
    pub ended: bool,
}

/// The ended sessions of the dashboards on this database. Obtained from [`Queue::sessions`];
/// it borrows the queue's database handle.
#[derive(Clone, Copy, Debug)]
pub struct Sessions<'q> {
    db: &'q Db,
}

impl Queue {
    /// The dashboards' ended sessions ([`Sessions`]).
    pub fn sessions(&self) -> Sessions<'_> {
        Sessions { db: &self.db }
    }
}

impl Sessions<'_> {
    /// The database's now and whether session `id` was ended, in one statement (a dashboard
    /// asks on every request that shows a session cookie).
    pub async fn check(&self, id: &[u8]) -> Result<SessionCheck, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT {now}, (SELECT COUNT(*) FROM dashboard_logouts WHERE session_id = ?)"
        );
        let (now, ended): (i64, i64) = with_pool!(self.db, pool => {
            retry("check a dashboard session", || sqlx::query_as(sql).bind(id).fetch_one(pool))
                .await?
        });
        Ok(SessionCheck {
            now,
            ended: ended > 0,
        })
    }

    /// Ends session `id`, which expires at `expires_at` (Unix milliseconds, the database's
    /// clock): it is listed until then. The sessions listed past their expiry are forgotten.
    pub async fn end(&self, id: &[u8], expires_at: i64) -> Result<(), Error> {
        let insert = cached!(self.db.dialect(), |dialect| insert_ignore(
            dialect,
            "INTO dashboard_logouts (session_id, expires_at) VALUES (?, ?)"
        ));
        let prune = cached!(
            self.db.dialect(),
            "DELETE FROM dashboard_logouts WHERE expires_at < {now}"
        );
        with_pool!(self.db, pool => {
            retry("end a dashboard session", || {
                sqlx::query(insert).bind(id).bind(expires_at).execute(pool)
            })
            .await?;
            retry("forget expired dashboard sessions", || sqlx::query(prune).execute(pool))
                .await?;
        });
        Ok(())
    }
}
