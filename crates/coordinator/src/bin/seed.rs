//! `crawler-seed`: parses the command line and hands off to [`crawler_coordinator::seed`].

use std::process::ExitCode;

use clap::Parser;
use crawler_queue::{cli, DatabaseArgs, Db, Queue, QueueConfig};

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
    let runtime = tokio::runtime::Runtime::new().expect("start the tokio runtime");
    runtime.block_on(async {
        let db = match Db::connect(&args.database.database_url, 4).await {
            Ok(db) => db,
            Err(error) => return cli::runtime_error(&error),
        };
        let queue = Queue::new(db, QueueConfig::default());
        let result = crawler_coordinator::seed::seed(&queue, &files, args.recheck).await;
        queue.db().close().await;
        match result {
            Ok(summary) => {
                println!("{summary}");
                ExitCode::SUCCESS
            }
            Err(error) => cli::runtime_error(&error),
        }
    })
}
