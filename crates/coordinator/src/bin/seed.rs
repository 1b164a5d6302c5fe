//! `crawler-seed`: parses the command line and hands off to [`crawler_coordinator::seed`].

use std::process::ExitCode;

use clap::Parser;
use crawler_cli::{self as cli, parse_args, DatabaseArgs, FilterArgs, LogArgs};
use crawler_coordinator::redact::strip_userinfo;
use crawler_coordinator::seed::crawl::CrawlArgs;
use crawler_coordinator::seed::{is_database_url, seed_crawl, seed_with, SeedSummary};
use crawler_queue::filter::UrlFilter;
use crawler_queue::Missing;

/// Loads URLs, one a line, into the queue. Bad lines are reported on stderr as FILE:LINE:
/// reason and skipped; duplicates (after normalization) are counted, not added. A file that
/// cannot be read is named and the others are seeded (exit 3).
#[derive(Debug, Parser)]
#[command(name = "crawler-seed", version, long_about = None, args_override_self = true)]
struct Args {
    #[command(flatten)]
    database: DatabaseArgs,

    /// -q, -v, --log-format.
    #[command(flatten)]
    log: LogArgs,

    /// Files of URLs; `-` (or none, unless --follow, --sitemap or --links-in is given) reads
    /// stdin.
    #[arg(value_name = "FILE")]
    files: Vec<String>,

    /// Make URLs already in the queue due again (their last verdict stays until rechecked).
    #[arg(long)]
    recheck: bool,

    /// --include/--exclude: URLs left out are not seeded, and counted as excluded.
    #[command(flatten)]
    filter: FilterArgs,

    /// --follow, --sitemap, --links-in and their options.
    #[command(flatten)]
    crawl: CrawlArgs,
}

fn main() -> ExitCode {
    let args = match parse_args::<Args>() {
        Ok(args) => args,
        Err(code) => return code,
    };
    cli::init_tracing(&args.log);
    let files = if !args.files.is_empty() || args.crawl.any() {
        args.files
    } else {
        vec!["-".to_owned()]
    };
    if let Some(url) = files.iter().find(|file| is_database_url(file)) {
        let url = strip_userinfo(url);
        return cli::usage_error(&format!(
            "{url} is a database url, not a file of urls: give it with --database-url"
        ));
    }
    let filter = UrlFilter::from(args.filter);
    cli::with_queue(
        &args.database.database_url,
        4,
        Missing::Create,
        async |queue| match seed_all(queue, &files, args.recheck, &filter, &args.crawl).await {
            Ok(summary) => {
                cli::print_line(&summary);
                exit_code(&summary)
            }
            Err(error) => cli::runtime_error(&error),
        },
    )
}

/// The lists, then the crawl, sitemaps and files.
async fn seed_all(
    queue: &crawler_queue::Queue,
    files: &[String],
    recheck: bool,
    filter: &UrlFilter,
    crawl: &CrawlArgs,
) -> Result<SeedSummary, crawler_coordinator::Error> {
    let fragments = crawl.fragments_in_lists();
    let mut summary = seed_with(queue, files, recheck, filter, fragments).await?;
    seed_crawl(queue, crawl, filter, &mut summary).await?;
    Ok(summary)
}

/// 0 when every source was read to its end, 3 when some was not, 1 when none could be read.
fn exit_code(summary: &SeedSummary) -> ExitCode {
    match (summary.unread.is_empty(), summary.read_anything()) {
        (true, _) => ExitCode::SUCCESS,
        (false, true) => ExitCode::from(cli::EXIT_PARTIAL),
        (false, false) => ExitCode::from(cli::EXIT_RUNTIME),
    }
}
