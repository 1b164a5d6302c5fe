//! The fleet's shares of each server address's budget (`--ip-concurrency`, `--ip-rate`; the
//! checker's `addresses.rs` applies them): the `address_holders`, `address_syncs` and
//! `host_addresses` tables (migration `20261206000001_addresses.sql`). All of it is
//! [`Addresses`], a view of the queue ([`Queue::addresses`]).
//!
//! # The rule: shares that add up to the limit at every instant
//! A worker registers for an address before its first request to it
//! ([`Addresses::register`]): a row, then, in a later statement, its `since` on the
//! database's clock, so that whoever reads after `since` sees the row. Its share is the limit
//! over the live holders it reads ([`Addresses::shares`]), and it may use it only once every
//! other live holder registered before it has acknowledged a read that started after its
//! `since` (one registered after it reads its row anyway)
//! ([`Addresses::acknowledge`]: the start of its last read, written once it applied what it
//! read). So any two holders using their shares have each counted the other, and every share
//! in use is at most the limit over the holders using it. A holder whose share shrank while its
//! starts of the last second were closer than its new share spaces them writes when they leave
//! the window ([`Addresses::clear`]) before that acknowledgement; a newcomer's first start
//! waits until then ([`AddressHolders::clear_in`]), not a whole second. A worker gives its
//! rows back when an address idles and when it stops ([`Addresses::release`],
//! [`Addresses::release_all`]); a dead worker's rows (its heartbeat older than `--dead-after`)
//! are not counted, and are deleted with its `workers` row gone ([`Addresses::forget_dead`]).
//!
//! # A worker alone
//! A worker that is the fleet's only one needs no share: it may take every address's whole
//! budget without a row, and its first request to a new server then waits for nothing (a
//! list of 20,000 new servers drained a third slower with a round trip before each). So a
//! worker starting sets its `workers.alone`, then counts the other live workers
//! ([`Addresses::try_alone`]), and keeps `alone` only when there were none. Another worker
//! that starts later reads that flag after its own `workers` row is in
//! ([`Addresses::alone_elsewhere`]): until it is cleared it registers nothing and uses no
//! address. The worker alone counts the others every round ([`Addresses::still_alone`]); once
//! it sees one (or its own flag gone: taken for dead, it was registered again), it registers
//! every address it holds, then clears its flag
//! ([`Addresses::leave_alone`]). So whoever registers after that registers after it, and waits
//! for its acknowledgement as for any holder's. Of any two workers that set and count at
//! once, at least one counts the other: one at most is alone, and the other waits for it.

use std::borrow::Cow;
use std::time::Duration;

use crate::db::with_pool;
use crate::dialect::Dialect;
use crate::error::Error;
use crate::queue::{millis, Queue};
use crate::retry::retry;
use crate::sql::{cached, insert_ignore, inserted, padded_refs, placeholders, upsert};

/// Addresses written or deleted by one statement.
const CHUNK: usize = 100;

/// Whose holders [`Addresses::join`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Among {
    /// Every address the worker holds: a read that may be acknowledged.
    All,
    /// Only those it registers in the same call: a read that acknowledges nothing (the
    /// worker's other addresses were not read).
    These,
}

/// What one read of the holders says of an address this worker holds, when it is not alone
/// there or not yet confirmed (an address it holds and that is not listed: alone, confirmed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressHolders {
    pub address: String,
    /// Live workers holding it, this one included.
    pub holders: u32,
    /// Every other live holder acknowledged a read after this worker registered.
    pub confirmed: bool,
    /// How long from the read until the holders' starts at their larger shares are out of the
    /// window (the latest `clear_at`: [`Addresses::clear`]); zero when they are already.
    pub clear_in: Duration,
}

/// One read of the holders: when it started (the acknowledgement to write once applied), and
/// the addresses shared or waiting.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SharesRead {
    pub started_at: i64,
    pub addresses: Vec<AddressHolders>,
}

/// What a worker's requests do at one address now, for the per-address view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressLoad {
    pub address: String,
    pub waiting: u64,
    pub in_flight: u64,
}

/// One address as the fleet sees it, for `crawler-report --addresses`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressView {
    pub address: String,
    /// Live workers holding a share of it.
    pub holders: i64,
    /// Requests waiting for it, and on the wire to it, over its holders.
    pub waiting: i64,
    pub in_flight: i64,
    /// Host names last asked at it.
    pub hosts: i64,
}

/// The fleet's shares of server addresses. Obtained from [`Queue::addresses`]; it borrows the
/// queue.
#[derive(Clone, Copy, Debug)]
pub struct Addresses<'q> {
    queue: &'q Queue,
}

impl Queue {
    /// The fleet's shares of server addresses, in this queue's database ([`Addresses`]).
    pub fn addresses(&self) -> Addresses<'_> {
        Addresses { queue: self }
    }
}

impl Addresses<'_> {
    /// Registers `worker` as a holder of `addresses`: their rows, then their `since`.
    pub async fn register(&self, worker: &str, addresses: &[String]) -> Result<(), Error> {
        self.register_then_read(worker, addresses, None).await?;
        Ok(())
    }

    /// Registers `worker` as a holder of `addresses` and reads the holders of `among`, as
    /// [`Addresses::shares`] does: what a new address's first request waits for. With
    /// [`Among::These`] it reads no other address of the worker's (thousands on a list of new
    /// servers); an address of `addresses` not listed is the worker's alone, confirmed.
    pub async fn join(
        &self,
        worker: &str,
        addresses: &[String],
        dead_after: Duration,
        among: Among,
    ) -> Result<SharesRead, Error> {
        let read = self
            .register_then_read(worker, addresses, Some((dead_after, among)))
            .await?;
        Ok(read.unwrap_or_default())
    }

    /// Gives `worker`'s shares of `addresses` back.
    pub async fn release(&self, worker: &str, addresses: &[String]) -> Result<(), Error> {
        let db = &self.queue.db;
        for chunk in addresses.chunks(CHUNK) {
            let sql = cached!(db.dialect(), chunk.len(), |_, n| format!(
                "DELETE FROM address_holders WHERE worker = ? AND address IN ({})",
                placeholders(n)
            ));
            with_pool!(db, pool => {
                retry("release addresses", || {
                    let mut q = sqlx::query(&sql).bind(worker);
                    for address in chunk {
                        q = q.bind(address);
                    }
                    q.execute(pool)
                })
                .await?;
            });
        }
        Ok(())
    }

    /// Gives every share of `worker` back (it stops, or starts again under the same id), and
    /// its being alone.
    pub async fn release_all(&self, worker: &str) -> Result<(), Error> {
        let db = &self.queue.db;
        let holders = cached!(db.dialect(), "DELETE FROM address_holders WHERE worker = ?");
        let syncs = cached!(db.dialect(), "DELETE FROM address_syncs WHERE worker = ?");
        with_pool!(db, pool => {
            retry("release all addresses", || sqlx::query(holders).bind(worker).execute(pool))
                .await?;
            retry("forget an address sync", || sqlx::query(syncs).bind(worker).execute(pool))
                .await?;
        });
        self.set_alone(worker, false).await
    }

    /// Makes `worker` the fleet's worker alone if no other worker is live (a heartbeat within
    /// `dead_after`): its flag first, then the count, so that of two workers doing this at
    /// once at least one sees the other. Returns whether it is alone; if not, its flag is
    /// cleared. `worker` must be registered (`Queue::register`).
    pub async fn try_alone(&self, worker: &str, dead_after: Duration) -> Result<bool, Error> {
        self.set_alone(worker, true).await?;
        if self.still_alone(worker, dead_after).await? {
            return Ok(true);
        }
        self.set_alone(worker, false).await?;
        Ok(false)
    }

    /// Whether `worker` is still the fleet's worker alone: no other worker is live, and its
    /// own flag is set (a worker taken for dead and registered again has it cleared).
    pub async fn still_alone(&self, worker: &str, dead_after: Duration) -> Result<bool, Error> {
        let sql = cached!(
            self.queue.db.dialect(),
            "SELECT (SELECT COUNT(*) FROM workers WHERE id <> ? AND heartbeat_at >= {now} - ?), \
             (SELECT COUNT(*) FROM workers WHERE id = ? AND alone = 1)"
        );
        let (others, own): (i64, i64) = with_pool!(&self.queue.db, pool => {
            retry("count the other workers", || {
                sqlx::query_as(sql)
                    .bind(worker)
                    .bind(millis(dead_after))
                    .bind(worker)
                    .fetch_one(pool)
            })
            .await?
        });
        Ok(others == 0 && own == 1)
    }

    /// Whether another live worker is alone: until it has registered its addresses, `worker`
    /// may register and use none.
    pub async fn alone_elsewhere(&self, worker: &str, dead_after: Duration) -> Result<bool, Error> {
        let sql = cached!(
            self.queue.db.dialect(),
            "SELECT COUNT(*) FROM workers \
             WHERE alone = 1 AND id <> ? AND heartbeat_at >= {now} - ?"
        );
        let n: i64 = with_pool!(&self.queue.db, pool => {
            retry("look for a worker alone", || {
                sqlx::query_scalar(sql).bind(worker).bind(millis(dead_after)).fetch_one(pool)
            })
            .await?
        });
        Ok(n > 0)
    }

    /// Ends `worker`'s being alone: registers `held` (every address it holds), then clears
    /// its flag, so that a worker waiting for that registers after it.
    pub async fn leave_alone(&self, worker: &str, held: &[String]) -> Result<(), Error> {
        self.register(worker, held).await?;
        self.set_alone(worker, false).await
    }

    async fn set_alone(&self, worker: &str, alone: bool) -> Result<(), Error> {
        let sql = cached!(
            self.queue.db.dialect(),
            "UPDATE workers SET alone = ? WHERE id = ?"
        );
        with_pool!(&self.queue.db, pool => {
            retry("set a worker's being alone", || {
                sqlx::query(sql).bind(i32::from(alone)).bind(worker).execute(pool)
            })
            .await?;
        });
        Ok(())
    }

    /// Reads the holders of `worker`'s addresses: those it shares with other live workers
    /// (a worker is live with a heartbeat within `dead_after`), and those it may not use yet:
    /// where a live holder registered before it (an earlier `since`) has not acknowledged a
    /// read since. A holder registered after it needs no acknowledgement from it: its own
    /// reads, after its `since`, see this worker's row, and it waits for this worker's.
    pub async fn shares(&self, worker: &str, dead_after: Duration) -> Result<SharesRead, Error> {
        self.join(worker, &[], dead_after, Among::All).await
    }

    /// What [`Addresses::register`], [`Addresses::join`] and [`Addresses::shares`] do, on one
    /// connection taken once: a worker's statements queue for SQLite's one connection (its
    /// claims, its write-backs), and when each statement of a round queued on its own (up to
    /// 80 ms a wait), a round of a thousand new addresses took 20-290 ms, every new address's
    /// first request waiting for it (the memory bench's 20,000 servers). Registers `worker` for
    /// `register` (their rows, then, in statements of their own after the rows are committed,
    /// their `since`: a read that starts after `since` sees them), then, with `read`, reads
    /// the holders of `among` (`register`, or every address `worker` holds).
    async fn register_then_read(
        &self,
        worker: &str,
        register: &[String],
        read: Option<(Duration, Among)>,
    ) -> Result<Option<SharesRead>, Error> {
        let db = &self.queue.db;
        let dialect = db.dialect();
        let now = cached!(dialect, "SELECT {now}");
        // The reads' chunks; `None`: every address the worker holds, in one.
        let chunks: Vec<Option<Vec<&String>>> = match read {
            None => Vec::new(),
            Some((_, Among::All)) => vec![None],
            Some((_, Among::These)) => register
                .chunks(CHUNK)
                .map(|c| Some(padded_refs(c)))
                .collect(),
        };
        let dead_after = millis(read.map_or(Duration::ZERO, |(dead_after, _)| dead_after));
        let got = with_pool!(db, pool => {
            retry("register and read address holders", || async {
                let mut conn = pool.acquire().await?;
                for chunk in register.chunks(CHUNK) {
                    let chunk = padded_refs(chunk);
                    let sql = cached!(dialect, chunk.len(), |dialect, n| {
                        let rows = vec!["(?, ?)"; n].join(", ");
                        insert_ignore(
                            dialect,
                            &format!("INTO address_holders (address, worker) VALUES {rows}"),
                        )
                    });
                    let q = chunk.iter().fold(sqlx::query(&sql), |q, a| q.bind(*a).bind(worker));
                    q.execute(&mut *conn).await?;
                }
                for chunk in register.chunks(CHUNK) {
                    let chunk = padded_refs(chunk);
                    let sql = cached!(dialect, chunk.len(), |_, n| format!(
                        "UPDATE address_holders SET since = {{now}} \
                         WHERE worker = ? AND since IS NULL AND address IN ({})",
                        placeholders(n)
                    ));
                    let q = chunk.iter().fold(sqlx::query(&sql).bind(worker), |q, a| q.bind(*a));
                    q.execute(&mut *conn).await?;
                }
                if read.is_none() {
                    return Ok(None);
                }
                let started_at: i64 = sqlx::query_scalar(now).fetch_one(&mut *conn).await?;
                let mut shared: Vec<(String, i64, Option<i64>)> = Vec::new();
                let mut waiting: Vec<String> = Vec::new();
                for among in &chunks {
                    let n = among.as_ref().map_or(0, Vec::len);
                    let sql = shared_sql(dialect, n);
                    let q = sqlx::query_as(&sql).bind(dead_after);
                    let q = match among {
                        None => q.bind(worker),
                        Some(among) => among.iter().fold(q, |q, a| q.bind(*a)),
                    };
                    shared.extend(q.fetch_all(&mut *conn).await?);
                    let sql = waiting_sql(dialect, n);
                    let q = sqlx::query_scalar(&sql).bind(worker).bind(dead_after);
                    let q = among.iter().flatten().fold(q, |q, a| q.bind(*a));
                    waiting.extend(q.fetch_all(&mut *conn).await?);
                }
                Ok::<_, sqlx::Error>(Some((started_at, shared, waiting)))
            })
            .await?
        });
        let Some((started_at, shared, waiting)) = got else {
            return Ok(None);
        };
        let mut addresses: Vec<AddressHolders> = shared
            .into_iter()
            .map(|(address, n, clear_in)| AddressHolders {
                confirmed: !waiting.contains(&address),
                address,
                holders: u32::try_from(n.max(1)).unwrap_or(u32::MAX),
                clear_in: Duration::from_millis(
                    clear_in.map_or(0, |ms| u64::try_from(ms).unwrap_or(0)),
                ),
            })
            .collect();
        for address in waiting {
            if !addresses.iter().any(|a| a.address == address) {
                addresses.push(AddressHolders {
                    address,
                    holders: 1,
                    confirmed: false,
                    clear_in: Duration::ZERO,
                });
            }
        }
        Ok(Some(SharesRead {
            started_at,
            addresses,
        }))
    }

    /// Tells the fleet when `worker`'s starts at its larger shares of `clears` (address, how
    /// long from now) are out of the window: written before it acknowledges the read that
    /// shrank those shares, so that a worker its acknowledgement confirms waits until then
    /// (`clear_at`, migration `20261208000001_address_clear.sql`).
    pub async fn clear(&self, worker: &str, clears: &[(String, Duration)]) -> Result<(), Error> {
        let sql = cached!(
            self.queue.db.dialect(),
            "UPDATE address_holders SET clear_at = {now} + ? WHERE address = ? AND worker = ?"
        );
        with_pool!(&self.queue.db, pool => {
            retry("tell when addresses are clear", || async {
                let mut conn = pool.acquire().await?;
                for (address, within) in clears {
                    sqlx::query(sql)
                        .bind(millis(*within) + 1)
                        .bind(address)
                        .bind(worker)
                        .execute(&mut *conn)
                        .await?;
                }
                Ok::<(), sqlx::Error>(())
            })
            .await?;
        });
        Ok(())
    }

    /// Acknowledges every holder registered before `started_at` (a [`SharesRead`]'s, once
    /// applied): their shares may count on this worker's.
    pub async fn acknowledge(&self, worker: &str, started_at: i64) -> Result<(), Error> {
        let sql = cached!(self.queue.db.dialect(), |dialect| format!(
            "{} synced_at = {}",
            upsert(
                dialect,
                "INTO address_syncs (worker, synced_at) VALUES (?, ?)",
                "worker"
            ),
            inserted(dialect, "synced_at")
        ));
        with_pool!(&self.queue.db, pool => {
            retry("acknowledge address holders", || {
                sqlx::query(sql).bind(worker).bind(started_at).execute(pool)
            })
            .await?;
        });
        Ok(())
    }

    /// Records what `worker`'s requests do at its addresses now: one transaction per
    /// [`CHUNK`] addresses, not a commit each (on politeness z, a thousand servers, they were
    /// two thirds of the worker's SQLite commits). A worker alone has no rows but these:
    /// with `alone`, a load that is not zero makes its address's row (without a `since`: a
    /// holder for others to count, not one they wait for), and every row is deleted when
    /// its address is given back, as a holder's.
    pub async fn record_loads(
        &self,
        worker: &str,
        loads: &[AddressLoad],
        alone: bool,
    ) -> Result<(), Error> {
        let update = cached!(
            self.queue.db.dialect(),
            "UPDATE address_holders SET waiting = ?, in_flight = ? WHERE address = ? AND worker = ?"
        );
        let make = cached!(self.queue.db.dialect(), |dialect| insert_ignore(
            dialect,
            "INTO address_holders (waiting, in_flight, address, worker) VALUES (?, ?, ?, ?)"
        ));
        for chunk in loads.chunks(CHUNK) {
            with_pool!(&self.queue.db, pool => {
                retry("record addresses' loads", || async {
                    let mut tx = pool.begin().await?;
                    for load in chunk {
                        let (waiting, in_flight) = (
                            i64::try_from(load.waiting).unwrap_or(i64::MAX),
                            i64::try_from(load.in_flight).unwrap_or(i64::MAX),
                        );
                        let updated = sqlx::query(update)
                            .bind(waiting)
                            .bind(in_flight)
                            .bind(&load.address)
                            .bind(worker)
                            .execute(&mut *tx)
                            .await?
                            .rows_affected();
                        if alone && updated == 0 && (waiting, in_flight) != (0, 0) {
                            sqlx::query(make)
                                .bind(waiting)
                                .bind(in_flight)
                                .bind(&load.address)
                                .bind(worker)
                                .execute(&mut *tx)
                                .await?;
                        }
                    }
                    tx.commit().await?;
                    Ok::<(), sqlx::Error>(())
                })
                .await?;
            });
        }
        Ok(())
    }

    /// Records the address each of `names` (host, address) was last asked at.
    pub async fn record_names(&self, names: &[(String, String)]) -> Result<(), Error> {
        let db = &self.queue.db;
        for chunk in names.chunks(CHUNK) {
            let sql = cached!(db.dialect(), chunk.len(), |dialect, n| {
                let rows = vec!["(?, ?, {now})"; n].join(", ");
                format!(
                    "{} address = {}, seen_at = {}",
                    upsert(
                        dialect,
                        &format!("INTO host_addresses (host, address, seen_at) VALUES {rows}"),
                        "host"
                    ),
                    inserted(dialect, "address"),
                    inserted(dialect, "seen_at"),
                )
            });
            with_pool!(db, pool => {
                retry("record host addresses", || {
                    let mut q = sqlx::query(&sql);
                    for (host, address) in chunk {
                        q = q.bind(host).bind(address);
                    }
                    q.execute(pool)
                })
                .await?;
            });
        }
        Ok(())
    }

    /// Deletes the shares and acknowledgements of workers no longer in the `workers` table.
    pub async fn forget_dead(&self) -> Result<(), Error> {
        let db = &self.queue.db;
        let holders = cached!(
            db.dialect(),
            "DELETE FROM address_holders WHERE worker NOT IN (SELECT id FROM workers)"
        );
        let syncs = cached!(
            db.dialect(),
            "DELETE FROM address_syncs WHERE worker NOT IN (SELECT id FROM workers)"
        );
        with_pool!(db, pool => {
            retry("forget dead holders", || sqlx::query(holders).execute(pool)).await?;
            retry("forget dead syncs", || sqlx::query(syncs).execute(pool)).await?;
        });
        Ok(())
    }

    /// The addresses held by live workers, those with the most requests waiting first: the
    /// ones that bound the drain.
    pub async fn view(&self, dead_after: Duration) -> Result<Vec<AddressView>, Error> {
        let sql = cached!(self.queue.db.dialect(), |dialect| {
            // A sum is a decimal on MySQL and PostgreSQL: read back as a whole number.
            let int = match dialect {
                Dialect::MySql => "SIGNED",
                Dialect::Postgres | Dialect::Sqlite => "BIGINT",
            };
            format!(
                "SELECT h.address, COUNT(*), CAST(SUM(h.waiting) AS {int}), \
                 CAST(SUM(h.in_flight) AS {int}), \
                 (SELECT COUNT(*) FROM host_addresses n WHERE n.address = h.address) \
                 FROM address_holders h JOIN workers w ON w.id = h.worker \
                 WHERE w.heartbeat_at >= {{now}} - ? \
                 GROUP BY h.address ORDER BY SUM(h.waiting) DESC, h.address"
            )
        });
        type Row = (String, i64, Option<i64>, Option<i64>, i64);
        let rows: Vec<Row> = with_pool!(&self.queue.db, pool => {
            retry("addresses", || sqlx::query_as(sql).bind(millis(dead_after)).fetch_all(pool))
                .await?
        });
        Ok(rows
            .into_iter()
            .map(
                |(address, holders, waiting, in_flight, hosts)| AddressView {
                    address,
                    holders,
                    waiting: waiting.unwrap_or(0),
                    in_flight: in_flight.unwrap_or(0),
                    hosts,
                },
            )
            .collect())
    }

    /// The address each of `hosts` was last asked at, where known.
    pub async fn of_hosts(&self, hosts: &[String]) -> Result<Vec<(String, String)>, Error> {
        let db = &self.queue.db;
        let mut found = Vec::new();
        for chunk in hosts.chunks(CHUNK) {
            let sql = cached!(db.dialect(), chunk.len(), |_, n| format!(
                "SELECT host, address FROM host_addresses WHERE host IN ({})",
                placeholders(n)
            ));
            let rows: Vec<(String, String)> = with_pool!(db, pool => {
                retry("host addresses", || {
                    let mut q = sqlx::query_as(&sql);
                    for host in chunk {
                        q = q.bind(host);
                    }
                    q.fetch_all(pool)
                })
                .await?
            });
            found.extend(rows);
        }
        Ok(found)
    }
}

/// The addresses among `worker`'s shared with other live workers, how many hold each, and how
/// long until their starts at larger shares are out of the window (a negative or null
/// `clear_at` gap: already). Binds: `dead_after`, then `worker` (`n` = 0: every address it
/// holds) or `n` addresses.
fn shared_sql(dialect: Dialect, n: usize) -> Cow<'static, str> {
    cached!(dialect, n, |_, n| {
        let set = if n == 0 {
            "SELECT address FROM address_holders WHERE worker = ?".to_owned()
        } else {
            placeholders(n)
        };
        format!(
            "SELECT h.address, COUNT(*), MAX(h.clear_at) - {{now}} FROM address_holders h \
             JOIN workers w ON w.id = h.worker \
             WHERE w.heartbeat_at >= {{now}} - ? AND h.address IN ({set}) \
             GROUP BY h.address HAVING COUNT(*) > 1"
        )
    })
}

/// The addresses among `worker`'s it may not use yet (see [`Addresses::shares`]). Binds:
/// `worker`, `dead_after`, then `n` addresses (`n` = 0: every address it holds).
fn waiting_sql(dialect: Dialect, n: usize) -> Cow<'static, str> {
    cached!(dialect, n, |_, n| {
        let among = if n == 0 {
            String::new()
        } else {
            format!(" AND m.address IN ({})", placeholders(n))
        };
        format!(
            "SELECT DISTINCT m.address FROM address_holders m \
             JOIN address_holders o ON o.address = m.address AND o.worker <> m.worker \
             JOIN workers w ON w.id = o.worker \
             LEFT JOIN address_syncs s ON s.worker = o.worker \
             WHERE m.worker = ? AND w.heartbeat_at >= {{now}} - ? \
             AND (m.since IS NULL OR (o.since IS NOT NULL AND o.since <= m.since \
             AND (s.synced_at IS NULL OR s.synced_at <= m.since))){among}"
        )
    })
}
