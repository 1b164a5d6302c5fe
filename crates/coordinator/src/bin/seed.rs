//! `crawler-seed`: parses the command line and hands off to [`crawler_coordinator::seed`].

use std::process::ExitCode;

use clap::Parser;
use crawler_queue::{cli, DatabaseArgs};

/// Loads URLs, one a line, into the queue. Bad lines are reported on stderr as FILE:LINE:
/// reason and skipped; duplicates (after normalization) are counted, not added.
#[derive(Debug, Parser)]
#[command(name = "crawler-seed", version, about, long_about = None, args_override_self = true)]
struct Args {
    #[command(flatten)]
    database: DatabaseArgs,

    /// Files of URLs; `-` (or none) reads stdin.
    #[arg(value_name = "FILE")]
    files: Vec<String>,

    /// Make URLs already in the queue due again (their last verdict stays until rechecked).
    #[arg(long)]
    recheck: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    cli::init_tracing();
    let files = if args.files.is_empty() {
        vec!["-".to_owned()]
    } else {
        args.files
    };
    cli::with_queue(&args.database.database_url, 4, async |queue| {
        match crawler_coordinator::seed::seed(queue, &files, args.recheck).await {
            Ok(summary) => {
                cli::print_line(summary);
                ExitCode::SUCCESS
            }
            Err(error) => cli::runtime_error(&error),
        }
    })
}
