//! Turning what happened into a [`Finding`]: status codes into verdicts, reqwest's errors into
//! failures, and the last attempt into the finding the queue stores.

use std::error::Error as StdError;
use std::io;
use std::time::Duration;

use crawler_verdict::{ErrorKind, Finding, Next, Verdict};
use url::Url;

use crate::reply::{Attempt, End, Failure};
use crate::resolve::ResolveError;

impl Failure {
    fn kind(self) -> ErrorKind {
        match self {
            Failure::Dns => ErrorKind::Dns,
            Failure::Denied => ErrorKind::AddressDenied,
            Failure::Refused | Failure::Reset | Failure::Unreachable => ErrorKind::Connect,
            Failure::Timeout | Failure::Busy(_) => ErrorKind::Timeout,
            Failure::Tls => ErrorKind::Tls,
            Failure::Protocol => ErrorKind::Protocol,
            Failure::Redirects => ErrorKind::Redirects,
            Failure::HostDown(cause) => cause.kind(),
        }
    }

    fn verdict(self) -> Verdict {
        match self {
            Failure::Denied | Failure::Protocol | Failure::Redirects => Verdict::Error,
            _ => Verdict::Unreachable,
        }
    }
}

/// The verdict a final response's status gives. An `accepted` status (`--accept`, by default
/// 2xx) is alive whatever else it is; a 2xx that is not accepted is an error, like any other
/// answer the table does not know.
pub(crate) fn verdict_of_status(status: u16, cf_mitigated: bool, accepted: bool) -> Verdict {
    match status {
        _ if accepted => Verdict::Alive,
        200..=299 => Verdict::Error,
        _ if is_challenge(status, cf_mitigated) => Verdict::Blocked,
        401 | 403 | 407 | 429 | 451 | 999 => Verdict::Blocked,
        408 => Verdict::Error,
        400..=499 => Verdict::Dead,
        _ => Verdict::Error,
    }
}

/// A Cloudflare challenge page: 403 or 503 with `cf-mitigated`. The header on any other
/// status says nothing of the page (a 404 behind Cloudflare is still gone).
fn is_challenge(status: u16, cf_mitigated: bool) -> bool {
    cf_mitigated && matches!(status, 403 | 503)
}

/// Statuses that may pass if asked again.
pub(crate) fn is_transient_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500..=599)
}

/// A server asking its clients to slow down: 429 Too Many Requests, or 503 Service
/// Unavailable, which overloaded servers and rate limiters send alike. Such an answer slows
/// the host's pace (`ratelimit.rs`) and is told to the fleet (the worker's
/// `stages/share_hosts.rs`).
pub fn is_throttling(status: u16) -> bool {
    matches!(status, 429 | 503)
}

/// Finds the cause of a failed request in reqwest's error chain.
pub(crate) fn failure_of(err: &reqwest::Error) -> Failure {
    if err.is_timeout() {
        return Failure::Timeout;
    }

    let mut source: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = source {
        if let Some(found) = failure_of_cause(e) {
            return found;
        }
        source = e.source();
    }
    if err.is_connect() {
        Failure::Unreachable
    } else {
        Failure::Protocol
    }
}

fn failure_of_cause(e: &(dyn StdError + 'static)) -> Option<Failure> {
    if let Some(resolve) = e.downcast_ref::<ResolveError>() {
        return Some(match resolve {
            ResolveError::NotFound(_) => Failure::Dns,
            ResolveError::Denied(_) => Failure::Denied,
        });
    }
    if e.is::<rustls::Error>() {
        return Some(Failure::Tls);
    }
    if let Some(h) = e.downcast_ref::<hyper::Error>() {
        return match () {
            _ if h.is_timeout() => Some(Failure::Timeout),
            _ if h.is_incomplete_message() => Some(Failure::Reset),
            _ if h.is_parse() => Some(Failure::Protocol),
            _ => None, // an I/O error: its source says which
        };
    }
    let io = e.downcast_ref::<io::Error>()?;
    // `io::Error::source` skips the wrapped error itself (tokio-rustls wraps a rustls error in
    // an io::Error, which reqwest wraps in another), so look inside first.
    let inner = io.get_ref().and_then(|inner| failure_of_cause(inner));
    Some(inner.unwrap_or_else(|| failure_of_io(io.kind())))
}

fn failure_of_io(kind: io::ErrorKind) -> Failure {
    use io::ErrorKind as K;
    match kind {
        K::ConnectionRefused => Failure::Refused,
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
            Failure::Reset
        }
        K::TimedOut => Failure::Timeout,
        K::InvalidData => Failure::Protocol,
        _ => Failure::Unreachable,
    }
}

impl Attempt {
    pub(crate) fn is_transient(&self) -> bool {
        match &self.end {
            // A challenge answers the same however often it is asked.
            End::Answered(reply) => {
                is_transient_status(reply.status)
                    && !is_challenge(reply.status, reply.cf_mitigated)
                    && !reply.accepted
            }
            End::Failed { failure, .. } => failure.is_transient(),
        }
    }

    /// The finding, once no more attempts will be made.
    pub(crate) fn into_finding(
        self,
        attempts: u32,
        latency: Duration,
        retry_after: Option<Duration>,
    ) -> Finding {
        let next = if self.is_transient() || retry_after.is_some() {
            Next::Transient {
                not_before: retry_after,
            }
        } else {
            Next::Final
        };
        let detail = match &self.end {
            End::Failed {
                failure: Failure::HostDown(cause),
                ..
            } => Some(format!("decided for the host: {}", cause.describe())),
            _ => None,
        };
        let (verdict, status, error_kind) = match self.end {
            End::Answered(r) => (
                verdict_of_status(r.status, r.cf_mitigated, r.accepted),
                Some(r.status),
                None,
            ),
            End::Failed { failure, status } => (failure.verdict(), status, Some(failure.kind())),
        };
        Finding {
            verdict,
            status,
            error_kind,
            final_url: self.final_url.map(without_userinfo),
            redirects: self.redirects,
            latency,
            attempts,
            next,
            detail,
            fragment: None,
            moved_to: self.moved_to.map(without_userinfo),
        }
    }
}

/// The URL as stored and reported: a password in it (from the list, or planted by a redirect)
/// must not reach the database, the reports or the logs.
pub(crate) fn without_userinfo(mut url: Url) -> String {
    // Fails only for URLs that cannot have a host (`mailto:`), which have no userinfo either.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_the_verdict_table() {
        let table = [
            (200, Verdict::Alive),
            (204, Verdict::Alive),
            (404, Verdict::Dead),
            (410, Verdict::Dead),
            (400, Verdict::Dead),
            (418, Verdict::Dead),
            (401, Verdict::Blocked),
            (403, Verdict::Blocked),
            (407, Verdict::Blocked),
            (429, Verdict::Blocked),
            (451, Verdict::Blocked),
            (999, Verdict::Blocked),
            (408, Verdict::Error),
            (500, Verdict::Error),
            (503, Verdict::Error),
            (304, Verdict::Error),
        ];
        for (status, verdict) in table {
            let accepted = (200..=299).contains(&status);
            assert_eq!(
                verdict_of_status(status, false, accepted),
                verdict,
                "status {status}"
            );
        }
    }

    #[test]
    fn an_accepted_status_is_alive_and_a_2xx_not_accepted_is_an_error() {
        assert_eq!(verdict_of_status(403, true, true), Verdict::Alive);
        assert_eq!(verdict_of_status(503, false, true), Verdict::Alive);
        assert_eq!(verdict_of_status(204, false, false), Verdict::Error);
    }

    #[test]
    fn a_cloudflare_challenge_blocks_only_a_403_or_a_503() {
        assert_eq!(verdict_of_status(403, true, false), Verdict::Blocked);
        assert_eq!(verdict_of_status(503, true, false), Verdict::Blocked);
        assert_eq!(verdict_of_status(200, true, true), Verdict::Alive);
        assert_eq!(verdict_of_status(404, true, false), Verdict::Dead);
        assert_eq!(verdict_of_status(410, true, false), Verdict::Dead);
        assert_eq!(verdict_of_status(500, true, false), Verdict::Error);
    }

    #[test]
    fn only_408_429_and_5xx_are_transient_statuses() {
        let transient: Vec<u16> = (100..1000).filter(|s| is_transient_status(*s)).collect();
        assert_eq!(transient.len(), 102);
        assert!(!is_transient_status(404) && !is_transient_status(999));
    }

    #[test]
    fn resets_are_retried_and_refusals_are_not() {
        assert_eq!(
            failure_of_io(io::ErrorKind::ConnectionRefused),
            Failure::Refused
        );
        assert_eq!(
            failure_of_io(io::ErrorKind::ConnectionReset),
            Failure::Reset
        );
        assert!(Failure::Reset.is_transient());
        assert!(!Failure::Refused.is_transient());
        assert!(!Failure::Dns.is_transient());
        assert_eq!(Failure::Refused.kind(), ErrorKind::Connect);
    }

    #[test]
    fn a_tls_error_is_found_inside_nested_io_errors() {
        let tls = rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType);
        let inner = io::Error::new(io::ErrorKind::InvalidData, tls);
        let outer = io::Error::other(inner);
        assert_eq!(failure_of_cause(&outer), Some(Failure::Tls));
        let refused = io::Error::other(io::Error::from(io::ErrorKind::ConnectionRefused));
        assert_eq!(failure_of_cause(&refused), Some(Failure::Refused));
    }

    #[test]
    fn resolver_errors_are_dns_or_denied() {
        let not_found = ResolveError::NotFound("x.invalid".into());
        assert_eq!(failure_of_cause(&not_found), Some(Failure::Dns));
        let denied = ResolveError::Denied("localhost".into());
        assert_eq!(failure_of_cause(&denied), Some(Failure::Denied));
        assert_eq!(Failure::Denied.verdict(), Verdict::Error);
        assert_eq!(Failure::Dns.verdict(), Verdict::Unreachable);
    }

    #[test]
    fn a_timeout_is_never_followed_by_a_get() {
        assert!(!Failure::Timeout.worth_a_get());
        assert!(Failure::Reset.worth_a_get() && Failure::Protocol.worth_a_get());
    }

    #[test]
    fn a_redirect_failure_keeps_the_last_status() {
        let attempt = Attempt {
            end: End::Failed {
                failure: Failure::Redirects,
                status: Some(302),
            },
            final_url: Some(Url::parse("http://a.example/loop").unwrap()),
            redirects: 3,
            moved_to: None,
        };
        let finding = attempt.into_finding(1, Duration::ZERO, None);
        assert_eq!(finding.verdict, Verdict::Error);
        assert_eq!(finding.status, Some(302));
        assert_eq!(finding.error_kind, Some(ErrorKind::Redirects));
        assert_eq!(finding.final_url.as_deref(), Some("http://a.example/loop"));
        assert_eq!(finding.next, Next::Final);
    }

    #[test]
    fn a_final_url_never_keeps_its_userinfo() {
        let attempt = Attempt {
            end: End::Failed {
                failure: Failure::Timeout,
                status: None,
            },
            final_url: Some(Url::parse("https://user:s3cret@a.example/x?q").unwrap()),
            redirects: 1,
            moved_to: Some(Url::parse("https://user:s3cret@a.example/x?q").unwrap()),
        };
        let finding = attempt.into_finding(1, Duration::ZERO, None);
        assert_eq!(finding.final_url.as_deref(), Some("https://a.example/x?q"));
        assert_eq!(finding.moved_to.as_deref(), Some("https://a.example/x?q"));
    }
}
