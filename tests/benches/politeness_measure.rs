//! What the politeness bench measures around a run besides the hosts: the CPU it cost
//! ([`Cpu`]) and what the MySQL server did ([`ServerWork`]), and what every scenario shares
//! ([`Bench`]). Its own file, so that `politeness.rs` and `politeness_floor.rs` both read it.

use crawler_tests::scale::{children_cpu, own_cpu, process_cpu};
use crawler_tests::Backend;
use tokio::runtime::Runtime;

/// What every scenario shares.
pub struct Bench {
    pub runtime: Runtime,
    pub backend: Backend,
    pub tmp: tempfile::TempDir,
    /// The MySQL server's process, whose CPU time a crawl's costs include (none on SQLite,
    /// which runs inside the worker).
    pub database: Option<u32>,
}

/// CPU seconds a run used: the tool's processes, the database server, this process (the
/// meter).
#[derive(Clone, Copy, Default)]
pub struct Cpu {
    pub tool: f64,
    pub database: f64,
    pub meter: f64,
}

impl Cpu {
    /// Runs `run` and measures what it cost.
    pub fn of<T>(bench: &Bench, run: impl FnOnce() -> T) -> (T, Cpu) {
        let database = || bench.database.map_or(0.0, process_cpu);
        let before = Cpu {
            tool: children_cpu(),
            database: database(),
            meter: own_cpu(),
        };
        let out = run();
        let cpu = Cpu {
            tool: children_cpu() - before.tool,
            database: database() - before.database,
            meter: own_cpu() - before.meter,
        };
        (out, cpu)
    }

    /// The tool's and its database server's, in seconds (not the meter's: the bench's own).
    pub fn with_database(&self) -> f64 {
        self.tool + self.database
    }

    /// Each figure in microseconds per URL.
    pub fn per_url(&self, urls: usize) -> String {
        let us = |s: f64| s * 1e6 / urls as f64;
        format!(
            "CPU per URL: tool {:.0} µs, database {:.0} µs, meter {:.0} µs; all {:.0} µs",
            us(self.tool),
            us(self.database),
            us(self.meter),
            us(self.tool + self.database + self.meter)
        )
    }
}

/// What the MySQL server did, from its global status counters: statements, commits (autocommit
/// statements included) and fsyncs (InnoDB's, the redo log's included: MariaDB 10.8 and later
/// count them there; `innodb_flush_log_at_trx_commit=1` asks for one at every commit, which
/// group commit shares between the commits that arrive together); then the rows written
/// (`Handler_write`, `Handler_update`, `Handler_delete`: rows inserted, updated and deleted
/// through the storage engines, internal temporary tables included) and InnoDB's page
/// modifications (`Innodb_buffer_pool_write_requests`: every change of a page, clustered or
/// secondary index, a row's and an index entry's alike), which say how many index pages a
/// row write touches.
#[derive(Clone, Copy, Default)]
pub struct ServerWork([f64; ServerWork::NAMES.len()]);

impl ServerWork {
    const NAMES: [&'static str; 7] = [
        "Questions",
        "Handler_commit",
        "Innodb_data_fsyncs",
        "Handler_write",
        "Handler_update",
        "Handler_delete",
        "Innodb_buffer_pool_write_requests",
    ];

    /// The server's counters now (zero on SQLite, which has none to read).
    pub fn now(bench: &Bench, url: &str) -> ServerWork {
        if bench.backend != Backend::MariaDb {
            return ServerWork::default();
        }
        bench.runtime.block_on(async {
            use sqlx::Connection;
            let mut conn = sqlx::MySqlConnection::connect(url)
                .await
                .expect("connect to the bench's MariaDB");
            let sql = format!(
                "SHOW GLOBAL STATUS WHERE Variable_name IN ('{}')",
                Self::NAMES.join("', '")
            );
            let rows: Vec<(String, String)> = sqlx::query_as(&sql)
                .fetch_all(&mut conn)
                .await
                .expect("read the server's status");
            ServerWork(Self::NAMES.map(|name| {
                rows.iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .and_then(|(_, v)| v.parse::<f64>().ok())
                    .unwrap_or(0.0)
            }))
        })
    }

    pub fn since(self, before: ServerWork) -> ServerWork {
        let mut work = self;
        for (now, then) in work.0.iter_mut().zip(before.0) {
            *now -= then;
        }
        work
    }

    pub fn per_url(&self, urls: usize) -> String {
        let [statements, commits, fsyncs, inserted, updated, deleted, pages] =
            self.0.map(|n| n / urls as f64);
        format!(
            "statements {statements:.3}, commits {commits:.3}, fsyncs {fsyncs:.3}, rows written \
             {:.2}, page changes {pages:.1} per URL",
            inserted + updated + deleted
        )
    }
}
