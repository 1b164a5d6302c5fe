//! What the scale benchmark (`benches/scale.rs`) needs from a database: millions of realistic
//! rows made by the database itself, the size of the table and of each index, and the CPU time
//! the database spends.
//!
//! Everything that differs between backends is in one [`Dialect`] per backend, chosen in
//! [`Dialect::of`], plus one arm per sqlx pool in `Session`: a new backend is a new `Dialect`
//! and an arm in each of `Dialect::of` and `Session`'s four matches (and, in the benchmark, where
//! its server's CPU time is read).

use std::time::Instant;

use crawler_queue::{Db, Queue};
use sqlx::pool::PoolConnection;
use sqlx::{MySql, Postgres, Sqlite};

/// The columns a fill writes, in the order of the `SELECT` lists below: the dialect's own
/// (`url`, `url_key`, `host`, `part`, `final_url`), then the [`MIX`] ones.
const COLUMNS: &str = "url, url_key, host, part, final_url, state, owner, claim_token, \
    expires_at, next_check_at, tries, attempts, verdict, http_status, error_kind, redirects, \
    latency_ms, checked_at, consecutive_failures, last_alive_at, created_at, verdict_since, \
    previous_verdict";

/// The state and verdict of row `i`, in plain SQL every dialect speaks, from `r` (`i` spread
/// over 0..1000) and `v` (over 0..100), `now` and `due` (per mille, bound). Of every 1,000
/// consecutive rows: `due` pending and due (rechecks made due within the last day), 5 pending
/// and waiting for a retry, 1 claimed, the rest done, checked within the last 7 days. Verdicts:
/// 85 % alive, 8 % dead, 3 % blocked, 3 % unreachable, 1 % error; 8 % redirected. Done rows
/// have `next_check_at = checked_at`, no owner and no lease, and keep their claim token, as the
/// write-back leaves them (`complete.rs`). History, as after daily passes over a month: 1 % of
/// the verdicts began in the last day, 1 % the day before, 1 % the day before that (each
/// replacing alive, or dead for an alive one); the rest began at the first check, 30 days ago.
const MIX: &str = "\
    CASE WHEN r < due + 5 THEN 0 WHEN r = due + 5 THEN 1 ELSE 2 END, \
    CASE WHEN r = due + 5 THEN 'scale-claimer' END, \
    (i * 2654435761) % 9007199254740881 + 1, \
    CASE WHEN r = due + 5 THEN now + 120000 END, \
    CASE WHEN r < due THEN now - i % 86400000 WHEN r < due + 5 THEN now + 60000 + i % 3600000 \
         WHEN r = due + 5 THEN now - 60000 ELSE now - i % 604800000 END, \
    CASE WHEN r >= due AND r < due + 5 THEN 1 ELSE 0 END, \
    1, \
    CASE WHEN v < 85 THEN 'alive' WHEN v < 93 THEN 'dead' WHEN v < 96 THEN 'blocked' \
         WHEN v < 99 THEN 'unreachable' ELSE 'error' END, \
    CASE WHEN v < 85 THEN 200 WHEN v < 93 THEN 404 WHEN v < 96 THEN 403 WHEN v < 99 THEN NULL \
         ELSE 500 END, \
    CASE WHEN v >= 96 AND v < 99 THEN 'timeout' END, \
    CASE WHEN v < 8 THEN 1 ELSE 0 END, \
    50 + i % 900, \
    CASE WHEN r > due + 5 THEN now - i % 604800000 ELSE now - 604800000 - i % 86400000 END, \
    CASE WHEN v < 85 THEN 0 ELSE 1 + i % 5 END, \
    CASE WHEN v < 85 AND r > due + 5 THEN now - i % 604800000 END, \
    now - 2592000000, \
    CASE WHEN ((i - i % 100) / 100) % 100 < 3 THEN now - (((i - i % 100) / 100) % 100) * 86400000 - i % 86400000 \
         ELSE now - 2592000000 END, \
    CASE WHEN ((i - i % 100) / 100) % 100 < 3 THEN CASE WHEN v < 85 THEN 'dead' ELSE 'alive' END END";

/// Rows one fill statement makes at most (MariaDB's `seq_0_to_999999`).
pub const FILL_CHUNK: u64 = 1_000_000;

/// What one backend's SQL looks like for the benchmark.
pub struct Dialect {
    /// Binds: count, first row number, now, hosts, due per mille. Inserts `count` rows.
    fill: String,
    /// Rows of (index name, what recreates it), secondary indexes of `sites` only.
    indexes: &'static str,
    /// The statements that drop these indexes (by name).
    drop: fn(&[(String, String)]) -> Vec<String>,
    /// The statements that recreate them.
    create: fn(&[(String, String)]) -> Vec<String>,
    /// Run before [`Dialect::sizes`] so that it is current.
    analyze: &'static str,
    /// Rows of (what, bytes): the table's data, then each index.
    sizes: &'static str,
    /// Forget the statement costs gathered so far (the server keeps them only when
    /// [`statement_costs_on`] asked it to).
    costs_reset: &'static [&'static str],
    /// Rows of (statement, "calls wall-µs rows-examined rows"), the costliest first.
    costs: Option<&'static str>,
}

impl Dialect {
    pub fn of(db: &Db) -> &'static Dialect {
        static MYSQL: std::sync::LazyLock<Dialect> = std::sync::LazyLock::new(mysql);
        static SQLITE: std::sync::LazyLock<Dialect> = std::sync::LazyLock::new(sqlite);
        static POSTGRES: std::sync::LazyLock<Dialect> = std::sync::LazyLock::new(postgres);
        match db {
            Db::MySql(_) => &MYSQL,
            Db::Sqlite(_) => &SQLITE,
            Db::Postgres(_) => &POSTGRES,
        }
    }
}

/// MariaDB: rows from the sequence engine; `url_key` and `part` computed as the seed computes
/// them (`seed.rs`, `parts.rs`: SHA-256 of the URL and of the host).
fn mysql() -> Dialect {
    Dialect {
        fill: format!(
            "INSERT INTO sites ({COLUMNS}) \
             SELECT url, UNHEX(LEFT(SHA2(url, 256), 32)), host, \
                    CONV(LEFT(SHA2(host, 256), 4), 16, 10) % 1024, \
                    IF(v < 8, CONCAT(url, '/'), NULL), {MIX} FROM ( \
               SELECT i, r, v, now, due, host, \
                      CONCAT('https://', host, '/', \
                             ELT(1 + i % 4, 'blog', 'docs/guide', 'news/2025/11', 'products/category'), \
                             '/item-', i, '.html', IF(i % 5 = 0, CONCAT('?ref=', i % 997), '')) AS url \
               FROM (SELECT i, (i * 7919) % 1000 AS r, (i * 104729) % 100 AS v, now, due, \
                            CONCAT('www.site', (i * 31) % hosts, '.example.com') AS host \
                     FROM (SELECT g.seq + p.first AS i, p.now, p.hosts, p.due \
                           FROM seq_0_to_999999 AS g \
                           CROSS JOIN (SELECT ? AS count, ? AS first, ? AS now, ? AS hosts, ? AS due) AS p \
                           WHERE g.seq < p.count) AS n) AS a) AS b"
        ),
        indexes: "SELECT INDEX_NAME, CONCAT(IF(NON_UNIQUE = 0, 'UNIQUE ', ''), 'KEY ', INDEX_NAME, ' (', \
                  GROUP_CONCAT(COLUMN_NAME, IFNULL(CONCAT('(', SUB_PART, ')'), '') \
                  ORDER BY SEQ_IN_INDEX SEPARATOR ', '), ')') \
                  FROM information_schema.STATISTICS \
                  WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'sites' AND INDEX_NAME <> 'PRIMARY' \
                  GROUP BY INDEX_NAME, NON_UNIQUE ORDER BY INDEX_NAME",
        // One ALTER each way: InnoDB builds all the indexes in one scan of the table, each by
        // sorting, far faster than inserting 100M rows into five B-trees.
        drop: |indexes| {
            let drops: Vec<String> = indexes.iter().map(|(n, _)| format!("DROP KEY {n}")).collect();
            vec![format!("ALTER TABLE sites {}", drops.join(", "))]
        },
        create: |indexes| {
            let adds: Vec<String> = indexes.iter().map(|(_, d)| format!("ADD {d}")).collect();
            vec![format!("ALTER TABLE sites {}", adds.join(", "))]
        },
        analyze: "ANALYZE TABLE sites",
        sizes: "SELECT CONVERT('table' USING utf8mb4), CAST(DATA_LENGTH AS SIGNED) FROM information_schema.TABLES \
                WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'sites' \
                UNION ALL SELECT CONCAT('index ', CONVERT(index_name USING utf8mb4)), CAST(stat_value * @@innodb_page_size AS SIGNED) \
                FROM mysql.innodb_index_stats WHERE database_name = DATABASE() \
                AND table_name = 'sites' AND stat_name = 'size' AND index_name <> 'PRIMARY'",
        // sqlx prepares every statement: MariaDB counts executions of prepared statements in
        // `prepared_statements_instances` (one row per connection and statement), not by digest.
        costs_reset: &["TRUNCATE performance_schema.prepared_statements_instances"],
        costs: Some(
            "SELECT LEFT(SQL_TEXT, 160), CONCAT(SUM(COUNT_EXECUTE), ' ', \
             SUM(SUM_TIMER_EXECUTE) DIV 1000000, ' ', SUM(SUM_ROWS_EXAMINED), ' ', \
             SUM(SUM_ROWS_AFFECTED + SUM_ROWS_SENT)) \
             FROM performance_schema.prepared_statements_instances \
             GROUP BY SQL_TEXT ORDER BY SUM(SUM_TIMER_EXECUTE) DESC LIMIT 12",
        ),
    }
}

/// SQLite: rows from a recursive CTE. It has no SHA-256 in SQL: `url_key` is 16 random bytes
/// (as random as a hash, so the unique index grows the same way) and `part` a multiplicative
/// hash of the host number.
fn sqlite() -> Dialect {
    Dialect {
        fill: format!(
            "WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g, \
               (SELECT ? AS count) AS c WHERE n + 1 < c.count) \
             INSERT INTO sites ({COLUMNS}) \
             SELECT url, randomblob(16), host, (h * 40503) % 1024, \
                    CASE WHEN v < 8 THEN url || '/' END, {MIX} FROM ( \
               SELECT i, r, v, now, due, host, h, \
                      'https://' || host || '/' || \
                      CASE i % 4 WHEN 0 THEN 'blog' WHEN 1 THEN 'docs/guide' \
                           WHEN 2 THEN 'news/2025/11' ELSE 'products/category' END || \
                      '/item-' || i || '.html' || \
                      CASE WHEN i % 5 = 0 THEN '?ref=' || (i % 997) ELSE '' END AS url \
               FROM (SELECT i, (i * 7919) % 1000 AS r, (i * 104729) % 100 AS v, now, due, \
                            (i * 31) % hosts AS h, 'www.site' || ((i * 31) % hosts) || '.example.com' AS host \
                     FROM (SELECT g.n + p.first AS i, p.now, p.hosts, p.due FROM g \
                           CROSS JOIN (SELECT ? AS first, ? AS now, ? AS hosts, ? AS due) AS p) AS n) AS a) AS b"
        ),
        indexes: "SELECT name, sql FROM sqlite_master \
                  WHERE type = 'index' AND tbl_name = 'sites' AND sql IS NOT NULL ORDER BY name",
        drop: |indexes| {
            indexes
                .iter()
                .map(|(n, _)| format!("DROP INDEX {n}"))
                .collect()
        },
        create: |indexes| indexes.iter().map(|(_, d)| d.clone()).collect(),
        analyze: "ANALYZE",
        sizes: "SELECT CASE name WHEN 'sites' THEN 'table' ELSE 'index ' || name END, SUM(pgsize) \
                FROM dbstat WHERE name = 'sites' \
                OR name IN (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sites') \
                GROUP BY name ORDER BY name <> 'sites', name",
        costs_reset: &[],
        costs: None,
    }
}

/// PostgreSQL: rows from `generate_series`; `url_key` and `part` computed as the seed computes
/// them (`seed.rs`, `parts.rs`: SHA-256 of the URL, and the first two bytes of SHA-256 of the
/// host, big-endian, mod 1024). Binds are numbered here and cast, as PostgreSQL will not guess
/// their types. The primary key is listed among the sizes (MariaDB's is the table itself).
fn postgres() -> Dialect {
    Dialect {
        fill: format!(
            "INSERT INTO sites ({COLUMNS}) \
             SELECT url, substring(sha256(convert_to(url, 'UTF8')) from 1 for 16), host, \
                    (get_byte(hd, 0) * 256 + get_byte(hd, 1)) % 1024, \
                    CASE WHEN v < 8 THEN url || '/' END, {MIX} FROM ( \
               SELECT i, r, v, now, due, host, sha256(convert_to(host, 'UTF8')) AS hd, \
                      'https://' || host || '/' || \
                      (ARRAY['blog', 'docs/guide', 'news/2025/11', 'products/category'])[1 + i % 4] || \
                      '/item-' || i || '.html' || \
                      CASE WHEN i % 5 = 0 THEN '?ref=' || (i % 997) ELSE '' END AS url \
               FROM (SELECT i, (i * 7919) % 1000 AS r, (i * 104729) % 100 AS v, now, due, \
                            'www.site' || ((i * 31) % hosts) || '.example.com' AS host \
                     FROM (SELECT g.n + p.first AS i, p.now, p.hosts, p.due \
                           FROM (SELECT $1::bigint AS count, $2::bigint AS first, $3::bigint AS now, \
                                        $4::bigint AS hosts, $5::bigint AS due) AS p \
                           CROSS JOIN LATERAL generate_series(0::bigint, p.count - 1) AS g(n)) AS n) AS a) AS b"
        ),
        indexes: "SELECT c.relname::text, pg_get_indexdef(c.oid) \
                  FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid \
                  WHERE x.indrelid = 'sites'::regclass AND NOT x.indisprimary ORDER BY 1",
        drop: |indexes| {
            indexes
                .iter()
                .map(|(n, _)| format!("DROP INDEX {n}"))
                .collect()
        },
        // Each index is one sort of the table; more sort memory than the default 64 MB keeps
        // the sorts of 100M rows off the disk.
        create: |indexes| {
            let mut statements = vec!["SET maintenance_work_mem = '1GB'".to_string()];
            statements.extend(indexes.iter().map(|(_, d)| d.clone()));
            statements
        },
        analyze: "ANALYZE sites",
        sizes: "SELECT 'table', pg_relation_size('sites') \
                UNION ALL SELECT * FROM (SELECT 'index ' || c.relname, pg_relation_size(c.oid) \
                FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid \
                WHERE x.indrelid = 'sites'::regclass ORDER BY c.relname) AS i",
        costs_reset: &[
            "CREATE EXTENSION IF NOT EXISTS pg_stat_statements",
            "SELECT pg_stat_statements_reset()",
        ],
        // No rows examined here: its place holds the shared buffers the statement touched.
        costs: Some(
            "SELECT LEFT(query, 160), calls || ' ' || round(total_exec_time * 1000) || ' ' || \
             (shared_blks_hit + shared_blks_read) || ' ' || rows \
             FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12",
        ),
    }
}

/// The server settings that make it keep per-statement costs for [`statement_costs`]:
/// MariaDB's performance schema, PostgreSQL's `pg_stat_statements`. They cost CPU themselves,
/// so the benchmark asks for them only when told to (`SCALE_STATEMENTS`).
pub fn statement_costs_on() -> (&'static str, &'static str) {
    (
        "--performance-schema=ON --performance-schema-instrument=statement/%=ON \
         --performance-schema-consumer-events-statements-current=ON",
        "shared_preload_libraries=pg_stat_statements pg_stat_statements.track=all",
    )
}

/// Forgets the per-statement costs the server has gathered (see [`statement_costs_on`]).
pub async fn reset_statement_costs(queue: &Queue) {
    let mut session = Session::of(queue.db()).await;
    for statement in Dialect::of(queue.db()).costs_reset {
        session.exec(statement, &[]).await;
    }
}

/// The costliest statements since [`reset_statement_costs`]: (statement, "calls wall-µs
/// examined rows"); empty where the backend keeps no such figures (SQLite).
pub async fn statement_costs(queue: &Queue) -> Vec<(String, String)> {
    let Some(sql) = Dialect::of(queue.db()).costs else {
        return Vec::new();
    };
    let mut session = Session::of(queue.db()).await;
    session
        .pairs(sql)
        .await
        .into_iter()
        .map(|(text, figures)| (text, figures.unwrap_or_default()))
        .collect()
}

/// How a fill went.
pub struct Filled {
    /// Seconds spent inserting rows.
    pub insert: f64,
    /// Seconds spent building the secondary indexes afterwards.
    pub index: f64,
}

/// Adds `rows` sites to the (empty, migrated) table of `queue` in SQL: `due` per mille of them
/// due now, the rest as [`MIX`] says, ten sites per host. The secondary indexes are dropped
/// first and rebuilt from their own definitions afterwards, so the table ends with exactly the
/// schema the migrations made. `progress` is called after each chunk with the rows so far.
pub async fn fill(queue: &Queue, rows: u64, due: i64, progress: impl Fn(u64)) -> Filled {
    let dialect = Dialect::of(queue.db());
    let now = queue.now().await.expect("read the database's clock");
    let hosts = (rows / 10).max(1) as i64;
    let mut session = Session::of(queue.db()).await;
    let indexes = session.pairs(dialect.indexes).await;
    let indexes: Vec<(String, String)> = indexes
        .into_iter()
        .map(|(name, definition)| (name, definition.expect("an index definition")))
        .collect();
    for statement in (dialect.drop)(&indexes) {
        session.exec(&statement, &[]).await;
    }
    let started = Instant::now();
    let mut first = 0;
    while first < rows {
        let count = FILL_CHUNK.min(rows - first);
        let binds = [count as i64, first as i64, now, hosts, due];
        session.exec(&dialect.fill, &binds).await;
        first += count;
        progress(first);
    }
    let insert = started.elapsed().as_secs_f64();
    let started = Instant::now();
    for statement in (dialect.create)(&indexes) {
        session.exec(&statement, &[]).await;
    }
    Filled {
        insert,
        index: started.elapsed().as_secs_f64(),
    }
}

/// (what, bytes) of the `sites` table: its data, then each secondary index.
pub async fn sizes(queue: &Queue) -> Vec<(String, i64)> {
    let dialect = Dialect::of(queue.db());
    let mut session = Session::of(queue.db()).await;
    session.exec(dialect.analyze, &[]).await;
    session
        .pairs(dialect.sizes)
        .await
        .into_iter()
        .map(|(what, bytes)| (what, bytes.and_then(|b| b.parse().ok()).unwrap_or(0)))
        .collect()
}

/// Makes every filled row a site never checked (no verdict, no check), for a first round: a
/// list's first crawl, where every verdict is new.
pub async fn forget_verdicts(queue: &Queue) {
    let mut session = Session::of(queue.db()).await;
    session
        .exec(
            "UPDATE sites SET verdict = NULL, http_status = NULL, error_kind = NULL, \
             redirects = NULL, latency_ms = NULL, checked_at = NULL, last_alive_at = NULL, \
             consecutive_failures = 0, verdict_since = NULL, previous_verdict = NULL",
            &[],
        )
        .await;
}

/// Writes the verdict history the fill's changes imply: a `verdict_changes` row for each site
/// whose verdict replaced another (its previous verdict, begun at the first check).
pub async fn fill_history(queue: &Queue) {
    let mut session = Session::of(queue.db()).await;
    session
        .exec(
            "INSERT INTO verdict_changes (site_id, changed_at, verdict, http_status, error_kind) \
             SELECT id, created_at, previous_verdict, NULL, NULL FROM sites \
             WHERE previous_verdict IS NOT NULL",
            &[],
        )
        .await;
}

/// Bytes of table `table` (a name of the schema's, not user input) with its indexes.
pub async fn table_bytes(queue: &Queue, table: &str) -> i64 {
    let (analyze, sql) = match queue.db() {
        Db::MySql(_) => (
            format!("ANALYZE TABLE {table}"),
            format!(
                "SELECT 'bytes', CAST(DATA_LENGTH + INDEX_LENGTH AS SIGNED) \
                 FROM information_schema.TABLES \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{table}'"
            ),
        ),
        Db::Postgres(_) => (
            format!("ANALYZE {table}"),
            format!("SELECT 'bytes', pg_total_relation_size('{table}')"),
        ),
        Db::Sqlite(_) => (
            "ANALYZE".to_owned(),
            format!(
                "SELECT 'bytes', SUM(pgsize) FROM dbstat WHERE name = '{table}' OR name IN \
                 (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '{table}')"
            ),
        ),
    };
    let mut session = Session::of(queue.db()).await;
    session.exec(&analyze, &[]).await;
    let rows = session.pairs(&sql).await;
    rows.first()
        .and_then(|(_, bytes)| bytes.as_deref()?.parse().ok())
        .unwrap_or(0)
}

/// One connection of the database's pool: a fill drops and recreates indexes, and SQLite
/// connections that did not make a schema change may still plan with the old schema.
enum Session {
    MySql(PoolConnection<MySql>),
    Sqlite(PoolConnection<Sqlite>),
    Postgres(PoolConnection<Postgres>),
}

impl Session {
    async fn of(db: &Db) -> Session {
        let session = match db {
            Db::MySql(pool) => pool.acquire().await.map(Session::MySql),
            Db::Sqlite(pool) => pool.acquire().await.map(Session::Sqlite),
            Db::Postgres(pool) => pool.acquire().await.map(Session::Postgres),
        };
        session.expect("a connection to the database")
    }

    /// Runs one statement with `binds`; panics with the statement's start on error.
    async fn exec(&mut self, sql: &str, binds: &[i64]) {
        let result = match self {
            Session::MySql(c) => bound(sqlx::query(sql), binds)
                .execute(&mut **c)
                .await
                .map(drop),
            Session::Sqlite(c) => bound(sqlx::query(sql), binds)
                .execute(&mut **c)
                .await
                .map(drop),
            Session::Postgres(c) => bound(sqlx::query(sql), binds)
                .execute(&mut **c)
                .await
                .map(drop),
        };
        result.unwrap_or_else(|e| panic!("{}…: {e}", &sql[..sql.len().min(120)]))
    }

    /// The rows of a two-column query, both read as text (a number as its decimal).
    async fn pairs(&mut self, sql: &str) -> Vec<(String, Option<String>)> {
        let result = match self {
            Session::MySql(c) => sqlx::query(sql).fetch_all(&mut **c).await.map(text_pairs),
            Session::Sqlite(c) => sqlx::query(sql).fetch_all(&mut **c).await.map(text_pairs),
            Session::Postgres(c) => sqlx::query(sql).fetch_all(&mut **c).await.map(text_pairs),
        };
        result.unwrap_or_else(|e| panic!("{}…: {e}", &sql[..sql.len().min(120)]))
    }
}

/// `query` with `binds` bound in order.
fn bound<'q, DB: sqlx::Database>(
    mut query: sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>,
    binds: &[i64],
) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>
where
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    for b in binds {
        query = query.bind(*b);
    }
    query
}

/// [`text_pair`] of each row.
fn text_pairs<R: sqlx::Row>(rows: Vec<R>) -> Vec<(String, Option<String>)>
where
    usize: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    rows.iter().map(text_pair).collect()
}

/// The first two columns of `row` as text, whether the database sent text or a number.
fn text_pair<R: sqlx::Row>(row: &R) -> (String, Option<String>)
where
    usize: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let text = |i: usize| {
        row.try_get::<Option<String>, _>(i)
            .ok()
            .flatten()
            .or_else(|| {
                row.try_get::<Option<i64>, _>(i)
                    .ok()
                    .flatten()
                    .map(|n| n.to_string())
            })
    };
    (text(0).unwrap_or_default(), text(1))
}

/// Where the database's CPU time is read: the server process, or this process when the
/// database runs inside it (SQLite).
#[derive(Clone, Copy, Debug)]
pub enum DbCpu {
    /// A server process: utime + stime from `/proc/<pid>/stat`.
    Server(u32),
    /// A server of many processes (PostgreSQL: a postmaster, a backend per connection,
    /// background workers): [`tree_cpu`] of its first process.
    Tree(u32),
    /// This process (getrusage): the database and the benchmark's own client work together.
    InProcess,
}

impl DbCpu {
    /// CPU seconds so far.
    pub fn seconds(self) -> f64 {
        match self {
            DbCpu::Server(pid) => process_cpu(pid),
            DbCpu::Tree(pid) => tree_cpu(pid),
            DbCpu::InProcess => own_cpu(),
        }
    }
}

/// utime + stime of process `pid`, in seconds (0 when it cannot be read).
pub fn process_cpu(pid: u32) -> f64 {
    let fields = stat_fields(pid);
    seconds(field(&fields, 14) + field(&fields, 15))
}

/// CPU seconds of process `pid` and all its descendants: its own utime + stime and those of
/// its reaped children (cutime + cstime: a backend that exited and was waited for), plus
/// utime + stime of every descendant still running (found by scanning `/proc` for parents).
/// Only a child that exits and is reaped between the scan and the parent's reading is lost.
pub fn tree_cpu(pid: u32) -> f64 {
    let processes: Vec<(u32, Vec<f64>)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .map(|p| (p, stat_fields(p)))
        .collect();
    let (mut tree, mut ticks) = (vec![pid], 0.0);
    let mut grew = true;
    while grew {
        grew = false;
        for (p, fields) in &processes {
            let parent = field(fields, 4) as u32;
            if !tree.contains(p) && tree.contains(&parent) {
                tree.push(*p);
                ticks += field(fields, 14) + field(fields, 15);
                grew = true;
            }
        }
    }
    let root = stat_fields(pid);
    ticks += field(&root, 14) + field(&root, 15) + field(&root, 16) + field(&root, 17);
    seconds(ticks)
}

/// The numeric fields of `/proc/<pid>/stat` from the 3rd on (empty when it cannot be read);
/// read them with [`field`].
fn stat_fields(pid: u32) -> Vec<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name, in parentheses, may hold spaces: count fields after its end.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0.0))
        .collect()
}

/// Field `n` of the stat line, numbered as in proc(5) (4 is the parent, 14 utime, …).
fn field(fields: &[f64], n: usize) -> f64 {
    fields.get(n - 3).copied().unwrap_or(0.0)
}

/// Clock ticks in seconds.
fn seconds(ticks: f64) -> f64 {
    // SAFETY: sysconf has no preconditions.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// user + system CPU of this process so far, in seconds.
pub fn own_cpu() -> f64 {
    usage_cpu(libc::RUSAGE_SELF)
}

/// user + system CPU of this process's children that have ended and been waited for, in
/// seconds: the difference around a run of child processes is what they used.
pub fn children_cpu() -> f64 {
    usage_cpu(libc::RUSAGE_CHILDREN)
}

fn usage_cpu(who: libc::c_int) -> f64 {
    // SAFETY: getrusage fills a local struct.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(who, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// The process of the MySQL server listening on `port` on this machine (`mariadbd` or
/// `mysqld` started with `--port=PORT`, or the only one when none says its port).
pub fn mysql_server_pid(port: u16) -> Option<u32> {
    let servers: Vec<(u32, String)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .filter_map(|pid: u32| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let program = cmdline.split(' ').next()?.rsplit('/').next()?.to_owned();
            matches!(program.as_str(), "mariadbd" | "mysqld").then_some((pid, cmdline))
        })
        .collect();
    let flag = format!("--port={port} ");
    // A server started with no port of its own listens on MySQL's default (Debian's, say,
    // beside the tests' private servers).
    let default = (port == 3306).then(|| servers.iter().filter(|(_, c)| !c.contains("--port=")));
    servers
        .iter()
        .find(|(_, cmdline)| cmdline.contains(&flag))
        .or_else(|| (servers.len() == 1).then(|| &servers[0]))
        .or_else(|| {
            let mut default = default?;
            let server = default.next()?;
            default.next().is_none().then_some(server)
        })
        .map(|(pid, _)| *pid)
}
