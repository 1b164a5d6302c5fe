//! `crawler-worker`: parses the command line and hands off to [`crawler_worker::run`].

use std::process::ExitCode;

use crawler_cli::{self as cli, parse_args};
use crawler_worker::config::Args;

/// mimalloc rather than glibc's malloc: on the system benchmark the worker's memory levels off
/// (1M URLs within 7% of 100k, against 15% with glibc, whose heap kept growing however its
/// arenas and thresholds were set), and the worker takes a fifth less CPU. Built without
/// transparent huge pages (the workspace's `no_thp`), which otherwise held the worker's memory
/// in 2 MiB pages it barely used.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = match parse_args::<Args>() {
        Ok(args) => args,
        Err(code) => return code,
    };
    cli::init_tracing(&args.log);
    let (url, config) = match args.into_config() {
        Ok(parsed) => parsed,
        Err(message) => return cli::usage_error(&message),
    };
    if let Err(bad) = url.dialect() {
        return cli::usage_error(&bad);
    }
    let runtime = tokio::runtime::Runtime::new().expect("start the tokio runtime");
    match runtime.block_on(crawler_worker::run(&url, config, cli::shutdown_signal())) {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => cli::runtime_error(&error),
    }
}
