//! Work-aware balance of the host partitions, beside the count-based share of `parts`.
//!
//! The count-based rule gives every worker the same number of partitions, but hash partitions
//! spread hosts evenly, not work: near the end of a crawl (or on a list whose work sits in a
//! few partitions) one worker can be idle while another has many partitions with sites due.
//! So each worker also looks, every keeper round, at the partitions of the earliest due sites
//! ([`Partitions::due`], a bounded read of the `sites_due` index), and when it is idle (none
//! of them is its own, its claims find nothing) and another worker holds at least two of them,
//! asks for one ([`Partitions::ask_for_part`]): the asker is named the partition's *heir*. The
//! holder answers at its next round. It declines ([`Partitions::decline_ask`]) when it is working
//! the partition's hosts and has room on the wire: a host goes at its own pace, so moving it
//! gains nothing, and it would stop while it moves. Otherwise it accepts: it marks the
//! partition draining, stops claiming from it, and once none of its sites is in flight its
//! next round hands it straight to the heir ([`Partitions::release_drained`]), so no third worker
//! can take it in between and two workers never ask one host at once. The asker hands over
//! one partition with nothing due in exchange, so the counts stay even. A worker's last busy partition is never asked for, so
//! one huge host never moves from worker to worker (its own sites wait for its rate, not for
//! the other hosts, see the checker's deferral).

use crate::db::with_pool;
use crate::error::Error;
use crate::parts::Partitions;
use crate::retry::retry;
use crate::sql::{cached, sites_using, SitesIndex, CLAIM_ORDER, DUE};

/// Due sites read to see where the work is: the earliest ones, in claim order. A bounded
/// index range (a few milliseconds), whatever the size of the table.
pub const DUE_SAMPLE: u32 = 1000;

/// A partition with sites due, among the earliest [`DUE_SAMPLE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DuePart {
    pub id: i16,
    /// The parts token of its holder; `None` while it is free.
    pub holder: Option<i64>,
    /// Its due sites in the sample.
    pub sites: i64,
}

impl Partitions<'_> {
    /// The partitions of the earliest [`DUE_SAMPLE`] due sites that are not being handed over,
    /// with their holders (id, holder's token, due sites among the sample).
    pub async fn due(&self) -> Result<Vec<DuePart>, Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
            format!(
                "SELECT s.part, p.token, COUNT(*) FROM \
                 (SELECT part FROM {} WHERE {DUE} ORDER BY {CLAIM_ORDER} LIMIT ?) AS s \
                 JOIN parts AS p ON p.id = s.part WHERE p.draining = 0 GROUP BY s.part, p.token",
                sites_using(dialect, SitesIndex::Due)
            )
        });
        let rows: Vec<(i16, Option<i64>, i64)> = with_pool!(self.db, pool => {
            retry("due partitions", || {
                sqlx::query_as(sql).bind(i64::from(DUE_SAMPLE)).fetch_all(pool)
            })
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|(id, holder, sites)| DuePart { id, holder, sites })
            .collect())
    }

    /// Asks the holder of partition `part` (parts token `holder`) to hand it to `heir_token`
    /// (the worker `heir_owner`); the holder answers at its next round, and if it accepts,
    /// hands it over once nothing of it is in flight. False when the partition changed hands,
    /// is being handed over, or was asked for already (another asker won).
    pub async fn ask_for_part(
        &self,
        part: i16,
        holder: i64,
        heir_token: i64,
        heir_owner: &str,
    ) -> Result<bool, Error> {
        let sql = cached!(
            self.db.dialect(),
            "UPDATE parts SET heir_token = ?, heir_owner = ? \
             WHERE id = ? AND token = ? AND draining = 0 AND heir_token IS NULL"
        );
        Ok(with_pool!(self.db, pool => {
            retry("ask for a partition", || {
                sqlx::query(sql)
                    .bind(heir_token)
                    .bind(heir_owner)
                    .bind(part)
                    .bind(holder)
                    .execute(pool)
            })
            .await?
            .rows_affected()
                == 1
        }))
    }

    /// Declines the request for partition `part`, which `token` holds and is not handing over:
    /// its heir is forgotten. False when there was no such request.
    pub async fn decline_ask(&self, token: i64, part: i16) -> Result<bool, Error> {
        let sql = cached!(
            self.db.dialect(),
            "UPDATE parts SET heir_token = NULL, heir_owner = NULL \
             WHERE id = ? AND token = ? AND draining = 0 AND heir_token IS NOT NULL"
        );
        Ok(with_pool!(self.db, pool => {
            retry("decline a request for a partition", || {
                sqlx::query(sql).bind(part).bind(token).execute(pool)
            })
            .await?
            .rows_affected()
                == 1
        }))
    }

    /// Starts handing over partition `part`, one that `token` holds: no more claims from it.
    pub async fn drain_part(&self, token: i64, part: i16) -> Result<bool, Error> {
        let sql = cached!(
            self.db.dialect(),
            "UPDATE parts SET draining = 1 WHERE id = ? AND token = ? AND draining = 0"
        );
        Ok(with_pool!(self.db, pool => {
            retry("drain a partition", || sqlx::query(sql).bind(part).bind(token).execute(pool))
                .await?
                .rows_affected()
                == 1
        }))
    }
}
