//! `crawler-report`: parses the command line and hands off to [`crawler_coordinator::report`].

use std::io::{stdout, BufWriter, Write};
use std::process::ExitCode;

use clap::Parser;
use crawler_coordinator::report::{write_hosts, write_sites, write_summary, Format};
use crawler_coordinator::Error;
use crawler_queue::{cli, DatabaseArgs, LogArgs, Queue, Verdict};

/// Lists checked sites by verdict, or hosts, or summarizes the crawl. With no filter, prints
/// the summary.
#[derive(Debug, Parser)]
#[command(name = "crawler-report", version, about, long_about = None, args_override_self = true)]
struct Args {
    #[command(flatten)]
    database: DatabaseArgs,

    /// -q, -v, --log-format.
    #[command(flatten)]
    log: LogArgs,

    /// Sites that are gone: 404, 410 and other 4xx.
    #[arg(long)]
    dead: bool,
    /// Sites that answered 2xx.
    #[arg(long)]
    alive: bool,
    /// Sites that refuse the crawler: 401, 403, 407, 451, 429, bot walls.
    #[arg(long)]
    blocked: bool,
    /// Sites with no HTTP answer: DNS, refused, reset, timeout, TLS.
    #[arg(long)]
    unreachable: bool,
    /// Sites that answered with an error: 5xx, 408, redirect loops, bad HTTP.
    #[arg(long)]
    errors: bool,
    /// Every checked site.
    #[arg(long)]
    all: bool,

    /// Only sites on this host (as normalized: lower case, punycode, no port); with --hosts,
    /// only this host.
    #[arg(long, value_name = "HOST")]
    host: Option<String>,

    /// Per host, in host order: its sites, how many per verdict, how many pending or claimed,
    /// the worker holding it, its backoff and its last 429 or 503. Not with the verdict
    /// filters or --summary.
    #[arg(long, conflicts_with_all = ["dead", "alive", "blocked", "unreachable", "errors", "all", "summary"])]
    hosts: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,

    /// Counts per verdict and state, live workers and their rates, hosts with most dead sites.
    #[arg(long)]
    summary: bool,
}

impl Args {
    fn verdicts(&self) -> Vec<Verdict> {
        let wanted = [
            self.alive,
            self.dead,
            self.blocked,
            self.unreachable,
            self.errors,
        ];
        Verdict::ALL
            .into_iter()
            .zip(wanted)
            .filter(|(_, w)| *w || self.all)
            .map(|(v, _)| v)
            .collect()
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    cli::init_tracing(&args.log);
    cli::with_queue(&args.database.database_url, 2, async |queue| {
        let mut out = BufWriter::new(stdout().lock());
        match report(&args, queue, &mut out).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) if error.is_broken_pipe() => ExitCode::SUCCESS,
            Err(error) => cli::runtime_error(&error),
        }
    })
}

/// Writes what `args` ask for: the hosts, or the sites and the summary.
async fn report(args: &Args, queue: &Queue, out: &mut impl Write) -> Result<(), Error> {
    let host = args.host.as_deref();
    if args.hosts {
        return write_hosts(queue, host, args.format, out).await.map(drop);
    }
    let verdicts = args.verdicts();
    if !verdicts.is_empty() {
        write_sites(queue, &verdicts, host, args.format, out).await?;
    }
    if args.summary || verdicts.is_empty() {
        write_summary(queue, out).await?;
    }
    Ok(())
}
