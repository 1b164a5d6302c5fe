//! `crawler-worker`: parses the command line and hands off to [`crawler_worker::run`].

use std::process::ExitCode;

use clap::Parser;
use crawler_queue::cli;
use crawler_worker::config::Args;

fn main() -> ExitCode {
    let args = Args::parse();
    cli::init_tracing();
    let (url, config) = match args.into_config() {
        Ok(parsed) => parsed,
        Err(message) => return cli::usage_error(&message),
    };
    let runtime = tokio::runtime::Runtime::new().expect("start the tokio runtime");
    match runtime.block_on(crawler_worker::run(&url, config, cli::shutdown_signal())) {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => cli::runtime_error(&error),
    }
}
