//! The options more than one binary takes, each defined once and flattened into the binaries'
//! arguments (`#[command(flatten)]`), so that an option means the same everywhere: the
//! database, which URLs to take, and when a worker is taken for dead.

use std::time::Duration;

use crawler_queue::filter::{Regex, UrlFilter};
use crawler_queue::{DatabaseUrl, DEFAULT_DATABASE_URL};

use crate::bounds::DEAD_AFTER;

/// The `--database-url` option, flattened into every binary's arguments. The URL may hold a
/// password: neither its value from the environment nor its default is shown in `--help`,
/// and [`DatabaseUrl`] prints without it.
#[derive(Clone, Debug, clap::Args)]
pub struct DatabaseArgs {
    /// Where the queue lives: mysql://USER:PASSWORD@HOST:PORT/DATABASE (MySQL 8 or MariaDB
    /// 10.6+) or sqlite://PATH. Default: sqlite://crawler.db in the working directory.
    #[arg(
        long,
        env = "DATABASE_URL",
        hide_env_values = true,
        default_value = DEFAULT_DATABASE_URL,
        hide_default_value = true,
        value_name = "URL"
    )]
    pub database_url: DatabaseUrl,
}

/// `--include` and `--exclude`, for `crawler-seed` and `crawler-worker`: what
/// [`UrlFilter`] matches.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct FilterArgs {
    /// Take only URLs matching one of these regular expressions (repeatable; anywhere in the
    /// normalized URL, anchor with ^ and $). Default: every URL. The seed skips a URL left out
    /// (and counts it); a worker makes no request for it, and gives it the verdict excluded.
    /// In CRAWLER_INCLUDE, one a line.
    #[arg(
        long,
        env = "CRAWLER_INCLUDE",
        value_name = "REGEX",
        value_delimiter = '\n'
    )]
    pub include: Vec<Regex>,

    /// Leave out URLs matching one of these regular expressions (repeatable); wins over
    /// --include. In CRAWLER_EXCLUDE, one a line.
    #[arg(
        long,
        env = "CRAWLER_EXCLUDE",
        value_name = "REGEX",
        value_delimiter = '\n'
    )]
    pub exclude: Vec<Regex>,
}

impl From<FilterArgs> for UrlFilter {
    fn from(args: FilterArgs) -> Self {
        UrlFilter {
            include: args.include,
            exclude: args.exclude,
        }
    }
}

/// When the fleet takes a worker for dead, for `crawler-worker` and `crawler-reap`: both reap
/// (see `Reaping::reap_as_leader`), and read the same variable, because the fleet needs one
/// value.
#[derive(Clone, Debug, clap::Args)]
pub struct ReapArgs {
    /// A worker silent for this long is taken for dead and its claims are given back, even
    /// before their lease expires. Between 200ms and 30d, and at least twice the workers'
    /// --heartbeat. crawler-worker and crawler-reap read the same variable, on purpose: the
    /// fleet needs one value.
    #[arg(long, env = "CRAWLER_DEAD_AFTER", default_value = "1m", value_parser = DEAD_AFTER.parser())]
    pub dead_after: Duration,
}

impl ReapArgs {
    /// Checks `--dead-after` against a worker's `--heartbeat`: a worker one heartbeat late is
    /// alive, and must not lose its claims, so the fleet waits for two.
    pub fn check_heartbeat(&self, heartbeat: Duration) -> Result<(), String> {
        if self.dead_after < heartbeat * 2 {
            return Err(format!(
                "--dead-after ({}) must be at least twice --heartbeat ({}), or live workers \
                 would be taken for dead",
                humantime::format_duration(self.dead_after),
                humantime::format_duration(heartbeat)
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Args {
        #[command(flatten)]
        reap: ReapArgs,
        #[command(flatten)]
        filter: FilterArgs,
    }

    fn parse(args: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("bin").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn dead_after_is_a_minute_unless_given() {
        assert_eq!(parse(&[]).reap.dead_after, Duration::from_secs(60));
        let reap = parse(&["--dead-after", "90s"]).reap;
        assert_eq!(reap.dead_after, Duration::from_secs(90));
    }

    #[test]
    fn dead_after_must_outlast_two_heartbeats() {
        let reap = parse(&["--dead-after", "19s"]).reap;
        let error = reap.check_heartbeat(Duration::from_secs(10)).unwrap_err();
        assert!(error.starts_with("--dead-after (19s) must be at least twice --heartbeat (10s)"));
        let reap = parse(&["--dead-after", "20s"]).reap;
        assert!(reap.check_heartbeat(Duration::from_secs(10)).is_ok());
    }

    #[test]
    fn the_filter_options_become_the_queues_filter() {
        let args = parse(&["--include", "/docs/", "--exclude", "[.]pdf$"]);
        let filter = UrlFilter::from(args.filter);
        assert!(filter.allows("https://a.example/docs/x"));
        assert!(!filter.allows("https://a.example/docs/x.pdf"));
        assert!(!filter.allows("https://a.example/blog"));
    }
}
