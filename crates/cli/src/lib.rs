//! crawler-cli: the command-line plumbing the five binaries share (`crawler-worker` and the
//! coordinator's four), kept out of `crawler-queue` so that the library has no clap, no
//! terminal and no logging setup of its own.
//!
//! # Layout
//! - [`args`]: the options more than one binary takes, defined once: [`DatabaseArgs`]
//!   (`--database-url`, whose password never prints), [`FilterArgs`] (`--include`,
//!   `--exclude`) and [`ReapArgs`] (`--dead-after`, shared by the workers and `crawler-reap`).
//! - [`bounds`]: the ranges option values must lie in (durations, ids), checked by clap while
//!   it parses.
//! - [`config`]: `crawler.toml` (or `--config FILE`): options from a file, `${VAR}` expanded,
//!   read before clap parses; an unknown key names its line.
//! - [`logging`]: `-q`, `-v`, `--log-format`, colour and progress bars.
//! - [`generate`]: every binary's man page and shell completions (`--generate KIND`).
//! - [`process`]: exit codes, printing results and errors, the shutdown signal, a process's
//!   default id, and a runtime with a connected queue.

pub mod args;
pub mod bounds;
pub mod config;
pub mod generate;
pub mod logging;
pub mod process;

pub use args::{DatabaseArgs, FilterArgs, ReapArgs};
pub use generate::parse_args;
pub use logging::{bars_shown, init_tracing, LogArgs, LogFormat};
pub use process::{
    default_id, eprint_line, hostname, print_line, runtime_error, shutdown_signal, usage_error,
    with_queue, EXIT_FOUND, EXIT_INTERRUPTED, EXIT_PARTIAL, EXIT_RUNTIME, EXIT_USAGE,
};
