//! What every binary does at its edges: exit codes, printing results and errors, the shutdown
//! signal, its default id, and (for the coordinator's) a runtime with a connected queue.
//!
//! Exit codes: 0 success, 1 a runtime error (database unreachable, unreadable input),
//! 2 a usage error (bad option or value, a database URL that cannot work), 3 part of the input
//! could not be read (the rest was done), 4 the report found what `--fail-on` names, 130 a
//! second SIGINT/SIGTERM cut the shutdown short.
//!
//! Nothing here panics on a closed stdout or stderr (`| head -1`): what cannot be written is
//! dropped, and the work goes on.

use std::fmt::Display;
use std::io::Write;
use std::process::ExitCode;

use crawler_queue::{error_chain, DatabaseUrl, Db, Missing, Queue, QueueConfig};

/// A runtime error: the database is unreachable, no input could be read.
pub const EXIT_RUNTIME: u8 = 1;
/// A usage error: an unknown option, a bad value, a database URL that cannot work (clap uses
/// 2 as well).
pub const EXIT_USAGE: u8 = 2;
/// Part of the input could not be read (a missing file, a read error part-way); the rest
/// was done, and the summary names what was not.
pub const EXIT_PARTIAL: u8 = 3;
/// The report found sites with a verdict `--fail-on` names (the links checked, the tool
/// worked). lychee says this with 2, which is clap's usage error here; 3 is the seed's
/// partial read, so a script can tell all three apart.
pub const EXIT_FOUND: u8 = 4;
/// A second signal arrived during the graceful shutdown.
pub const EXIT_INTERRUPTED: u8 = 130;

/// HOST:PID, which names the machine and the process an operator would look for.
pub fn default_id() -> String {
    format!("{}:{}", hostname(), std::process::id())
}

/// This machine's name.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// Prints a line of results on stdout; a closed stdout loses the line, never the work.
pub fn print_line(line: impl Display) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// Prints a line on stderr; a closed stderr loses the line, never the work.
pub fn eprint_line(line: impl Display) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Runs `body` on a tokio runtime with the queue at `url` (a pool of `connections`), then
/// closes the pool; a URL that cannot work is a usage error, an unreachable database (or, as
/// `missing` says, a SQLite file that is not there) a runtime error.
pub fn with_queue(
    url: &DatabaseUrl,
    connections: u32,
    missing: Missing,
    body: impl AsyncFnOnce(&Queue) -> ExitCode,
) -> ExitCode {
    if let Err(bad) = url.dialect() {
        return usage_error(&bad);
    }
    let runtime = tokio::runtime::Runtime::new().expect("start the tokio runtime");
    runtime.block_on(async {
        let queue = match Db::open(url, connections, missing).await {
            Ok(db) => Queue::new(db, QueueConfig::default()),
            Err(error) => return runtime_error(&error),
        };
        let code = body(&queue).await;
        queue.db().close().await;
        code
    })
}

/// Prints `error: …` with every cause, and returns the runtime exit code.
pub fn runtime_error(error: &dyn std::error::Error) -> ExitCode {
    eprint_line(format_args!("error: {}", error_chain(error)));
    ExitCode::from(EXIT_RUNTIME)
}

/// Prints `error: …` for a bad option, and returns the usage exit code.
pub fn usage_error(message: &(impl Display + ?Sized)) -> ExitCode {
    eprint_line(format_args!("error: {message}"));
    ExitCode::from(EXIT_USAGE)
}

/// Completes at the first SIGINT or SIGTERM; a second one exits the process at once (exit
/// 130), leaving what it held to the leases, and the terminal clean: the progress bars are
/// cleared first, and never drawn again.
pub async fn shutdown_signal() {
    wait_for_signal().await;
    tokio::spawn(async {
        wait_for_signal().await;
        tracing_indicatif::suspend_tracing_indicatif(|| {
            eprint_line("second signal: exiting at once");
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        })
    });
}

async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("install the SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
