//! `crawler-dashboard`: parses the command line, binds the address and hands off to
//! [`crawler_coordinator::dashboard`].

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Parser;
use crawler_cli::{self as cli, parse_args, DatabaseArgs, LogArgs};
use crawler_coordinator::dashboard::serve;
use crawler_queue::Missing;

/// A live web page of the crawl: progress over time, totals, workers, hosts in backoff, the
/// latest dead sites. Reads the database only. No authentication: keep it on loopback, or
/// behind a proxy that has some.
#[derive(Debug, Parser)]
#[command(name = "crawler-dashboard", version, long_about = None, args_override_self = true)]
struct Args {
    #[command(flatten)]
    database: DatabaseArgs,

    /// -q, -v, --log-format.
    #[command(flatten)]
    log: LogArgs,

    /// The address to serve on (port 0: any free port, logged).
    #[arg(
        long,
        env = "CRAWLER_DASHBOARD_LISTEN",
        value_name = "ADDR:PORT",
        default_value = "127.0.0.1:8080"
    )]
    listen: SocketAddr,

    /// Show Pause and Resume buttons that pause and resume the whole fleet (as
    /// crawler-reap --pause and --resume do). Without it, the dashboard changes nothing.
    #[arg(long, env = "CRAWLER_DASHBOARD_ALLOW_CONTROL")]
    allow_control: bool,
}

fn main() -> ExitCode {
    let args = match parse_args::<Args>() {
        Ok(args) => args,
        Err(code) => return code,
    };
    cli::init_tracing(&args.log);
    // Bound before connecting: an address in use is named at once.
    let listener = match std::net::TcpListener::bind(args.listen)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
    {
        Ok(listener) => listener,
        Err(error) => {
            cli::eprint_line(format_args!(
                "error: cannot listen on {}: {error}",
                args.listen
            ));
            return ExitCode::from(cli::EXIT_RUNTIME);
        }
    };
    let url = &args.database.database_url;
    cli::with_queue(url, 4, Missing::Refuse, async |queue| {
        let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
        let addr = listener.local_addr().map_or(args.listen, |a| a);
        tracing::info!(database = %url, "dashboard on http://{addr}/");
        serve(
            queue.clone(),
            listener,
            args.allow_control,
            cli::shutdown_signal(),
        )
        .await;
        ExitCode::SUCCESS
    })
}
