//! `crawler-report`: parses the command line and hands off to [`crawler_coordinator::report`].

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use crawler_cli::{self as cli, parse_args, DatabaseArgs, LogArgs};
use crawler_coordinator::report::{
    parse_host, parse_since, write_addresses, write_by_page, write_change_summary, write_hosts,
    write_sites, write_summary, FailOn, Format, Output, Since,
};
use crawler_coordinator::Error;
use crawler_queue::{HostFilter, Missing, Only, Reports, Scope, Verdict};

/// Lists checked sites by verdict, or hosts, or summarizes the crawl (what it prints with no
/// filter). With --fail-on, exits 4 when it finds such a site.
#[derive(Debug, Parser)]
#[command(name = "crawler-report", version, long_about = None, args_override_self = true)]
struct Args {
    #[command(flatten)]
    database: DatabaseArgs,

    /// -q, -v, --log-format.
    #[command(flatten)]
    log: LogArgs,

    /// Sites that are gone: 404, 410 and other 4xx.
    #[arg(long)]
    dead: bool,
    /// With --dead: only the dead sites that crawler-worker --confirm's policy confirmed (N
    /// dead results in a row over SPAN).
    #[arg(long, requires = "dead", conflicts_with_all = ["alive", "blocked", "unreachable", "errors", "excluded", "all", "by_page"])]
    confirmed: bool,
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
    /// Sites not checked: crawler-worker's --include/--exclude leave them out.
    #[arg(long)]
    excluded: bool,
    /// Every checked site.
    #[arg(long)]
    all: bool,
    /// Links to a section (`page#section`) that their page, alive, does not have: the field
    /// `fragment` is `missing`. Listed after the verdicts asked for (with --alive or --all they
    /// are among the alive sites already).
    #[arg(long, conflicts_with_all = ["confirmed", "by_page"])]
    missing_fragments: bool,
    /// Links that answer, alive, through a permanent redirect (301, 308) to another page, with
    /// `moved_to`, the URL to write instead; not a redirect that only adds or removes a trailing
    /// slash, goes from http to https, or changes the host's case, nor a temporary one. In the
    /// order they moved; with --changed-since, those that moved since. Listed after the
    /// verdicts asked for (with --alive or --all they are among the alive sites already).
    #[arg(long, conflicts_with_all = ["confirmed", "by_page"])]
    moved: bool,

    /// Only sites on this host (normalized as the seed does: lower case, punycode); with a
    /// port, only those on that port (a URL without one is on 80 for http, 443 for https).
    /// With --hosts, only this host, given without a port.
    #[arg(long, value_name = "HOST[:PORT]", value_parser = parse_host)]
    host: Option<HostFilter>,

    /// Only the sites whose verdict changed at WHEN or after, with the verdict each had before
    /// (none for a new link's first verdict) and when it changed: an RFC 3339 time
    /// (2026-12-04T10:00:00Z), a date (its midnight, UTC) or a duration before now on the
    /// database's clock (24h, 7d). With the verdict filters: --dead the newly dead, --alive the
    /// recovered, --all every change; --fail-on then counts only these. With --summary, or
    /// alone: the changes counted by previous and new verdict.
    #[arg(long, value_name = "WHEN", value_parser = parse_since, conflicts_with_all = ["hosts", "by_page"])]
    changed_since: Option<Since>,

    /// Per host, in host order: its sites, how many per verdict, how many pending or claimed,
    /// the worker holding it, its backoff and its last 429 or 503. Not with the verdict
    /// filters or --summary.
    #[arg(long, conflicts_with_all = ["dead", "alive", "blocked", "unreachable", "errors", "excluded", "all", "missing_fragments", "moved", "summary"])]
    hosts: bool,

    /// Per server address held by the live workers (--ip-concurrency, --ip-rate): how many
    /// workers share its budget, the requests waiting for it and on the wire to it (as each
    /// worker last wrote them, every 2 s), and how many host names were asked at it; those
    /// with the most waiting first, the addresses that bound the drain (of a worker alone in
    /// the fleet, only those that requests wait for).
    #[arg(long, conflicts_with_all = ["dead", "alive", "blocked", "unreachable", "errors", "excluded", "all", "missing_fragments", "moved", "summary", "hosts", "host", "by_page", "changed_since"])]
    addresses: bool,

    /// With --dead: the dead links grouped by the page (or file, each link with its line and
    /// column) that carries them, for links found by --follow, --sitemap or --links-in; in csv a
    /// row per page and link.
    #[arg(long, requires = "dead", conflicts_with_all = ["alive", "blocked", "unreachable", "errors", "excluded", "all", "summary", "hosts", "host"])]
    by_page: bool,

    /// Output format. The summary is one row too: in csv its counts, in json and ndjson an
    /// object with the workers and the hosts with most dead sites as well; in markdown a short
    /// list. junit is for lists of sites (a test case each, failing unless alive or excluded,
    /// skipped when excluded).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,

    /// Counts per verdict and state, live workers and their rates, hosts with most dead sites.
    #[arg(long)]
    summary: bool,

    /// Exit 4 when any site (of --host, if given; changed since --changed-since, if given) is
    /// dead, or not alive (dead, blocked, unreachable or error), or confirmed dead
    /// (crawler-worker --confirm), or is a link to a section its page lacks (missing-fragment),
    /// or has moved (moved, as --moved lists them), whatever the report lists; after writing the report. Several, comma-separated or
    /// repeated: any of them fails. Sites not checked yet, and excluded ones, count for none.
    #[arg(long, value_enum, value_name = "WHAT", value_delimiter = ',')]
    fail_on: Vec<FailOn>,

    /// Write the report to FILE instead of stdout: under a temporary name beside it, renamed
    /// to FILE once complete, so FILE is never half written (a failed report leaves it as it
    /// was).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

impl Args {
    fn verdicts(&self) -> Vec<Verdict> {
        let wanted = [
            self.alive,
            self.dead,
            self.blocked,
            self.unreachable,
            self.errors,
            self.excluded,
        ];
        Verdict::ALL
            .into_iter()
            .zip(wanted)
            .filter(|(_, w)| *w || self.all)
            .map(|(v, _)| v)
            .collect()
    }

    /// The report's passes: each verdict asked (only the confirmed dead with --confirmed),
    /// then the missing fragments and the moved links, unless the alive sites hold them
    /// already.
    fn passes(&self) -> Vec<(Verdict, Only)> {
        let mut passes: Vec<(Verdict, Only)> = self
            .verdicts()
            .into_iter()
            .map(|v| match (v, self.confirmed) {
                (Verdict::Dead, true) => (v, Only::Confirmed),
                _ => (v, Only::All),
            })
            .collect();
        let alive = passes.contains(&(Verdict::Alive, Only::All));
        if self.missing_fragments && !alive {
            passes.push((Verdict::Alive, Only::MissingFragments));
        }
        if self.moved && !alive {
            passes.push((Verdict::Alive, Only::Moved));
        }
        passes
    }

    /// What clap does not check: two reports in one machine-readable output, a port with
    /// --hosts (a host's partition, owner and backoff are the same on every port).
    fn check(&self) -> Result<(), &'static str> {
        let two_reports = self.summary && !self.passes().is_empty();
        if two_reports && !matches!(self.format, Format::Text | Format::Markdown) {
            return Err(
                "--summary with a verdict filter makes two reports, which one csv, json, \
                        ndjson or junit output cannot hold: ask for them in two runs",
            );
        }
        let lists_sites = !self.passes().is_empty() && !self.by_page && !self.hosts;
        if self.format == Format::Junit && !lists_sites {
            return Err(
                "--format junit lists sites, a test case each: ask for them by verdict \
                        (--dead, --all, …), not --hosts, --by-page or the summary",
            );
        }
        if matches!(self.format, Format::Github | Format::Sarif) && !lists_sites {
            return Err(
                "--format github and sarif annotate failing links: ask for them by verdict \
                        (--dead, --all, …), not --hosts, --by-page or the summary",
            );
        }
        if self.hosts && self.host.as_ref().is_some_and(|h| h.port().is_some()) {
            return Err("--host with --hosts names a whole host: give it without a port");
        }
        Ok(())
    }
}

fn main() -> ExitCode {
    let args = match parse_args::<Args>() {
        Ok(args) => args,
        Err(code) => return code,
    };
    cli::init_tracing(&args.log);
    if let Err(message) = args.check() {
        return cli::usage_error(message);
    }
    let mut out = match Output::open(args.output.as_deref()) {
        Ok(out) => out,
        Err(error) => return cli::runtime_error(&error),
    };
    cli::with_queue(
        &args.database.database_url,
        2,
        Missing::Refuse,
        async |queue| {
            let reports = queue.reports();
            let since = match args.changed_since {
                Some(since) => match reports.now().await {
                    Ok(now) => Some(since.millis(now)),
                    Err(error) => return cli::runtime_error(&error),
                },
                None => None,
            };
            let scope = Scope {
                only: Only::All,
                host: args.host.as_ref(),
                changed_since: since,
            };
            let written = match report(&args, queue, reports, scope, &mut out).await {
                Ok(()) => out.finish(),
                Err(error) => Err(error),
            };
            match written {
                Ok(()) => exit_code(&args, reports, scope).await,
                // The reader went away (`| head`): what it read stands, and so does --fail-on.
                Err(error) if error.is_broken_pipe() => exit_code(&args, reports, scope).await,
                Err(error) => cli::runtime_error(&error),
            }
        },
    )
}

/// Writes what `args` ask for: the hosts, or the sites (of `scope`) and the summary.
async fn report(
    args: &Args,
    queue: &crawler_queue::Queue,
    reports: Reports<'_>,
    scope: Scope<'_>,
    out: &mut impl Write,
) -> Result<(), Error> {
    let host = scope.host;
    if args.hosts {
        let host = host.map(HostFilter::host);
        return write_hosts(reports, queue.addresses(), host, args.format, out)
            .await
            .map(drop);
    }
    if args.addresses {
        // Live: a heartbeat within the fleet's default --dead-after.
        let live = std::time::Duration::from_secs(60);
        return write_addresses(queue.addresses(), live, args.format, out)
            .await
            .map(drop);
    }
    if args.by_page {
        return write_by_page(reports, args.format, out).await.map(drop);
    }
    let passes = args.passes();
    if !passes.is_empty() {
        write_sites(reports, &passes, scope, args.format, &args.fail_on, out).await?;
    }
    if args.summary || passes.is_empty() {
        match scope.changed_since {
            Some(since) => write_change_summary(reports, since, host, args.format, out)
                .await
                .map(drop)?,
            None => write_summary(reports, args.format, out).await?,
        }
    }
    Ok(())
}

/// 4 when a site in the report's scope is what one of `--fail-on` names, 0 otherwise.
async fn exit_code(args: &Args, reports: Reports<'_>, scope: Scope<'_>) -> ExitCode {
    for fail_on in &args.fail_on {
        let scope = Scope {
            only: fail_on.only(),
            ..scope
        };
        match reports.any_checked(fail_on.verdicts(), scope).await {
            Ok(true) => return ExitCode::from(cli::EXIT_FOUND),
            Ok(false) => {}
            Err(error) => return cli::runtime_error(&error),
        }
    }
    ExitCode::SUCCESS
}
