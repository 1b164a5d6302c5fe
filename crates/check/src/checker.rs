//! The [`Checker`]: a URL in, a [`Finding`] out, retries included. It is an [`Asker`] (the
//! client, the host book and the limits, `asker.rs`) and a [`Soft404`] (`soft404/`), shared
//! by every task of a worker, so the politeness limits, the connection pool and the DNS cache
//! are shared too.
//!
//! [`Checker::check`] never fails: every URL ends in a finding, a dead link being data rather
//! than an error. A check is a loop of attempts (`redirect.rs`), each followed by the decision
//! to ask again or stop (`retry.rs`); the last attempt becomes the finding (`classify.rs`).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crawler_verdict::{Finding, MAX_DELAY};
use url::Url;

use crate::address::{any_address, is_public};
use crate::ask::Ask;
use crate::asker::Asker;
use crate::config::{validate, CheckConfig};
use crate::cut::Cut;
use crate::error::CheckError;
use crate::hosts::HostBook;
use crate::page::{body_of, Reading};
use crate::redirect::attempt;
use crate::reply::{Attempt, Failure};
use crate::retry::{next_step, Step};
use crate::soft404::{ProbeStore, Soft404};

/// Checks URLs; cheap to clone, and meant to be shared by every task of a worker.
#[derive(Clone)]
pub struct Checker {
    /// What asks the servers, and all it knows of them (`asker.rs`).
    asker: Arc<Asker>,
    /// Soft-404 detection (`--soft-404`), asking through `asker`.
    soft404: Arc<Soft404>,
    /// The cut-off point of the one check this clone makes (`cut.rs`), if something may cut
    /// it off: its requests mark it ([`Checker::cut_by`]).
    cut: Option<Cut>,
}

impl Checker {
    pub fn new(config: CheckConfig) -> Result<Checker, CheckError> {
        let allow = if config.public_only {
            is_public
        } else {
            any_address
        };
        Self::with_address_policy(config, allow)
    }

    /// Like [`Checker::new`], with `allow` in place of [`is_public`] when `public_only` is on.
    /// Tests use it: every server they can start is on loopback, which is never public.
    #[doc(hidden)]
    pub fn with_address_policy(
        config: CheckConfig,
        allow: fn(IpAddr) -> bool,
    ) -> Result<Checker, CheckError> {
        validate(&config)?;
        let allow = if config.public_only {
            allow
        } else {
            any_address
        };
        let soft404 = Soft404 {
            on: config.soft_404,
            ..Soft404::default()
        };
        let asker = Asker::new(config, allow).map_err(CheckError::Client)?;
        Ok(Checker {
            asker: Arc::new(asker),
            soft404: Arc::new(soft404),
            cut: None,
        })
    }

    /// This checker, for a check that `cut` tells [`unless_cut`](crate::unless_cut) about: its
    /// every request marks `cut` first, so that the check is cut off only before its first.
    pub fn cut_by(&self, cut: &Cut) -> Checker {
        Checker {
            cut: Some(cut.clone()),
            ..self.clone()
        }
    }

    /// Everything this worker knows of each host, and what it decided of them for the fleet:
    /// what the worker's stages read and write (`hosts/`).
    pub fn book(&self) -> &HostBook {
        self.asker.book()
    }

    /// Every server address this worker asks, and its share of each address's budget
    /// (`addresses.rs`): what the worker's `share_addresses` stage reads and writes.
    pub fn addresses(&self) -> &crate::addresses::AddressBook {
        self.asker.addresses()
    }

    /// Pauses or resumes every request of this worker (`crawler-reap --pause`): while paused
    /// none starts; those on the wire finish, and the checks waiting keep waiting.
    pub fn pause(&self, paused: bool) {
        self.asker.pause(paused);
    }

    /// Whether this worker has room on the wire (a quarter of `--concurrency` free at least).
    pub fn has_room(&self) -> bool {
        self.asker.has_room()
    }

    /// Shares soft-404 probes through `store` (the database): a host's probe is made once
    /// per fleet, and reused by whichever worker holds the host next.
    pub fn share_probes(&self, store: Arc<dyn ProbeStore>) {
        self.soft404.source.share_in(store);
    }

    /// Checks one URL, retries included, and says what was found.
    pub async fn check(&self, url: &str) -> Finding {
        self.check_reading(url, None).await.0
    }

    /// Checks `url` as [`Checker::check`] does, with GETs, and returns the body of an alive
    /// HTML answer too (up to [`PAGE_CAP`](crate::PAGE_CAP)); the finding's `final_url` is
    /// where it is from.
    pub async fn check_page(&self, url: &str) -> (Finding, Option<Vec<u8>>) {
        self.check_reading(url, Some(Reading::PAGE)).await
    }

    /// Fetches a text file (a robots.txt) through the same limits: its finding, and its body
    /// when the answer was 2xx text (up to [`ROBOTS_CAP`](crate::ROBOTS_CAP)).
    pub async fn fetch_text(&self, url: &str) -> (Finding, Option<Vec<u8>>) {
        self.check_reading(url, Some(Reading::TEXT)).await
    }

    /// [`Checker::check`]; with `reading`, every hop is a GET and the final answer's body
    /// comes back too, when it is what `reading` wants (`page.rs`).
    async fn check_reading(
        &self,
        url: &str,
        reading: Option<Reading>,
    ) -> (Finding, Option<Vec<u8>>) {
        let started = Instant::now();
        let seeded = url;
        if !self.asker.config().filter.allows(url) {
            return (Finding::excluded(), None);
        }
        let url = match self.start_url(url) {
            Ok(url) => url,
            Err(failure) => {
                let finding = Attempt::failed(failure).into_finding(0, started.elapsed(), None);
                return (finding, None);
            }
        };
        let cut = self.cut.as_ref();
        let probe = match self.soft404.host_probe(&self.asker, &url, cut).await {
            Ok(probe) => probe,
            Err(wait) => return (deferred_by_server(wait), None),
        };
        let mut attempts = 0;
        let mut ask = Ask {
            keep_body: probe.is_some() || reading.is_some(),
            get_first: false,
            reading,
            cut,
        };
        loop {
            attempts += 1;
            let attempt = attempt(&self.asker, &url, ask).await;
            if let Some(wait) = attempt.busy() {
                return (deferred_by_server(wait), None);
            }
            match next_step(&attempt, attempts, self.asker.config()) {
                Step::Retry(wait) => {
                    // A GET decides whatever the answer: a retry asks once, not HEAD then GET.
                    ask.get_first = true;
                    tokio::time::sleep(wait).await
                }
                Step::Stop { retry_after } => {
                    let body = reading.and_then(|_| body_of(&attempt));
                    let soft = match &probe {
                        // Boxed, as the probe is (`Soft404::host_probe`): only `--soft-404` asks.
                        Some(p) => {
                            let of = self.soft404.of(&self.asker, &url, (&attempt, p), cut);
                            match Box::pin(of).await {
                                Ok(soft) => soft,
                                Err(wait) => return (deferred_by_server(wait), None),
                            }
                        }
                        None => None,
                    };
                    let finding = attempt.into_finding(attempts, started.elapsed(), retry_after);
                    let finding = self.soft404.finding(seeded, finding, soft).await;
                    return (finding, body);
                }
            }
        }
    }

    /// The URL to start from, or why it cannot be asked at all (then no attempt is made).
    fn start_url(&self, url: &str) -> Result<Url, Failure> {
        let mut url = Url::parse(url.trim()).map_err(|_| Failure::Protocol)?;
        url.set_fragment(None);
        self.asker.guard(&url)?;
        Ok(url)
    }
}

/// The finding of a site not checked because the server deferred its whole host for `wait`,
/// past the horizon: `blocked` now, due again when the server allows (the queue keeps a delay
/// past its horizon as the next check, not as a retry).
fn deferred_by_server(wait: Duration) -> Finding {
    let wait = wait.min(MAX_DELAY);
    let until = httpdate::fmt_http_date(std::time::SystemTime::now() + wait);
    Finding::blocked_for(wait, format!("deferred by the server until {until}"))
}

#[cfg(test)]
mod tests {
    use crawler_verdict::{ErrorKind, Verdict};

    use super::*;

    #[test]
    fn the_default_configuration_is_valid() {
        assert!(Checker::new(CheckConfig::default()).is_ok());
    }

    #[test]
    fn a_zero_or_meaningless_rate_is_refused() {
        for host_rate in [0.0, -1.0, f64::NAN, 1e-300] {
            let config = CheckConfig {
                host_rate,
                ..CheckConfig::default()
            };
            assert!(matches!(
                Checker::new(config),
                Err(CheckError::InvalidConfig(_))
            ));
        }
        let unlimited = CheckConfig {
            host_rate: f64::INFINITY,
            ..CheckConfig::default()
        };
        assert!(Checker::new(unlimited).is_ok());
    }

    #[test]
    fn checks_can_run_on_any_task() {
        fn assert_send<T: Send + 'static>(_: T) {}
        let checker = Checker::new(CheckConfig::default()).unwrap();
        assert_send(async move { checker.check("http://a.example/").await });
    }

    #[tokio::test]
    async fn a_string_that_is_not_a_url_is_a_protocol_error_without_attempts() {
        let checker = Checker::new(CheckConfig::default()).unwrap();
        let finding = checker.check("not a url").await;
        assert_eq!(finding.verdict, Verdict::Error);
        assert_eq!(finding.error_kind, Some(ErrorKind::Protocol));
        assert_eq!(finding.attempts, 0);
        let finding = checker.check("ftp://a.example/file").await;
        assert_eq!(finding.error_kind, Some(ErrorKind::Protocol));
    }
}
