//! The queue's SQL, per dialect. Everything else in the crate is dialect-blind: whatever
//! differs between the dialects is written here only, as building blocks the modules build
//! their statements from: the clock and placeholders ([`statement`]), limited updates
//! ([`limited_update`]), the claim's statements and how each dialect makes a claim
//! ([`ClaimShape`]), upserts, index hints ([`sites_using`]), a case-insensitive `LIKE`, row
//! locks, the MySQL session's settings, ….
//!
//! Times are Unix milliseconds, always computed by the database (`{now}` below), never by the
//! caller: every lease and schedule decision uses one clock however many machines run workers.
//! Callers bind durations in milliseconds (`{now} + ?`), never instants.
//!
//! Statements are written with `?` placeholders; on PostgreSQL [`statement`] numbers them
//! (`$1`, `$2`, …), so callers never write a dialect's placeholders.
//!
//! States are written by name, `{pending}`, `{claimed}`, `{done}` (see [`crate::State`]), and
//! [`statement`] puts in their numbers; verdicts too, `{alive}`, `{dead}`, … (see
//! [`crate::Verdict`]), which it writes as their stored names, quoted. Every statement passes
//! through it, so no reader has to decode a number, and every name comes from the one place
//! the code defines it.
//!
//! Each module owns its statements, one way: it builds each once per dialect, on first use
//! ([`cached`]; per list length too, for a statement with an `IN (…)` list), so a call does no
//! string building, only a lookup.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::dialect::Dialect;
use crate::state::State;
use crate::verdict::Verdict;

/// Now, in Unix milliseconds, on the database's clock. sqlx sets the MySQL session's time zone
/// to UTC, so `UNIX_TIMESTAMP` never meets a daylight-saving gap.
const MYSQL_NOW: &str = "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)";
const SQLITE_NOW: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";
/// `statement_timestamp()` rather than `clock_timestamp()`: one value per statement, and
/// stable, so the planner can use it as an index bound (`next_check_at <= {now}` on
/// `sites_due`), where a volatile clock would be a filter on every pending row.
const POSTGRES_NOW: &str = "(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT";

/// The columns of a claimed site, as [`crate::Site`] reads them.
pub(crate) const CLAIMED_COLUMNS: &str =
    "id, claim_token, url, host, part, tries, crawl, depth, verdict";

/// The statement `text` in `dialect`: `{now}` becomes the dialect's clock, `{pending}`,
/// `{claimed}` and `{done}` the numbers of those states, `{alive}`, `{dead}`, `{blocked}`,
/// `{unreachable}`, `{error}` and `{excluded}` those verdicts' names as string literals
/// (`'dead'`), and on PostgreSQL each `?` a numbered placeholder. The one place SQL text is
/// finished.
pub(crate) fn statement(dialect: Dialect, text: &str) -> String {
    let now = match dialect {
        Dialect::MySql => MYSQL_NOW,
        Dialect::Postgres => POSTGRES_NOW,
        Dialect::Sqlite => SQLITE_NOW,
    };
    let mut text = text.replace("{now}", now);
    for (state, name) in State::ALL {
        text = text.replace(&format!("{{{name}}}"), &state.as_sql().to_string());
    }
    for verdict in Verdict::ALL {
        let name = verdict.as_str();
        text = text.replace(&format!("{{{name}}}"), &format!("'{name}'"));
    }
    match dialect {
        Dialect::Postgres => {
            debug_assert!(
                !(text.contains('?') && text.contains("$1")),
                "placeholders numbered in part only: {text}"
            );
            numbered(&text)
        }
        Dialect::MySql | Dialect::Sqlite => text,
    }
}

/// The statement `text` builds, finished for `dialect` ([`statement`]), built on its first use
/// and kept: `cached!(dialect, "SELECT … WHERE token = ?")`, or with a function of the dialect,
/// `cached!(dialect, |d| format!(…))`, for the text of a statement that varies with it. With a
/// list length, `cached!(dialect, n, |d, n| format!(…))`, a statement with a list of `n`
/// placeholders, kept per dialect and length ([`PerKey`]); with any other small key that
/// shapes it, `cached!(dialect, key => Type, |d, key| …)`. The function is a plain `fn`
/// (a closure that captures nothing), so nothing but the dialect and the key can shape a
/// kept statement: values are bound, never written into it. Each use has a cache of its own,
/// so a call does no string building beyond the first, only a lookup.
macro_rules! cached {
    ($dialect:expr, $text:literal) => {
        $crate::sql::cached!($dialect, |_| ::std::string::String::from($text))
    };
    ($dialect:expr, $text:expr) => {{
        static BUILT: $crate::sql::PerDialect = $crate::sql::PerDialect::new();
        BUILT.get($dialect, $text)
    }};
    ($dialect:expr, $key:expr => $K:ty, $text:expr) => {{
        static BUILT: $crate::sql::PerKey<$K> = $crate::sql::PerKey::new();
        BUILT.get($dialect, $key, $text)
    }};
    ($dialect:expr, $n:expr, $text:expr) => {
        $crate::sql::cached!($dialect, $n => usize, $text)
    };
}
pub(crate) use cached;

/// Where a dialect's statement is kept in [`PerDialect`] and [`PerKey`].
fn slot(dialect: Dialect) -> usize {
    match dialect {
        Dialect::MySql => 0,
        Dialect::Postgres => 1,
        Dialect::Sqlite => 2,
    }
}

/// One statement, built once per dialect: the cache behind [`cached`].
pub(crate) struct PerDialect([OnceLock<String>; 3]);

impl PerDialect {
    pub(crate) const fn new() -> PerDialect {
        PerDialect([const { OnceLock::new() }; 3])
    }

    /// The statement `text` builds for `dialect`, finished; built on the first call.
    pub(crate) fn get(
        &'static self,
        dialect: Dialect,
        text: fn(Dialect) -> String,
    ) -> &'static str {
        self.0[slot(dialect)].get_or_init(|| statement(dialect, &text(dialect)))
    }
}

/// How many keys (list lengths, mostly) [`PerKey`] keeps per statement and dialect, so the
/// keeping stays bounded whatever the callers pass. The padded lists (`padded`) have a dozen
/// lengths at most, powers of two up to 1,024; the unpadded ones are bounded by their chunks
/// (a claim's batch, 128 rows of a write-back, 500 links of a page, 1,000 ids of a release or
/// of a report's referrers), and the lengths they meet past these are built per call.
const KEYS: usize = 128;

/// One statement shaped by a small key, most often the length `n` of a list of placeholders
/// (an `IN (…)` list, a `CASE`, `VALUES` rows), built once per dialect and key, up to
/// [`KEYS`] keys: the cache behind [`cached`] given a key. What it keeps lives as long as
/// the process (leaked, bounded by [`KEYS`]), so a call reads it without copying. The lock
/// is held for a lookup, or a build on a key's first use.
pub(crate) struct PerKey<K>([Mutex<BTreeMap<K, &'static str>>; 3]);

impl<K: Ord + Copy> PerKey<K> {
    pub(crate) const fn new() -> PerKey<K> {
        PerKey([const { Mutex::new(BTreeMap::new()) }; 3])
    }

    /// The statement `text` builds for `dialect` and `key`, finished; built on the first call.
    pub(crate) fn get(
        &'static self,
        dialect: Dialect,
        key: K,
        text: fn(Dialect, K) -> String,
    ) -> Cow<'static, str> {
        let mut built = self.0[slot(dialect)]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(&sql) = built.get(&key) {
            return Cow::Borrowed(sql);
        }
        let sql = statement(dialect, &text(dialect, key));
        if built.len() >= KEYS {
            return Cow::Owned(sql);
        }
        let sql: &'static str = Box::leak(sql.into_boxed_str());
        built.insert(key, sql);
        Cow::Borrowed(sql)
    }
}

/// `UPDATE table SET set WHERE filter`, limited to the first `LIMIT ?` rows in `order`, in
/// `dialect`'s words. Binds: those of `set`, those of `filter`, n. MySQL can `UPDATE … ORDER BY
/// … LIMIT` directly; SQLite (as bundled) and PostgreSQL cannot, and pick the rows in a
/// subquery instead, which PostgreSQL locks skipping rows other statements hold (a claimer
/// never waits for another). Each is one statement, so choosing and marking cannot be
/// separated by another claimer.
///
/// On PostgreSQL the pick is a materialized CTE, `picked`, that the `UPDATE`'s `IN` reads:
/// PostgreSQL plans an `IN` subquery as a join, and may run it again for each row of the
/// `UPDATE` (with poor statistics, as after a mass `--recheck`); each run skips the rows the
/// statement already changed, so the `LIMIT` stops bounding them: a claim of 100 was seen
/// taking 113 rows. Only a `WITH` query is run exactly once (PostgreSQL BUG #15715; Tom
/// Lane's answer there). The CTE comes first but binds after `set`, so its placeholders are
/// numbered here, in bind order; append nothing with a `?` to it.
pub(crate) fn limited_update(
    dialect: Dialect,
    table: &str,
    set: &str,
    filter: &str,
    order: &str,
) -> String {
    let pick = format!("SELECT id FROM {table} WHERE {filter} ORDER BY {order} LIMIT ?");
    match dialect {
        Dialect::MySql => {
            format!("UPDATE {table} SET {set} WHERE {filter} ORDER BY {order} LIMIT ?")
        }
        Dialect::Sqlite => format!("UPDATE {table} SET {set} WHERE id IN ({pick})"),
        Dialect::Postgres => {
            let (set, n) = numbered_from(set, 0);
            let (pick, _) = numbered_from(&pick, n);
            format!(
                "WITH picked AS MATERIALIZED ({pick} FOR UPDATE SKIP LOCKED) \
                 UPDATE {table} SET {set} WHERE id IN (SELECT id FROM picked)"
            )
        }
    }
}

/// `text` with each `?` outside quotes (string literals, quoted names) numbered `$1`, `$2`, …
fn numbered(text: &str) -> String {
    numbered_from(text, 0).0
}

/// `text` with each `?` outside quotes numbered from `after + 1` on, and the last number.
fn numbered_from(text: &str, after: usize) -> (String, usize) {
    let mut out = String::with_capacity(text.len() + 16);
    let (mut n, mut quote) = (after, None);
    for c in text.chars() {
        match (c, quote) {
            ('?', None) => {
                n += 1;
                let _ = write!(out, "${n}");
                continue;
            }
            ('\'' | '"', None) => quote = Some(c),
            (c, Some(open)) if c == open => quote = None,
            _ => {}
        }
        out.push(c);
    }
    (out, n)
}

/// `INSERT {into}` (`INTO table (…) VALUES …`) that skips rows whose key exists, in
/// `dialect`'s words: a prefix on MySQL and SQLite, a suffix on PostgreSQL.
pub(crate) fn insert_ignore(dialect: Dialect, into: &str) -> String {
    match dialect {
        Dialect::MySql => format!("INSERT IGNORE {into}"),
        Dialect::Sqlite => format!("INSERT OR IGNORE {into}"),
        Dialect::Postgres => format!("INSERT {into} ON CONFLICT DO NOTHING"),
    }
}

/// `INSERT {into}` that, when a row of the same `key` exists, updates it instead: the
/// assignments follow. They name the inserted values with [`inserted`].
pub(crate) fn upsert(dialect: Dialect, into: &str, key: &str) -> String {
    match dialect {
        Dialect::MySql => format!("INSERT {into} ON DUPLICATE KEY UPDATE"),
        Dialect::Postgres | Dialect::Sqlite => {
            format!("INSERT {into} ON CONFLICT ({key}) DO UPDATE SET")
        }
    }
}

/// In an [`upsert`]'s assignments, the value the insert would have given `column`.
pub(crate) fn inserted(dialect: Dialect, column: &str) -> String {
    match dialect {
        Dialect::MySql => format!("VALUES({column})"),
        Dialect::Postgres | Dialect::Sqlite => format!("excluded.{column}"),
    }
}

/// `INSERT INTO table (key…, columns…) VALUES {values}` that replaces the row of the same key.
pub(crate) fn replace(
    dialect: Dialect,
    table: &str,
    key: &[&str],
    columns: &[&str],
    values: &str,
) -> String {
    let all = [key, columns].concat().join(", ");
    let into = format!("INTO {table} ({all}) VALUES {values}");
    match dialect {
        Dialect::MySql => format!("REPLACE {into}"),
        Dialect::Sqlite => format!("INSERT OR REPLACE {into}"),
        Dialect::Postgres => {
            let set: Vec<String> = columns
                .iter()
                .map(|c| format!("{c} = {}", inserted(dialect, c)))
                .collect();
            format!(
                "{} {}",
                upsert(dialect, &into, &key.join(", ")),
                set.join(", ")
            )
        }
    }
}

/// `INSERT {into}` whose new row's id the caller reads: PostgreSQL returns it (`RETURNING id`,
/// read from the returned row); MySQL and SQLite report it with the statement's result
/// (`last_insert_id`, `last_insert_rowid`), and need nothing more.
pub(crate) fn insert_returning_id(dialect: Dialect, into: &str) -> String {
    match dialect {
        Dialect::Postgres => format!("INSERT {into} RETURNING id"),
        Dialect::MySql | Dialect::Sqlite => format!("INSERT {into}"),
    }
}

/// The larger of its arguments, a function of two or more: `GREATEST`, which SQLite calls
/// `MAX` (its scalar form, given several arguments; one makes it the aggregate). With a NULL
/// argument MySQL's and SQLite's are NULL, PostgreSQL's ignores it.
pub(crate) fn greatest(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => "MAX",
        Dialect::MySql | Dialect::Postgres => "GREATEST",
    }
}

/// `LIKE` that ignores case (for ASCII at least): MySQL's `LIKE` does under the tables'
/// `_ci` collation, and SQLite's does for ASCII; PostgreSQL's is case-sensitive, its `ILIKE`
/// is not.
pub(crate) fn case_insensitive_like(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => "ILIKE",
        Dialect::MySql | Dialect::Sqlite => "LIKE",
    }
}

/// `column`, a text column MySQL compares as bytes (`COLLATE utf8mb4_bin`), as text again:
/// sqlx reads such a column as `VARBINARY`, so it is converted back (`CONVERT(… USING
/// utf8mb4)`) to be read as a string. The other dialects' text columns are text already. For a
/// select list: a comparison with the conversion could not use the column's index.
pub(crate) fn as_text(dialect: Dialect, column: &str) -> String {
    match dialect {
        Dialect::MySql => format!("CONVERT({column} USING utf8mb4)"),
        Dialect::Postgres | Dialect::Sqlite => column.to_owned(),
    }
}

/// Integer division, for an expression's buckets (`(t - ?) DIV ?`): MySQL's `/` gives a
/// decimal, its `DIV` an integer; PostgreSQL's and SQLite's `/` of two integers is an integer.
pub(crate) fn int_div(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::MySql => "DIV",
        Dialect::Postgres | Dialect::Sqlite => "/",
    }
}

/// ` FOR UPDATE`, which locks the rows a `SELECT` reads until its transaction ends; `None` on
/// SQLite, which has one writer at a time and nothing to lock.
pub(crate) fn for_update(dialect: Dialect) -> Option<&'static str> {
    match dialect {
        Dialect::MySql | Dialect::Postgres => Some(" FOR UPDATE"),
        Dialect::Sqlite => None,
    }
}

/// What each new MySQL connection runs first: READ COMMITTED, for fewer gap locks and far
/// fewer deadlocks between concurrent claimers than REPEATABLE READ
/// (https://github.com/rails/solid_queue/issues/531). PostgreSQL's default is READ COMMITTED
/// already, and what its claim's SKIP LOCKED wants.
pub(crate) const MYSQL_SESSION: &str = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";

/// Takes the named lock under which a MySQL process migrates (`db.rs`), waiting up to 300 s:
/// one per database. 1 when taken.
pub(crate) const MYSQL_MIGRATE_LOCK: &str =
    "SELECT GET_LOCK(CONCAT('crawler.migrate.', DATABASE()), 300)";

/// Releases [`MYSQL_MIGRATE_LOCK`].
pub(crate) const MYSQL_MIGRATE_UNLOCK: &str =
    "DO RELEASE_LOCK(CONCAT('crawler.migrate.', DATABASE()))";

/// An index of `sites` that a statement pins its plan to: see [`sites_using`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SitesIndex {
    /// The primary key, `id`: for fenced writes `WHERE claim_token = ? AND state = {claimed}
    /// AND id IN (…)` ([`owned_ids`]), which MariaDB would otherwise serve from the claimed
    /// part of `sites_due`, scanning every claimed row of the fleet for each statement.
    Primary,
    /// `sites_host`: the sites in host order, for the hosts report's `WHERE host > ? GROUP BY
    /// host ORDER BY host LIMIT ?`, which then stops after a page's hosts. On the first pages
    /// `host > ?` matches nearly every row, which could tempt a planner into scanning and
    /// grouping the whole table for each page; MariaDB 10.11 picks the index unaided, but the
    /// plan is pinned, as for the other indexes.
    Host,
    /// `sites_due`: (state, next_check_at, part, id), the order sites are claimed in.
    Due,
    /// `sites_moved`: (moved_at, id), the pages of moved links.
    Moved,
    /// `sites_url_key`: sites by URL, for `WHERE url_key IN (…) AND state …` (the pages whose
    /// sections are held, a recheck by URL). With more than a few dozen keys in the list,
    /// SQLite's planner was seen to serve these from `sites_due` (`state = ?`), reading every
    /// pending row for each statement: a crawl with 20,000 links to sections spent 3 ms a
    /// statement where the keys take 0.25 ms. Pinned on SQLite too ([`sites_using_on_sqlite_too`]).
    UrlKey,
}

/// `sites` read through `index`, for a `FROM` or an `UPDATE`: on MySQL `FORCE INDEX`, since
/// MariaDB's planner has been seen not to pick the index a statement was measured with. For
/// these statements SQLite's and PostgreSQL's planners pick it unaided (and PostgreSQL has no
/// index hints): plain `sites`. [`sites_using_on_sqlite_too`] pins SQLite's plan as well.
pub(crate) fn sites_using(dialect: Dialect, index: SitesIndex) -> &'static str {
    match (dialect, index) {
        (Dialect::MySql, SitesIndex::Primary) => "sites FORCE INDEX (PRIMARY)",
        (Dialect::MySql, SitesIndex::Host) => "sites FORCE INDEX (sites_host)",
        (Dialect::MySql, SitesIndex::Due) => "sites FORCE INDEX (sites_due)",
        (Dialect::MySql, SitesIndex::Moved) => "sites FORCE INDEX (sites_moved)",
        (Dialect::MySql, SitesIndex::UrlKey) => "sites FORCE INDEX (sites_url_key)",
        (Dialect::Postgres | Dialect::Sqlite, _) => "sites",
    }
}

/// [`sites_using`], and on SQLite too, with `INDEXED BY` (which fails the statement rather than
/// plan it without the index): for the statements pinned on both (the dashboard's newest dead
/// sites, `report/latest_dead.rs`; sites by a list of URL keys, [`SitesIndex::UrlKey`]).
/// SQLite's primary key is the rowid, which has no index name: by id it is plain `sites`, as
/// in [`sites_using`].
pub(crate) fn sites_using_on_sqlite_too(dialect: Dialect, index: SitesIndex) -> &'static str {
    match (dialect, index) {
        (Dialect::Sqlite, SitesIndex::Host) => "sites INDEXED BY sites_host",
        (Dialect::Sqlite, SitesIndex::Due) => "sites INDEXED BY sites_due",
        (Dialect::Sqlite, SitesIndex::Moved) => "sites INDEXED BY sites_moved",
        (Dialect::Sqlite, SitesIndex::UrlKey) => "sites INDEXED BY sites_url_key",
        (Dialect::Sqlite, SitesIndex::Primary) | (Dialect::MySql | Dialect::Postgres, _) => {
            sites_using(dialect, index)
        }
    }
}

/// How a dialect makes a claim (`Queue::claim_rows`). Every shape is update-then-select: one
/// `UPDATE` decides which rows the claim gets, stamping only rows still pending and due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClaimShape {
    /// [`claim_any`] is the `UPDATE`, its pick inside it (SQLite); the batch is read by token.
    Stamp,
    /// As `Stamp`, and outside held partitions [`claim_any`] returns the rows it stamped
    /// (PostgreSQL's `UPDATE … RETURNING`), so no read follows unless it was retried.
    StampReturning,
    /// [`claim_any`] (or [`claim_held`]) picks the ids of due sites by a plain read of
    /// `sites_due` alone (it holds the partition; no row is read or locked), then [`mark`]
    /// stamps the claim on those of them still pending and due, by primary key (MySQL). In one
    /// `UPDATE … ORDER BY … LIMIT` MySQL would read and lock every row it passes, those of
    /// other workers' partitions included, a cost that grew with the fleet; as a derived table
    /// in the `UPDATE`, the pick locks them all.
    PickThenMark,
}

impl ClaimShape {
    /// How `dialect` makes a claim.
    pub(crate) fn of(dialect: Dialect) -> ClaimShape {
        match dialect {
            Dialect::MySql => ClaimShape::PickThenMark,
            Dialect::Postgres => ClaimShape::StampReturning,
            Dialect::Sqlite => ClaimShape::Stamp,
        }
    }
}

/// A claim's assignments: binds owner, token, lease ms.
const CLAIM_SET: &str = "state = {claimed}, owner = ?, claim_token = ?, expires_at = {now} + ?";

/// The sites due for a check.
pub(crate) const DUE: &str = "state = {pending} AND next_check_at <= {now}";

/// A claim of the due sites that match `filter` too: on MySQL only the pick of their ids
/// (binds: those of the filter, n; [`mark`] stamps them), elsewhere the limited `UPDATE` that
/// stamps them (binds: owner, token, lease ms, those of the filter, n).
fn claim(dialect: Dialect, filter: &str) -> String {
    match dialect {
        Dialect::MySql => format!(
            "SELECT id FROM {} WHERE {filter} ORDER BY {CLAIM_ORDER} LIMIT ?",
            sites_using(dialect, SitesIndex::Due)
        ),
        Dialect::Postgres | Dialect::Sqlite => {
            limited_update(dialect, "sites", CLAIM_SET, filter, CLAIM_ORDER)
        }
    }
}

/// For [`cached`]: the claim's first statement in any partition, as [`ClaimShape::of`] says:
/// an `UPDATE` that stamps a claim on up to n due pending rows (binds: owner, token, lease ms,
/// n), returning them on PostgreSQL, or on MySQL the pick of their ids (binds: n).
pub(crate) fn claim_any(dialect: Dialect) -> String {
    match ClaimShape::of(dialect) {
        ClaimShape::StampReturning => {
            format!("{} RETURNING {CLAIMED_COLUMNS}", claim(dialect, DUE))
        }
        ClaimShape::Stamp | ClaimShape::PickThenMark => claim(dialect, DUE),
    }
}

/// For [`cached`]: binds: owner, token, lease ms, the `parts` partitions, n. Like
/// [`claim_any`], only in those host partitions, and never returning its rows: which
/// partitions are still held is read by `Queue::read_batch`, a later statement.
/// (PostgreSQL's claim reads the partitions in its own snapshot: a hand-over that ran while
/// it did would see none of its sites in flight, and its RETURNING would keep sites of a
/// partition already handed over; the queue test of partitions changing hands caught it.)
/// On MySQL (`ClaimShape::PickThenMark`), only picks them (binds: the partitions, n).
pub(crate) fn claim_held(dialect: Dialect, parts: usize) -> String {
    claim(
        dialect,
        &format!("{DUE} AND part IN ({})", placeholders(parts)),
    )
}

/// For [`cached`]: `ClaimShape::PickThenMark`'s stamp of the claim on those of `n` picked ids
/// still pending and due, by primary key. Binds: owner, token, lease ms, the ids.
pub(crate) fn mark(dialect: Dialect, n: usize) -> String {
    format!(
        "UPDATE {} SET {CLAIM_SET} WHERE id IN ({}) AND {DUE}",
        sites_using(dialect, SitesIndex::Primary),
        placeholders(n)
    )
}

/// The alternative claim's choice (`ClaimMethod::SkipLocked`, MySQL): due rows, locked,
/// skipping those other claimers hold locked. Binds: token, those of `in_parts` (`AND part IN
/// (…)`, or nothing), n.
pub(crate) fn choose_skip_locked(dialect: Dialect, in_parts: &str) -> String {
    format!(
        "SELECT id, ? AS claim_token, url, host, part, tries, crawl, depth, verdict \
         FROM {} WHERE state = {{pending}} AND next_check_at <= {{now}} \
         {in_parts} ORDER BY {CLAIM_ORDER} LIMIT ? FOR UPDATE SKIP LOCKED",
        sites_using(dialect, SitesIndex::Due)
    )
}

/// The alternative claim's mark of the `n` rows [`choose_skip_locked`] chose and locked.
/// Binds: owner, token, lease ms, the ids.
pub(crate) fn mark_chosen(dialect: Dialect, n: usize) -> String {
    format!(
        "UPDATE {} SET state = {{claimed}}, owner = ?, claim_token = ?, \
         expires_at = {{now}} + ? WHERE id IN ({})",
        sites_using(dialect, SitesIndex::Primary),
        placeholders(n)
    )
}

/// The order in which due sites are claimed: the order of the `sites_due` index (state,
/// next_check_at, part, id), so that a claim reads it and stops after its rows.
pub(crate) const CLAIM_ORDER: &str = "next_check_at, part, id";

/// `rows` padded to a power of two by repeating the last one, so that a statement with an
/// `IN` list of them has one of a few shapes (each connection prepares each once), and the
/// list still matches the same rows.
pub(crate) fn padded<T: Copy>(rows: &[T]) -> Vec<T> {
    let mut padded = rows.to_vec();
    if let Some(&last) = rows.last() {
        padded.resize(rows.len().next_power_of_two(), last);
    }
    padded
}

/// [`padded`] for rows that are not `Copy` (a page's new sites, keys read back): references to
/// them.
pub(crate) fn padded_refs<T>(rows: &[T]) -> Vec<&T> {
    padded(&rows.iter().collect::<Vec<&T>>())
}

/// The rows of a list of `n` ids that claim token `?` holds in `state` (`{claimed}` or
/// `{done}`): `claim_token = ? AND state = … AND id IN (…)`, the fence of every write and read
/// of a claim's rows by id. Only the id list should serve it, through the primary key
/// (MariaDB's statements read [`sites_using`] the primary key). PostgreSQL has no index hints, and
/// its planner, which believes a token's rows and the claimed state's rows few, was seen
/// serving it from `sites_due` or `sites_token`: it read every claimed row of the fleet (2,670
/// buffers per site written back five at a time, in the scale benchmark). SQLite planned the
/// per-row fence ([`owned_rows`], more than a few rows) on `sites_due` by its state: each
/// write-back read every claimed row and tested it against every token of the statement (a
/// twentieth of the worker's CPU on politeness z), each read of rows written every row done.
/// On both the two tests are written as expressions no index serves, which leaves the primary
/// key.
pub(crate) fn owned_ids(dialect: Dialect, state: &str, n: usize) -> String {
    owned(dialect, "?", state, n)
}

/// [`owned_ids`] with a token per row: `n` rows by id, each still in `state` and still its own
/// claim's (`claim_token = CASE id WHEN ? THEN ? … END`, an id and its token bound per row,
/// then the ids of the `IN` list), so that rows of many claims are written in one statement.
pub(crate) fn owned_rows(dialect: Dialect, state: &str, n: usize) -> String {
    owned(dialect, &case_by_id(n), state, n)
}

/// What [`owned_rows`] binds for `rows` (each an id and the token of the claim that took it),
/// in order: each id with its token, then the ids.
pub(crate) fn owned_rows_binds(
    rows: impl Iterator<Item = (i64, i64)> + Clone,
) -> impl Iterator<Item = i64> {
    let pairs = rows.clone().flat_map(|(id, token)| [id, token]);
    pairs.chain(rows.map(|(id, _)| id))
}

/// `claim_token = {token} AND state = {state} AND id IN (…)`, written as [`owned_ids`] says.
fn owned(dialect: Dialect, token: &str, state: &str, n: usize) -> String {
    let (token_column, state_column) = match dialect {
        Dialect::Postgres | Dialect::Sqlite => ("claim_token + 0", "state + 0"),
        Dialect::MySql => ("claim_token", "state"),
    };
    format!(
        "{token_column} = {token} AND {state_column} = {state} AND id IN ({})",
        placeholders(n)
    )
}

/// `?, ?, …, ?`: `n` placeholders for an `IN (…)` list.
pub(crate) fn placeholders(n: usize) -> String {
    let mut s = "?, ".repeat(n);
    s.truncate(s.len().saturating_sub(2));
    s
}

/// `CASE id WHEN ? THEN ? … END`: one value per row, for writing a batch in one statement.
pub(crate) fn case_by_id(n: usize) -> String {
    format!("CASE id {} END", "WHEN ? THEN ? ".repeat(n).trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_comma_separated() {
        assert_eq!(placeholders(3), "?, ?, ?");
        assert_eq!(placeholders(1), "?");
    }

    #[test]
    fn case_by_id_has_one_pair_per_row() {
        assert_eq!(case_by_id(2), "CASE id WHEN ? THEN ? WHEN ? THEN ? END");
    }

    #[test]
    fn every_statement_uses_the_dialects_clock() {
        for (dialect, clock) in [
            (Dialect::MySql, "NOW(3)"),
            (Dialect::Postgres, "statement_timestamp()"),
            (Dialect::Sqlite, "julianday"),
        ] {
            let claim = statement(dialect, &claim_any(dialect));
            assert!(!claim.contains("{now}"), "{claim}");
            assert!(!claim.contains("{claimed}"), "{claim}");
            assert!(claim.contains(clock), "{claim}");
        }
    }

    #[test]
    fn postgres_placeholders_are_numbered_outside_quotes() {
        assert_eq!(
            statement(
                Dialect::Postgres,
                "SELECT ? WHERE a = '?' AND \"b?\" = ? AND c = 'it''s?'"
            ),
            "SELECT $1 WHERE a = '?' AND \"b?\" = $2 AND c = 'it''s?'"
        );
        assert_eq!(statement(Dialect::MySql, "a = ?"), "a = ?");
    }

    #[test]
    fn postgres_claims_in_one_statement_picking_once_and_skipping_locked_rows() {
        let claim = &statement(Dialect::Postgres, &claim_any(Dialect::Postgres));
        assert!(
            claim.starts_with("WITH picked AS MATERIALIZED (SELECT id FROM sites WHERE "),
            "{claim}"
        );
        let claimed = State::Claimed.as_sql();
        assert!(
            claim.contains(&format!(
                "LIMIT $4 FOR UPDATE SKIP LOCKED) UPDATE sites SET state = {claimed}, \
                 owner = $1, claim_token = $2, "
            )),
            "{claim}"
        );
        assert!(
            claim.ends_with(&format!(
                "WHERE id IN (SELECT id FROM picked) RETURNING {CLAIMED_COLUMNS}"
            )),
            "{claim}"
        );
        assert!(!claim.contains('?'), "{claim}");
    }

    #[test]
    fn postgres_picks_first_with_its_placeholders_numbered_in_bind_order() {
        assert_eq!(
            statement(
                Dialect::Postgres,
                &limited_update(
                    Dialect::Postgres,
                    "t",
                    "a = ?",
                    "b = ? AND c IN (?, ?)",
                    "id"
                )
            ),
            "WITH picked AS MATERIALIZED (SELECT id FROM t WHERE b = $2 AND c IN ($3, $4) \
             ORDER BY id LIMIT $5 FOR UPDATE SKIP LOCKED) UPDATE t SET a = $1 \
             WHERE id IN (SELECT id FROM picked)"
        );
        assert_eq!(
            limited_update(Dialect::Sqlite, "t", "a = ?", "b = ?", "id"),
            "UPDATE t SET a = ? WHERE id IN (SELECT id FROM t WHERE b = ? ORDER BY id LIMIT ?)"
        );
    }

    #[test]
    fn a_cached_statement_is_built_once_per_dialect_and_length() {
        fn build(_: Dialect, n: usize) -> String {
            format!("SELECT {{now}} WHERE id IN ({})", placeholders(n))
        }
        let first = cached!(Dialect::Postgres, 2, build);
        assert_eq!(
            first,
            "SELECT (EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT WHERE id IN ($1, $2)"
        );
        static BUILT: PerKey<usize> = PerKey::new();
        let (a, b) = (
            BUILT.get(Dialect::MySql, 3, build),
            BUILT.get(Dialect::MySql, 3, build),
        );
        assert!(matches!((&a, &b), (Cow::Borrowed(a), Cow::Borrowed(b)) if std::ptr::eq(*a, *b)));
        for n in 0..=KEYS {
            BUILT.get(Dialect::Sqlite, n, build);
        }
        assert!(matches!(
            BUILT.get(Dialect::Sqlite, KEYS, build),
            Cow::Owned(_)
        ));
        assert_eq!(BUILT.0[slot(Dialect::Sqlite)].lock().unwrap().len(), KEYS);
    }

    #[test]
    fn verdicts_are_written_by_name_and_finished_as_quoted_names() {
        let text = "verdict = {dead} AND url = ? OR verdict IN ({alive}, {blocked}, {unreachable}, {error}, {excluded})";
        for (dialect, placeholder) in [(Dialect::MySql, "?"), (Dialect::Postgres, "$1")] {
            assert_eq!(
                statement(dialect, text),
                format!(
                    "verdict = 'dead' AND url = {placeholder} \
                     OR verdict IN ('alive', 'blocked', 'unreachable', 'error', 'excluded')"
                )
            );
        }
    }

    #[test]
    fn only_mariadb_and_where_asked_sqlite_are_pinned_to_an_index() {
        for (dialect, by_id) in [
            (Dialect::MySql, "sites FORCE INDEX (PRIMARY)"),
            (Dialect::Postgres, "sites"),
            (Dialect::Sqlite, "sites"),
        ] {
            assert_eq!(sites_using(dialect, SitesIndex::Primary), by_id);
        }
        let due = |dialect| {
            (
                sites_using(dialect, SitesIndex::Due),
                sites_using_on_sqlite_too(dialect, SitesIndex::Due),
            )
        };
        assert_eq!(
            due(Dialect::MySql),
            (
                "sites FORCE INDEX (sites_due)",
                "sites FORCE INDEX (sites_due)"
            )
        );
        assert_eq!(due(Dialect::Postgres), ("sites", "sites"));
        assert_eq!(
            due(Dialect::Sqlite),
            ("sites", "sites INDEXED BY sites_due")
        );
        assert_eq!(
            sites_using_on_sqlite_too(Dialect::Sqlite, SitesIndex::Primary),
            "sites"
        );
    }

    #[test]
    fn each_dialect_skips_known_rows_in_its_own_words() {
        let into = "INTO t (a) VALUES (?)";
        assert_eq!(
            insert_ignore(Dialect::MySql, into),
            "INSERT IGNORE INTO t (a) VALUES (?)"
        );
        assert_eq!(
            insert_ignore(Dialect::Postgres, into),
            "INSERT INTO t (a) VALUES (?) ON CONFLICT DO NOTHING"
        );
    }
}
