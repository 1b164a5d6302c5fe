//! `crawler-reap`: parses the command line and hands off to [`crawler_coordinator::reap`], or
//! for `--pause` and `--resume` to [`crawler_coordinator::control`].

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use crawler_cli::bounds::{parse_id, INTERVAL};
use crawler_cli::{self as cli, parse_args, DatabaseArgs, LogArgs, ReapArgs};
use crawler_coordinator::control::set_paused;
use crawler_coordinator::reap::{
    describe, reap_every, reap_once, ReapConfig, PRUNE_HISTORY_AFTER, RECHECK_AFTER,
};
use crawler_queue::Missing;

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

    /// This process's name in the reaper lease, 1 to 255 characters. Default: HOST:PID.
    #[arg(long, env = "CRAWLER_REAPER_ID", value_parser = parse_id)]
    id: Option<String>,

    /// Pause the whole fleet, then exit (no reaping): every worker finishes the sites it
    /// holds, keeps its leases, and claims nothing more, from its next --heartbeat on, until
    /// --resume. Workers started meanwhile wait too.
    #[arg(long, conflicts_with_all = ["resume", "every", "recheck_after", "prune_history_after"])]
    pause: bool,

    /// Resume a paused fleet, then exit (no reaping): workers claim again from their next
    /// --heartbeat on.
    #[arg(long, conflicts_with_all = ["every", "recheck_after", "prune_history_after"])]
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
    let config = ReapConfig {
        id: args.id.unwrap_or_else(cli::default_id),
        dead_after: args.reap.dead_after,
        recheck_after: args.recheck_after,
        prune_history_after: args.prune_history_after,
    };
    cli::with_queue(
        &args.database.database_url,
        2,
        Missing::Refuse,
        async |queue| match args.every {
            Some(every) => {
                reap_every(queue, &config, every, cli::shutdown_signal()).await;
                ExitCode::SUCCESS
            }
            None => match reap_once(queue, &config).await {
                Ok(reaped) => {
                    cli::print_line(describe(&reaped));
                    ExitCode::SUCCESS
                }
                Err(error) => cli::runtime_error(&error),
            },
        },
    )
}

/// `--pause` (true) or `--resume` (false), if either is given.
fn switch(args: &Args) -> Option<bool> {
    (args.pause || args.resume).then_some(args.pause)
}
