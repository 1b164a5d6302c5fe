//! What the checker's parts hand back: a [`Reply`] from one request, a [`Failure`] when there
//! was no usable answer (a [`Cause`] when the failure is the host's), and the [`Attempt`] a
//! chain of redirects ended with, which the retry loop, the soft-404 comparison and `classify`
//! (into the [`Finding`](crate::Finding)) read.
//!
//! Only the types and what they say of themselves: making them is `asker.rs` and
//! `redirect.rs`'s work, judging them `classify.rs`'s, so none of those needs another.

use std::time::Duration;

use crawler_verdict::ErrorKind;
use url::Url;

/// What the checker keeps of one response.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub status: u16,
    pub location: Option<String>,
    pub retry_after: Option<Duration>,
    /// Cloudflare marks its challenge pages with a `cf-mitigated` header.
    pub cf_mitigated: bool,
    /// The status counts as alive for the host that sent it (`--accept`, `--accept-host`).
    pub accepted: bool,
    /// The first [`BODY_KEPT`](crate::asker::BODY_KEPT) bytes of a 2xx text body, when asked
    /// for (`--soft-404`); never a compressed one (nothing is decompressed).
    pub body: Option<Vec<u8>>,
}

/// Why a request got no usable answer. Finer than [`ErrorKind`](crate::ErrorKind): a reset is
/// worth retrying and a refusal is not, though both are `connect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    Dns,
    Denied,
    Refused,
    Reset,
    /// Another connection failure (network or host unreachable, out of sockets...).
    Unreachable,
    Timeout,
    Tls,
    Protocol,
    Redirects,
    /// Not asked: the server deferred the whole host (a host-wide `Retry-After`) further than
    /// the horizon; worth asking after this long.
    Busy(Duration),
    /// Not asked: the host was decided unreachable, for this cause (`health.rs`).
    HostDown(Cause),
}

impl Failure {
    /// May pass if asked again: retried in-process, then re-checked later by the queue.
    pub(crate) fn is_transient(self) -> bool {
        matches!(self, Failure::Reset | Failure::Timeout)
    }

    /// A failed HEAD that a GET may survive: servers that drop or garble HEAD. Never after a
    /// timeout, which would double the wait for nothing.
    pub(crate) fn worth_a_get(self) -> bool {
        matches!(self, Failure::Reset | Failure::Protocol)
    }
}

/// What one attempt — a chain of redirects — ended with.
#[derive(Debug)]
pub(crate) struct Attempt {
    pub end: End,
    /// The last URL asked, when some server answered during the attempt.
    pub final_url: Option<Url>,
    pub redirects: u32,
    /// Where the URL has moved: the end of the permanent redirects its chain starts with
    /// (`redirect::moved`).
    pub moved_to: Option<Url>,
}

#[derive(Debug)]
pub(crate) enum End {
    Answered(Reply),
    /// `status` is the last response's, when a redirect went wrong.
    Failed {
        failure: Failure,
        status: Option<u16>,
    },
}

impl Attempt {
    pub(crate) fn failed(failure: Failure) -> Self {
        Attempt {
            end: End::Failed {
                failure,
                status: None,
            },
            final_url: None,
            redirects: 0,
            moved_to: None,
        }
    }

    /// How long the server deferred the host, when the attempt could not even ask it.
    pub(crate) fn busy(&self) -> Option<Duration> {
        match self.end {
            End::Failed {
                failure: Failure::Busy(wait),
                ..
            } => Some(wait),
            _ => None,
        }
    }

    /// The server's `Retry-After`, when it answered with one.
    pub(crate) fn retry_after(&self) -> Option<Duration> {
        match &self.end {
            End::Answered(reply) => reply.retry_after,
            End::Failed { .. } => None,
        }
    }
}

/// What decided a host unreachable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cause {
    Dns,
    Refused,
    Unreachable,
    Timeout,
    Tls,
    Reset,
}

impl Cause {
    /// The failures that belong to the host rather than to one URL.
    pub(crate) fn of(failure: Failure) -> Option<Cause> {
        Some(match failure {
            Failure::Dns => Cause::Dns,
            Failure::Refused => Cause::Refused,
            Failure::Unreachable => Cause::Unreachable,
            Failure::Timeout => Cause::Timeout,
            Failure::Tls => Cause::Tls,
            Failure::Reset => Cause::Reset,
            _ => return None,
        })
    }

    pub(crate) fn kind(self) -> ErrorKind {
        match self {
            Cause::Dns => ErrorKind::Dns,
            Cause::Refused | Cause::Unreachable | Cause::Reset => ErrorKind::Connect,
            Cause::Timeout => ErrorKind::Timeout,
            Cause::Tls => ErrorKind::Tls,
        }
    }

    pub(crate) fn from_kind(kind: ErrorKind) -> Cause {
        match kind {
            ErrorKind::Dns => Cause::Dns,
            ErrorKind::Timeout => Cause::Timeout,
            ErrorKind::Tls => Cause::Tls,
            _ => Cause::Refused,
        }
    }

    /// Says what happened, for the verdict's detail and the hosts report.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Cause::Dns => "the name does not resolve",
            Cause::Refused => "connections are refused",
            Cause::Unreachable => "no route to the host",
            Cause::Timeout => "no response in time",
            Cause::Tls => "the TLS handshake fails",
            Cause::Reset => "connections are reset without an answer",
        }
    }
}
