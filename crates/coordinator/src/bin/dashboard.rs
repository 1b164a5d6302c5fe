//! `crawler-dashboard`: parses the command line, binds the address and hands off to
//! [`crawler_coordinator::dashboard`].

use std::process::ExitCode;

use clap::Parser;
use crawler_cli::{self as cli, parse_args, DatabaseArgs, LogArgs};
use crawler_coordinator::dashboard::{serve, Options};
use crawler_queue::Missing;

/// A live web page of the crawl: progress over time, totals, workers, hosts in backoff, the
/// latest dead sites. Reads the database only. With a token, answers only whoever shows it
/// (Authorization: Bearer TOKEN, or the cookie of its login form); without one, refuses to
/// listen beyond loopback unless told --no-auth. Answers only to its own address and the
/// names of --allowed-host.
#[derive(Debug, Parser)]
#[command(name = "crawler-dashboard", version, long_about = None, args_override_self = true)]
struct Args {
    #[command(flatten)]
    database: DatabaseArgs,

    /// -q, -v, --log-format.
    #[command(flatten)]
    log: LogArgs,

    #[command(flatten)]
    dashboard: Options,
}

fn main() -> ExitCode {
    let args = match parse_args::<Args>() {
        Ok(args) => args,
        Err(code) => return code,
    };
    cli::init_tracing(&args.log);
    let settings = match args.dashboard.settings() {
        Ok(settings) => settings,
        Err(error) => return cli::usage_error(&crawler_queue::error_chain(&error)),
    };
    let listen = args.dashboard.listen;
    // Bound before connecting: an address in use is named at once.
    let listener = match std::net::TcpListener::bind(listen)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
    {
        Ok(listener) => listener,
        Err(error) => {
            cli::eprint_line(format_args!("error: cannot listen on {listen}: {error}"));
            return ExitCode::from(cli::EXIT_RUNTIME);
        }
    };
    let url = &args.database.database_url;
    cli::with_queue(url, 4, Missing::Refuse, async |queue| {
        let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
        let addr = listener.local_addr().map_or(listen, |a| a);
        let door = match settings.access.is_open() {
            true => "open to all",
            false => "token required",
        };
        tracing::info!(database = %url, "dashboard on http://{addr}/ ({door})");
        serve(queue.clone(), listener, settings, cli::shutdown_signal()).await;
        ExitCode::SUCCESS
    })
}
