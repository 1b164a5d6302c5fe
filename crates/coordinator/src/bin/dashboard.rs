//! `crawler-dashboard`: parses the command line, binds the address and hands off to
//! [`crawler_coordinator::dashboard`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use crawler_cli::{self as cli, parse_args, DatabaseArgs, LogArgs};
use crawler_coordinator::dashboard::{serve, Access, Settings};
use crawler_queue::Missing;

/// A live web page of the crawl: progress over time, totals, workers, hosts in backoff, the
/// latest dead sites. Reads the database only. With a token, answers only whoever shows it
/// (Authorization: Bearer TOKEN, or the cookie of its login form); without one, refuses to
/// listen beyond loopback unless told --no-auth.
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

    /// The token every page, API call and control must show. Prefer the variable or
    /// --token-file: a command line is visible to every user of the machine. At least 16
    /// characters (openssl rand -hex 24). Default: none.
    #[arg(
        long,
        env = "CRAWLER_DASHBOARD_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN",
        conflicts_with = "token_file"
    )]
    token: Option<Secret>,

    /// A file whose first line is the token (a Docker or systemd secret, say).
    #[arg(long, env = "CRAWLER_DASHBOARD_TOKEN_FILE", value_name = "FILE")]
    token_file: Option<PathBuf>,

    /// Serve without a token on an address beyond loopback: anyone who reaches it sees the
    /// crawl (and, with --allow-control, pauses it). Put an authenticating proxy in front.
    #[arg(long, env = "CRAWLER_DASHBOARD_NO_AUTH", conflicts_with_all = ["token", "token_file"])]
    no_auth: bool,
}

/// A value clap must never print: parsing cannot fail, so no error quotes it.
#[derive(Clone)]
struct Secret(String);

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Secret(s.to_owned()))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

fn main() -> ExitCode {
    let args = match parse_args::<Args>() {
        Ok(args) => args,
        Err(code) => return code,
    };
    cli::init_tracing(&args.log);
    let token = args.token.as_ref().map(|Secret(text)| text.as_str());
    let access =
        match Access::from_options(token, args.token_file.as_deref(), args.listen, args.no_auth) {
            Ok(access) => access,
            Err(error) => return cli::usage_error(&crawler_queue::error_chain(&error)),
        };
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
        let door = if access.is_open() {
            "open to all"
        } else {
            "token required"
        };
        tracing::info!(database = %url, "dashboard on http://{addr}/ ({door})");
        let settings = Settings {
            allow_control: args.allow_control,
            access,
        };
        serve(queue.clone(), listener, settings, cli::shutdown_signal()).await;
        ExitCode::SUCCESS
    })
}
