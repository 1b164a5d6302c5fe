//! How to ask a host: HEAD first or GET first, learnt from what its HEAD answers have shown
//! against its GETs. A request that cannot decide a verdict costs another one, so each host is
//! asked the way that decides in one request where it can, and no verdict rests on a HEAD that
//! a GET could contradict.
//!
//! - A HEAD answered 2xx or 3xx decides (an alive page, a redirect hop), as does a throttle
//!   (429, 503: the retry asks again later, with GET). Any other answer, 4xx included, is asked
//!   again with GET: HEAD lies on some servers and some paths only, and a 404 believed from a
//!   HEAD would call an alive page dead.
//! - A host whose HEAD said 4xx where its GET answered otherwise, that refused HEAD (405, 501),
//!   or whose HEAD failed (5xx, a dropped connection) where its GET answered [`FAILED_IN_A_ROW`]
//!   times in a row, is asked with GET first from then on.
//! - Where checks queue for a host (its rate or its slots are the bound: `ratelimit.rs`), its
//!   requests are GETs too (`redirect.rs`): every request there is a turn of the host's rate,
//!   and one GET costs less than a HEAD and then a GET.
//!
//! A GET reads a bounded prefix of the body (`asker.rs`): that prefix is what asking with GET
//! costs over a HEAD.

use crate::classify::is_throttling;
use crate::reply::{Failure, Reply};

/// HEADs that failed where the GET after them answered, in a row, before the host is asked
/// with GET first: one is a transient, three are a server that does not do HEAD.
pub(crate) const FAILED_IN_A_ROW: u32 = 3;

/// What one host's HEAD has shown.
#[derive(Debug, Default)]
pub(crate) struct Head {
    /// Ask with GET first: HEAD refused, lied, or kept failing where GET answered.
    get_first: bool,
    /// HEADs that failed where the GET answered, in a row.
    failed: u32,
}

/// Whether the answer to a HEAD cannot decide, so a GET must be asked.
pub(crate) fn needs_get(head: &Result<Reply, Failure>) -> bool {
    match head {
        Err(failure) => failure.worth_a_get(),
        Ok(reply) => reply.status >= 400 && !is_throttling(reply.status),
    }
}

impl Head {
    /// Whether this host's checks start with GET.
    pub(crate) fn get_first(&self) -> bool {
        self.get_first
    }

    /// Learns from the GET asked after a HEAD that could not decide.
    pub(crate) fn learn(&mut self, head: &Result<Reply, Failure>, get: &Result<Reply, Failure>) {
        let Ok(get) = get else { return };
        match head {
            // A status for both: the page's own answer, unless the GET answered otherwise.
            Ok(head) if head.status < 500 || head.status == 501 => {
                self.get_first |= get.status != head.status && get.status < 500;
            }
            // A HEAD that failed (5xx, a dropped connection): once may be chance.
            _ if get.status < 500 => {
                self.failed += 1;
                self.get_first |= self.failed >= FAILED_IN_A_ROW;
            }
            _ => self.failed = 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16) -> Result<Reply, Failure> {
        Ok(Reply {
            status,
            location: None,
            retry_after: None,
            cf_mitigated: false,
            accepted: (200..300).contains(&status),
            body: None,
        })
    }

    #[test]
    fn answers_that_decide_need_no_get() {
        for status in [200, 204, 301, 302, 308, 429, 503] {
            assert!(!needs_get(&answer(status)), "{status}");
        }
        for status in [404, 410, 403, 401, 405, 500, 501] {
            assert!(needs_get(&answer(status)), "{status}");
        }
        assert!(needs_get(&Err(Failure::Reset)));
        assert!(!needs_get(&Err(Failure::Timeout)));
    }

    #[test]
    fn a_head_that_told_the_truth_keeps_the_host_on_head() {
        let mut head = Head::default();
        for status in [404, 410, 403, 405] {
            head.learn(&answer(status), &answer(status));
        }
        assert!(!head.get_first());
    }

    #[test]
    fn a_head_that_lied_once_sends_the_host_to_get_first() {
        let mut head = Head::default();
        head.learn(&answer(404), &answer(404));
        head.learn(&answer(404), &answer(200));
        assert!(head.get_first());
    }

    #[test]
    fn a_get_that_failed_teaches_nothing() {
        let mut head = Head::default();
        head.learn(&answer(404), &answer(500));
        head.learn(&answer(404), &Err(Failure::Timeout));
        assert!(!head.get_first());
    }

    #[test]
    fn a_refused_head_sends_the_host_to_get_first() {
        let mut head = Head::default();
        head.learn(&answer(501), &answer(501));
        assert!(!head.get_first(), "501 to both: the page's own answer");
        head.learn(&answer(405), &answer(200));
        assert!(head.get_first());
    }

    #[test]
    fn heads_that_keep_failing_where_get_answers_send_the_host_to_get_first() {
        let mut head = Head::default();
        head.learn(&answer(500), &answer(200));
        head.learn(&answer(500), &answer(500));
        head.learn(&Err(Failure::Reset), &answer(200));
        head.learn(&answer(500), &answer(200));
        assert!(!head.get_first(), "a transient now and then");
        head.learn(&answer(502), &answer(200));
        assert!(head.get_first());
    }
}
