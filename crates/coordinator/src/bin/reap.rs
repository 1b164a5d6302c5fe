//! `crawler-reap`: parses the command line and hands off to [`crawler_coordinator::reap`] (and
//! with `--notify` to [`crawler_coordinator::notify`]), or for `--pause` and `--resume` to
//! [`crawler_coordinator::control`].

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use crawler_cli::bounds::DurationRange;
use crawler_cli::bounds::{parse_id, INTERVAL};
use crawler_cli::{self as cli, parse_args, DatabaseArgs, LogArgs, ReapArgs};
use crawler_coordinator::control::set_paused;
use crawler_coordinator::notify::{self, NotifyConfig, Receiver};
use crawler_coordinator::reap::{
    describe, reap_every, reap_once, ReapConfig, PRUNE_HISTORY_AFTER, RECHECK_AFTER,
};
use crawler_queue::{Missing, Queue, Verdict};
use tokio_util::sync::CancellationToken;

/// `--notify-settle`'s range: none (tests, a single SQLite process) to an hour.
const NOTIFY_SETTLE: DurationRange = DurationRange::new(Duration::ZERO, Duration::from_secs(3600));

/// `--notify-timeout`'s range.
const NOTIFY_TIMEOUT: DurationRange =
    DurationRange::new(Duration::from_millis(100), Duration::from_secs(600));

/// Gives back the sites of expired leases and dead workers, so that others check them. One
/// pass by default; with --every, a pass each interval by whichever copy holds the reaper
/// lease, so any number of copies (and the workers, which reap too) is safe.
#[derive(Debug, Parser)]
#[command(name = "crawler-reap", version, long_about = None, args_override_self = true)]
struct Args {
    #[command(flatten)]
    database: DatabaseArgs,

    /// -q, -v, --log-format.
    #[command(flatten)]
    log: LogArgs,

    /// Keep going, a pass every DURATION (e.g. 30s), until SIGINT/SIGTERM. Between 100ms and
    /// 30d. Not CRAWLER_REAP_EVERY, the workers' reaping interval: a fleet's environment sets
    /// that, and a one-shot reap run there must still stop.
    #[arg(long, env = "CRAWLER_REAPER_EVERY", value_name = "DURATION", value_parser = INTERVAL.parser())]
    every: Option<Duration>,

    /// Also make done sites checked longer ago than DURATION (e.g. 7d) due again. Between 1m
    /// and 3650d.
    #[arg(long, env = "CRAWLER_RECHECK_AFTER", value_name = "DURATION", value_parser = RECHECK_AFTER.parser())]
    recheck_after: Option<Duration>,

    /// Also delete the verdict history's rows (table verdict_changes: one per change of a
    /// site's verdict) older than DURATION (e.g. 90d), keeping each site's latest. Between 1h
    /// and 3650d.
    #[arg(long, env = "CRAWLER_PRUNE_HISTORY_AFTER", value_name = "DURATION", value_parser = PRUNE_HISTORY_AFTER.parser())]
    prune_history_after: Option<Duration>,

    /// --dead-after, as the workers take it.
    #[command(flatten)]
    reap: ReapArgs,

    /// Also POST each change of verdict to URL (a Slack or Mattermost incoming webhook, or
    /// any receiver of JSON), in digests of at most 1,000, at least once: a digest not
    /// acknowledged with a 2xx is sent again, the same id in its Idempotency-Key. With
    /// CRAWLER_NOTIFY_SECRET set, each POST is signed (X-Crawler-Signature: sha256=HMAC of the
    /// body). One process of a fleet sends, under the notifier's lease. Changes from the
    /// notifier's first start on. The URL is a secret: it never prints.
    #[arg(
        long,
        env = "CRAWLER_NOTIFY_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    notify: Option<String>,

    /// With --notify: only changes to these verdicts (comma-separated: alive, dead, blocked,
    /// unreachable, error, excluded). Default: every change.
    #[arg(long, env = "CRAWLER_NOTIFY_ON", value_name = "VERDICTS", value_delimiter = ',', value_parser = parse_verdict, requires = "notify")]
    notify_on: Vec<Verdict>,

    /// With --notify: a change is sent once this has passed since it was written, so that a
    /// write-back that commits after a later one (a lock wait) is never skipped. Between 0s
    /// and 1h.
    #[arg(long, env = "CRAWLER_NOTIFY_SETTLE", value_name = "DURATION", default_value = "1m", value_parser = NOTIFY_SETTLE.parser(), requires = "notify")]
    notify_settle: Duration,

    /// With --notify: the time limit of each POST. Between 100ms and 10m.
    #[arg(long, env = "CRAWLER_NOTIFY_TIMEOUT", value_name = "DURATION", default_value = "30s", value_parser = NOTIFY_TIMEOUT.parser(), requires = "notify")]
    notify_timeout: Duration,

    /// This process's name in the reaper lease, 1 to 255 characters. Default: HOST:PID.
    #[arg(long, env = "CRAWLER_REAPER_ID", value_parser = parse_id)]
    id: Option<String>,

    /// Pause the whole fleet, then exit (no reaping): every worker finishes the sites it
    /// holds, keeps its leases, and claims nothing more, from its next --heartbeat on, until
    /// --resume. Workers started meanwhile wait too.
    #[arg(long, conflicts_with_all = ["resume", "every", "recheck_after", "prune_history_after", "notify"])]
    pause: bool,

    /// Resume a paused fleet, then exit (no reaping): workers claim again from their next
    /// --heartbeat on.
    #[arg(long, conflicts_with_all = ["every", "recheck_after", "prune_history_after", "notify"])]
    resume: bool,
}

fn main() -> ExitCode {
    let args = match parse_args::<Args>() {
        Ok(args) => args,
        Err(code) => return code,
    };
    cli::init_tracing(&args.log);
    if let Some(pause) = switch(&args) {
        return cli::with_queue(
            &args.database.database_url,
            2,
            Missing::Refuse,
            async |queue| match set_paused(queue, pause).await {
                Ok(line) => {
                    cli::print_line(line);
                    ExitCode::SUCCESS
                }
                Err(error) => cli::runtime_error(&error),
            },
        );
    }
    let id = args.id.clone().unwrap_or_else(cli::default_id);
    let notifying = match notify_config(&args, &id) {
        Ok(notifying) => notifying,
        Err(error) => return cli::usage_error(&error.to_string()),
    };
    let config = ReapConfig {
        id,
        dead_after: args.reap.dead_after,
        recheck_after: args.recheck_after,
        prune_history_after: args.prune_history_after,
    };
    cli::with_queue(
        &args.database.database_url,
        3,
        Missing::Refuse,
        async |queue| match args.every {
            Some(every) => {
                run_every(queue, &config, notifying.as_ref(), every).await;
                ExitCode::SUCCESS
            }
            None => run_once(queue, &config, notifying.as_ref()).await,
        },
    )
}

/// The notifier's configuration, when --notify is given; the secret from the environment only
/// (a flag would show in `ps`).
fn notify_config(args: &Args, owner: &str) -> Result<Option<NotifyConfig>, notify::BadUrl> {
    let Some(url) = &args.notify else {
        return Ok(None);
    };
    let secret = std::env::var("CRAWLER_NOTIFY_SECRET").ok();
    let receiver = Receiver::new(url, secret, args.notify_timeout)?;
    let on = match args.notify_on.is_empty() {
        true => Verdict::ALL.to_vec(),
        false => args.notify_on.clone(),
    };
    Ok(Some(NotifyConfig {
        receiver,
        on,
        settle: args.notify_settle,
        timeout: args.notify_timeout,
        owner: owner.to_owned(),
    }))
}

/// A reap pass every `every`, and beside it the notifier's, until SIGINT/SIGTERM: a slow
/// receiver never holds reaping up.
async fn run_every(
    queue: &Queue,
    config: &ReapConfig,
    notifying: Option<&NotifyConfig>,
    every: Duration,
) {
    let stop = CancellationToken::new();
    let signal = stop.clone();
    tokio::spawn(async move {
        cli::shutdown_signal().await;
        signal.cancel();
    });
    let notifying = async {
        if let Some(notifying) = notifying {
            notify::notify_every(queue, notifying, every, stop.clone()).await;
        }
    };
    tokio::join!(
        reap_every(queue, config, every, stop.cancelled()),
        notifying
    );
}

/// One reap pass, then with --notify one notifier pass.
async fn run_once(
    queue: &Queue,
    config: &ReapConfig,
    notifying: Option<&NotifyConfig>,
) -> ExitCode {
    match reap_once(queue, config).await {
        Ok(reaped) => cli::print_line(describe(&reaped)),
        Err(error) => return cli::runtime_error(&error),
    }
    if let Some(notifying) = notifying {
        match notify::notify_once(queue, notifying).await {
            Ok(sent) => cli::print_line(notify::describe(sent)),
            Err(error) => return cli::runtime_error(&error),
        }
    }
    ExitCode::SUCCESS
}

/// A verdict's name, for --notify-on.
fn parse_verdict(text: &str) -> Result<Verdict, String> {
    text.trim()
        .parse()
        .map_err(|e: crawler_queue::verdict::UnknownName| e.to_string())
}

/// `--pause` (true) or `--resume` (false), if either is given.
fn switch(args: &Args) -> Option<bool> {
    (args.pause || args.resume).then_some(args.pause)
}
