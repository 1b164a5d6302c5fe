//! What the bench's parts share: [`Bench`] (binaries, scratch directory, HTTP server), the
//! checks in flight, the main list's length, the role variable of the children, and reading
//! /proc files.

use std::path::PathBuf;
use std::process::Command;

use tempfile::TempDir;

/// Checks in flight, the same for the worker and the bare loop: `SYSTEM_BENCH_CONCURRENCY`,
/// 128 by default (the worker's own default is 512: run with it to see its memory there).
pub static CONCURRENCY: std::sync::LazyLock<usize> = std::sync::LazyLock::new(|| {
    std::env::var("SYSTEM_BENCH_CONCURRENCY")
        .map(|v| v.parse().expect("SYSTEM_BENCH_CONCURRENCY: a number"))
        .unwrap_or(128)
});
/// The list of the main comparison.
pub const SMALL: usize = 100_000;
/// The variable that tells this binary, re-executed, which child it is.
pub const ROLE: &str = "SYSTEM_BENCH_ROLE";

/// What every run needs: where the binaries are, a scratch directory, the HTTP server.
pub struct Bench {
    pub bins: PathBuf,
    pub tmp: TempDir,
    pub port: u16,
    pub server_pid: u32,
    pub runtime: tokio::runtime::Runtime,
    pub perf: Option<PathBuf>,
}

impl Bench {
    pub fn bin(&self, name: &str) -> Command {
        let mut command = Command::new(self.bins.join(name));
        command.env("RUST_LOG", "warn");
        command
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }
}

/// The number after `name` on a line of a /proc file such as /proc/meminfo.
pub fn field(text: &str, name: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}
