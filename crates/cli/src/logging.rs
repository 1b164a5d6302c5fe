//! Logging, shared by the five binaries: `-q`/`-v` around the default `info` (`RUST_LOG`, when
//! set, decides instead), `--log-format text|json`, colour only on a terminal and never with
//! `NO_COLOR`, and progress bars only on a terminal, drawn so that log lines never tear them.
//!
//! Everything goes to stderr; results go to stdout. A log line that cannot be written is
//! dropped (by default tracing reports that with `eprintln!`, which panics when stderr is
//! closed).

use std::ffi::OsStr;
use std::io::IsTerminal;

use tracing_indicatif::filter::IndicatifFilter;
use tracing_indicatif::IndicatifLayer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter, Layer};

/// The logging options, flattened into every binary's arguments.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct LogArgs {
    /// Log less: -q only warnings and errors, and no progress bar; -qq only errors. RUST_LOG,
    /// when set, chooses the lines instead.
    #[arg(short, long, action = clap::ArgAction::Count, conflicts_with = "verbose")]
    pub quiet: u8,

    /// Log more: -v the crawler's debug lines, -vv every library's too, -vvv trace. RUST_LOG,
    /// when set, chooses the lines instead.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// How log lines look on stderr: text (coloured on a terminal, unless NO_COLOR is set) or
    /// json (one object a line, for log collectors; no progress bar).
    #[arg(
        long,
        env = "CRAWLER_LOG_FORMAT",
        value_enum,
        default_value_t,
        value_name = "FORMAT"
    )]
    pub log_format: LogFormat,
}

/// `--log-format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// `2026-11-23T15:55:36.059Z  INFO crawler_worker::run: worker started id=…`.
    #[default]
    Text,
    /// `{"timestamp":"…","level":"INFO","message":"worker started","id":"…","target":"…"}`.
    Json,
}

impl LogArgs {
    /// The filter when `RUST_LOG` is not set: `info`, one step quieter per `-q`, louder per
    /// `-v`. The first `-v` is for the crawler's own crates (every target starts with
    /// `crawler`): the libraries' debug lines (each SQL statement) would drown them.
    pub fn directives(&self) -> &'static str {
        match (self.quiet, self.verbose) {
            (0, 0) => "info",
            (1, _) => "warn",
            (_, 0) => "error",
            (_, 1) => "info,crawler=debug",
            (_, 2) => "debug",
            _ => "trace",
        }
    }
}

/// Starts logging to stderr as `args` ask. Progress bars are drawn only for text on a
/// terminal, without `-q`: [`bars_shown`] tells the binaries whether to draw or to log.
pub fn init_tracing(args: &LogArgs) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(args.directives()));
    let terminal = std::io::stderr().is_terminal();
    let registry = tracing_subscriber::registry();
    let text = fmt::layer()
        .with_ansi(colour(terminal, std::env::var_os("NO_COLOR").as_deref()))
        .log_internal_errors(false);
    match args.log_format {
        LogFormat::Json => {
            let json = fmt::layer()
                .json()
                .flatten_event(true)
                .with_writer(std::io::stderr)
                .log_internal_errors(false);
            registry.with(json.with_filter(filter)).init();
        }
        LogFormat::Text if terminal && args.quiet == 0 => {
            let bars = IndicatifLayer::new();
            let text = text.with_writer(bars.get_stderr_writer());
            registry
                .with(text.with_filter(filter))
                .with(bars.with_filter(IndicatifFilter::new(false)))
                .init();
        }
        LogFormat::Text => {
            let text = text.with_writer(std::io::stderr);
            registry.with(text.with_filter(filter)).init();
        }
    }
}

/// Whether progress bars are drawn: the spans that ask for one (with an `indicatif.pb_show`
/// field) get it. When not, a binary shows its progress as log lines.
pub fn bars_shown() -> bool {
    tracing_indicatif::writer::get_indicatif_stderr_writer().is_some()
}

/// Colour on a terminal, unless `NO_COLOR` is set to anything but the empty string
/// (<https://no-color.org>); never into a pipe or a file.
fn colour(terminal: bool, no_color: Option<&OsStr>) -> bool {
    terminal && no_color.is_none_or(OsStr::is_empty)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Args {
        #[command(flatten)]
        log: LogArgs,
    }

    fn directives(args: &[&str]) -> &'static str {
        let args = Args::try_parse_from(std::iter::once("bin").chain(args.iter().copied()));
        args.expect("valid flags").log.directives()
    }

    #[test]
    fn each_q_is_quieter_and_each_v_louder_than_info() {
        assert_eq!(directives(&[]), "info");
        assert_eq!(directives(&["-q"]), "warn");
        assert_eq!(directives(&["-qq"]), "error");
        assert_eq!(directives(&["--quiet", "--quiet", "-q"]), "error");
        assert_eq!(directives(&["-v"]), "info,crawler=debug");
        assert_eq!(directives(&["-vv"]), "debug");
        assert_eq!(directives(&["-v", "--verbose", "-v"]), "trace");
    }

    #[test]
    fn quiet_and_verbose_together_are_a_usage_error() {
        let error = Args::try_parse_from(["bin", "-q", "-v"]).unwrap_err();
        assert_eq!(error.kind(), clap::error::ErrorKind::ArgumentConflict);
    }

    #[test]
    fn colour_needs_a_terminal_and_no_no_color() {
        assert!(colour(true, None));
        assert!(colour(true, Some(OsStr::new(""))));
        assert!(!colour(true, Some(OsStr::new("1"))));
        assert!(!colour(false, None));
    }

    #[test]
    fn the_log_format_is_text_unless_json_is_asked_for() {
        let parse = |args: &[&str]| {
            let args = Args::try_parse_from(std::iter::once("bin").chain(args.iter().copied()));
            args.expect("valid flags").log.log_format
        };
        assert_eq!(parse(&[]), LogFormat::Text);
        assert_eq!(parse(&["--log-format", "json"]), LogFormat::Json);
        assert!(Args::try_parse_from(["bin", "--log-format", "xml"]).is_err());
    }
}
