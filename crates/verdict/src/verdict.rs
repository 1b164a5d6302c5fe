//! What a check found: the verdict vocabulary shared by the checker, the queue and the report.
//!
//! A dead URL is data, not an error: every check ends in a [`Finding`].

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The outcome of a site's last check, after retries.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The final response was 2xx.
    Alive,
    /// 404, 410, or another 4xx that says the page is gone; or, with `--soft-404`, an alive
    /// answer that matches its host's answer to a path that cannot exist.
    Dead,
    /// The site refuses the crawler (401, 403, 407, 451, 429 after retries, bot walls).
    Blocked,
    /// No HTTP answer at all: DNS, refused, reset, timeout, TLS.
    Unreachable,
    /// An answer that is not a verdict: 5xx or 408 after retries, redirect loops, bad HTTP.
    Error,
    /// Not checked: the worker's `--include`/`--exclude` leave the URL out, so no request was
    /// made. Not a failure: the user chose to leave it out (lychee's `Status::Excluded`).
    Excluded,
}

impl Verdict {
    pub const ALL: [Verdict; 6] = [
        Verdict::Alive,
        Verdict::Dead,
        Verdict::Blocked,
        Verdict::Unreachable,
        Verdict::Error,
        Verdict::Excluded,
    ];

    /// The name stored in the database and printed in reports. SQL text writes a verdict by
    /// this name in braces, `{dead}`, and the queue's `sql::statement` puts in the quoted
    /// name, `'dead'`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Alive => "alive",
            Verdict::Dead => "dead",
            Verdict::Blocked => "blocked",
            Verdict::Unreachable => "unreachable",
            Verdict::Error => "error",
            Verdict::Excluded => "excluded",
        }
    }
}

/// Whether the page of a fragment (`page#section`) has that section: a fragment's site takes
/// its page's verdict, and this besides (the queue's `anchors`). A missing fragment is a
/// broken link to an alive page.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Fragment {
    /// The page has an element with that id, or an `<a name>` (a Markdown file: a heading's
    /// slug, an explicit id).
    Found,
    /// The page was read and has no such anchor.
    Missing,
}

impl Fragment {
    pub const ALL: [Fragment; 2] = [Fragment::Found, Fragment::Missing];

    /// The name stored in the database and printed in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Fragment::Found => "found",
            Fragment::Missing => "missing",
        }
    }
}

/// How many sites got each verdict: what a write-back stored, what a worker has stored so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerdictCounts([u64; Verdict::ALL.len()]);

impl VerdictCounts {
    pub fn add(&mut self, verdict: Verdict, n: u64) {
        self.0[Self::index(verdict)] += n;
    }

    pub fn get(&self, verdict: Verdict) -> u64 {
        self.0[Self::index(verdict)]
    }

    /// Sites with any verdict.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Each verdict and its count, in [`Verdict::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Verdict, u64)> + '_ {
        Verdict::ALL.into_iter().zip(self.0)
    }

    /// `Verdict::ALL` lists the variants in declaration order.
    fn index(verdict: Verdict) -> usize {
        verdict as usize
    }
}

impl std::ops::AddAssign for VerdictCounts {
    fn add_assign(&mut self, other: VerdictCounts) {
        for (n, m) in self.0.iter_mut().zip(other.0) {
            *n += m;
        }
    }
}

impl FromIterator<Verdict> for VerdictCounts {
    fn from_iter<I: IntoIterator<Item = Verdict>>(verdicts: I) -> Self {
        let mut counts = VerdictCounts::default();
        for v in verdicts {
            counts.add(v, 1);
        }
        counts
    }
}

/// Why a check got no usable HTTP answer; `None` in a [`Finding`] when the server answered.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The name does not resolve.
    Dns,
    /// Refused, reset, or the network is unreachable.
    Connect,
    /// No answer in time (connect or headers).
    Timeout,
    /// Certificate or handshake failure.
    Tls,
    /// A redirect loop, or more hops than the limit.
    Redirects,
    /// Not HTTP, a malformed response, or a `Location` that is not a URL.
    Protocol,
    /// The address was refused by `--public-only`.
    AddressDenied,
    /// The database refused to store this result (e.g. a final URL longer than its column);
    /// the site got this verdict instead, so one hostile answer cannot block a write-back.
    Unstorable,
    /// A `dead` page that answered 2xx or 3xx: the same as the host's answer to a path that
    /// cannot exist (`--soft-404`); the finding's `detail` says what matched.
    #[serde(rename = "soft_404")]
    Soft404,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 9] = [
        ErrorKind::Dns,
        ErrorKind::Connect,
        ErrorKind::Timeout,
        ErrorKind::Tls,
        ErrorKind::Redirects,
        ErrorKind::Protocol,
        ErrorKind::AddressDenied,
        ErrorKind::Unstorable,
        ErrorKind::Soft404,
    ];

    /// The name stored in the database and printed in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Dns => "dns",
            ErrorKind::Connect => "connect",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Tls => "tls",
            ErrorKind::Redirects => "redirects",
            ErrorKind::Protocol => "protocol",
            ErrorKind::AddressDenied => "address_denied",
            ErrorKind::Unstorable => "unstorable",
            ErrorKind::Soft404 => "soft_404",
        }
    }
}

/// A name read back from the database that this version does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {name:?}")]
pub struct UnknownName {
    pub what: &'static str,
    pub name: String,
}

macro_rules! named {
    ($ty:ident, $what:literal) => {
        impl FromStr for $ty {
            type Err = UnknownName;
            fn from_str(s: &str) -> Result<Self, UnknownName> {
                Self::ALL
                    .into_iter()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| UnknownName {
                        what: $what,
                        name: s.to_owned(),
                    })
            }
        }
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
named!(Verdict, "verdict");
named!(ErrorKind, "error kind");
named!(Fragment, "fragment");

/// Everything one check of one URL found out.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub verdict: Verdict,
    /// The HTTP status of the last response, when there was one.
    pub status: Option<u16>,
    /// Why there was no usable answer, when there was none.
    pub error_kind: Option<ErrorKind>,
    /// Where the redirects ended, when the server answered.
    pub final_url: Option<String>,
    /// Redirect hops followed.
    pub redirects: u32,
    /// Time from the first request to the verdict, retries included.
    pub latency: Duration,
    /// HTTP attempts made by the checker (1 + in-process retries).
    pub attempts: u32,
    /// What the queue does with the site next: take the verdict, check again later, or make
    /// it due again unchecked.
    pub next: Next,
    /// Why the verdict is what it is, when the status alone does not say (a soft 404: what it
    /// matched); stored and reported.
    pub detail: Option<String>,
    /// For a fragment's site (`page#section`) whose page was read: whether it has the section.
    pub fragment: Option<Fragment>,
    /// Where a permanent redirect (301, 308) sends the URL: the URL after the redirects of the
    /// chain's start that are all permanent, when that is another page (not the same one with
    /// a trailing slash, on https, or with its host's case changed). The URL to write instead.
    pub moved_to: Option<String>,
}

/// How far a site may be put off before the queue stops waiting for it (`--defer-horizon` by
/// default, the queue's and the checker's one option): a host the server deferred further is
/// not waited for by the checker, and a site due later than this gets its current result as
/// its verdict now, its next check then, so that a drain ends.
pub const DEFER_HORIZON: Duration = Duration::from_secs(60);

/// What follows a [`Finding`]: whether its verdict stands, and when the site is due again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The verdict stands: the queue stores it and the site is done.
    Final,
    /// The failure may pass (timeout, reset, 408, 429, 5xx): the queue checks the site again
    /// later, until its attempt limit, rather than taking this verdict as final.
    Transient {
        /// The server asked to be asked again no sooner than this (a `Retry-After` beyond the
        /// checker's in-process cap), or the worker holds the site back this long (a soft 404
        /// to confirm, a host the server deferred): the queue makes the site due again no
        /// sooner than this, or, past its defer horizon or at the attempt limit, takes the
        /// verdict now with its next check then. `None`: the queue's backoff alone decides.
        not_before: Option<Duration>,
    },
    /// Not checked at all: its host could not be asked within the worker's patience (busy, or
    /// in backoff). The queue makes the site due again after `until`, and this does not count
    /// as an attempt.
    Deferred { until: Duration },
}

impl Next {
    /// Whether the verdict may pass: checked again later, until the attempt limit.
    pub fn is_transient(self) -> bool {
        matches!(self, Next::Transient { .. })
    }

    /// Whether the site was not checked at all.
    pub fn is_deferred(self) -> bool {
        matches!(self, Next::Deferred { .. })
    }
}

impl Finding {
    /// A site not checked because its host is busy for `wait`.
    pub fn deferred(wait: Duration) -> Finding {
        Finding {
            next: Next::Deferred { until: wait },
            ..Finding::no_answer()
        }
    }

    /// A site not checked because the server deferred its whole host for `wait`: `blocked`,
    /// transient with that wait, so the queue makes it due after it (or, past the defer
    /// horizon, keeps it as the verdict with its next check then); `detail` says why.
    pub fn blocked_for(wait: Duration, detail: String) -> Finding {
        Finding {
            verdict: Verdict::Blocked,
            next: Next::Transient {
                not_before: Some(wait),
            },
            detail: Some(detail),
            ..Finding::no_answer()
        }
    }

    /// The verdict of a site whose check failed inside the worker (it panicked): `error`, final,
    /// with `detail` saying what went wrong, so that the site is not checked again and again.
    pub fn internal_error(detail: String) -> Finding {
        Finding {
            detail: Some(detail),
            ..Finding::no_answer()
        }
    }

    /// The verdict of a site the worker's `--include`/`--exclude` leave out: `excluded`, final,
    /// nothing asked. Final rather than pending, so that `--drain` ends and the report says why.
    pub fn excluded() -> Finding {
        Finding {
            verdict: Verdict::Excluded,
            ..Finding::no_answer()
        }
    }

    /// An `error` with nothing asked and nothing answered: what the four above start from.
    fn no_answer() -> Finding {
        Finding {
            verdict: Verdict::Error,
            status: None,
            error_kind: None,
            final_url: None,
            redirects: 0,
            latency: Duration::ZERO,
            attempts: 0,
            next: Next::Final,
            detail: None,
            fragment: None,
            moved_to: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for v in Verdict::ALL {
            assert_eq!(v.as_str().parse::<Verdict>(), Ok(v));
        }
        for k in ErrorKind::ALL {
            assert_eq!(k.as_str().parse::<ErrorKind>(), Ok(k));
        }
        assert!("gone".parse::<Verdict>().is_err());
        assert!("excluded".parse::<ErrorKind>().is_err());
    }

    #[test]
    fn verdict_counts_count_each_verdict_in_its_own_place() {
        let mut counts: VerdictCounts = [Verdict::Dead, Verdict::Alive, Verdict::Dead]
            .into_iter()
            .collect();
        counts += [Verdict::Error, Verdict::Excluded].into_iter().collect();
        for (v, n) in counts.iter() {
            assert_eq!(counts.get(v), n);
        }
        assert_eq!(counts.get(Verdict::Dead), 2);
        assert_eq!(counts.get(Verdict::Alive), 1);
        assert_eq!(counts.get(Verdict::Error), 1);
        assert_eq!(counts.get(Verdict::Excluded), 1);
        assert_eq!(counts.get(Verdict::Blocked), 0);
        assert_eq!(counts.total(), 5);
    }
}
