//! One attempt: HEAD (then GET when HEAD is not enough) on each hop, redirects followed by
//! hand so that every hop is checked against the scheme and address rules, and carries no
//! credentials a server put in its `Location`. An attempt also says where the URL has moved:
//! the end of the permanent redirects (301, 308) its chain starts with, unless that is the same
//! page written another way ([`moved`]).

use std::time::Duration;

use reqwest::Method;
use url::Url;

use crate::ask::Ask;
use crate::asker::Asker;
use crate::head::needs_get;
use crate::reply::{Attempt, End, Failure, Reply};

/// Where a response sends the checker next.
#[derive(Debug, PartialEq)]
enum Hop {
    /// Not a redirect: this response is the answer.
    Stay,
    To(Url),
    /// A redirect without a usable `Location`.
    Malformed,
}

/// Follows `start` to its final answer within one time budget of `config.timeout`, each hop
/// asked as `ask` says.
pub(crate) async fn attempt(asker: &Asker, start: &Url, ask: Ask<'_>) -> Attempt {
    let mut budget = asker.config().timeout;
    let mut url = start.clone();
    // The hops before `url`, to see loops; no allocation unless there is a redirect.
    let mut seen: Vec<Url> = Vec::new();
    // Where the permanent redirects the chain starts with lead, while each hop so far was one.
    let mut moved_to: Option<Url> = None;
    let mut permanent = true;
    loop {
        let redirects = seen.len() as u32;
        let reply = match probe(asker, &url, &mut budget, ask).await {
            Ok(reply) => reply,
            Err(failure) => {
                // The URL counts as final once a server has answered in this attempt.
                let final_url = (redirects > 0).then_some(url);
                let end = End::Failed {
                    failure,
                    status: None,
                };
                return Attempt {
                    end,
                    final_url,
                    redirects,
                    moved_to: moved(start, moved_to),
                };
            }
        };
        let status = Some(reply.status);
        let failed = |failure, url, moved_to| Attempt {
            end: End::Failed { failure, status },
            final_url: Some(url),
            redirects,
            moved_to: moved(start, moved_to),
        };
        match next_hop(&url, &reply) {
            Hop::Stay => {
                let final_url = Some(url);
                return Attempt {
                    end: End::Answered(reply),
                    final_url,
                    redirects,
                    moved_to: moved(start, moved_to),
                };
            }
            Hop::Malformed => return failed(Failure::Protocol, url, moved_to),
            Hop::To(next) if next == url || seen.contains(&next) => {
                return failed(Failure::Redirects, url, moved_to)
            }
            Hop::To(_) if redirects >= asker.config().max_redirects => {
                return failed(Failure::Redirects, url, moved_to)
            }
            Hop::To(next) => {
                permanent &= matches!(reply.status, 301 | 308);
                if permanent {
                    moved_to = Some(next.clone());
                }
                seen.push(std::mem::replace(&mut url, next))
            }
        }
    }
}

/// HEAD first, then GET when HEAD's answer cannot decide (`head.rs`). GET at once for a
/// retry or a page to read (`ask`), for a host whose HEAD is not to be believed, and where
/// checks queue for the host: there every request is a turn of its rate, and one GET
/// decides where a HEAD may need a GET after it.
async fn probe(
    asker: &Asker,
    url: &Url,
    budget: &mut Duration,
    ask: Ask<'_>,
) -> Result<Reply, Failure> {
    asker.guard(url)?;
    let host = asker.host(url.host_str().unwrap_or_default());
    if ask.keep_body || ask.get_first || host.asks_get_first() {
        return asker.fetch(&host, Method::GET, url, budget, ask).await;
    }
    let head = asker.fetch(&host, Method::HEAD, url, budget, ask).await;
    if budget.is_zero() || !needs_get(&head) {
        return head;
    }
    let get = asker.fetch(&host, Method::GET, url, budget, ask).await;
    host.learn_head(&head, &get);
    get
}

/// Where `start` has moved, if its permanent redirects lead to `to`: not when `to` is the same
/// page written another way, what people call noise (linkchecker#316) — a trailing slash added
/// or removed, http become https on the same host and path, the host's case changed (the `url`
/// crate writes hosts in lower case already) — nor any combination of these.
fn moved(start: &Url, to: Option<Url>) -> Option<Url> {
    let to = to?;
    let page = |u: &Url| {
        (
            u.host_str().map(str::to_ascii_lowercase),
            u.port(),
            u.path().trim_end_matches('/').to_owned(),
            u.query().map(str::to_owned),
        )
    };
    let schemes_alike =
        start.scheme() == to.scheme() || (start.scheme() == "http" && to.scheme() == "https");
    match schemes_alike && page(start) == page(&to) {
        true => None,
        false => Some(to),
    }
}

fn next_hop(base: &Url, reply: &Reply) -> Hop {
    if !matches!(reply.status, 301 | 302 | 303 | 307 | 308) {
        return Hop::Stay;
    }
    let location = reply.location.as_deref().map(str::trim).unwrap_or_default();
    if location.is_empty() {
        return Hop::Malformed;
    }
    match base.join(location) {
        Ok(mut next) => {
            next.set_fragment(None);
            inherit_credentials(base, &mut next);
            Hop::To(next)
        }
        Err(_) => Hop::Malformed,
    }
}

/// Credentials go only where the list sent them: the next hop keeps the userinfo of the URL
/// it comes from while it stays on that origin (as reqwest's own redirects keep the
/// `Authorization` header), and never takes any from a `Location`, which a server could plant
/// to have the crawler send a password on its behalf, to a host of its choosing.
fn inherit_credentials(base: &Url, next: &mut Url) {
    let (username, password) = if base.origin() == next.origin() {
        (base.username(), base.password())
    } else {
        ("", None)
    };
    // Fails only for URLs without a host, which the guard refuses anyway.
    let _ = next.set_username(username);
    let _ = next.set_password(password);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redirect(status: u16, location: Option<&str>) -> Reply {
        let location = location.map(str::to_owned);
        Reply {
            status,
            location,
            retry_after: None,
            cf_mitigated: false,
            accepted: false,
            body: None,
        }
    }

    fn hop(status: u16, location: Option<&str>) -> Hop {
        let base = Url::parse("http://a.example/dir/page?q=1").unwrap();
        next_hop(&base, &redirect(status, location))
    }

    fn to(s: &str) -> Hop {
        Hop::To(Url::parse(s).unwrap())
    }

    #[test]
    fn relative_and_absolute_locations_are_resolved_against_the_hop() {
        assert_eq!(hop(301, Some("other")), to("http://a.example/dir/other"));
        assert_eq!(hop(302, Some("/root")), to("http://a.example/root"));
        assert_eq!(hop(307, Some("//b.example/x")), to("http://b.example/x"));
        assert_eq!(
            hop(308, Some("https://c.example/")),
            to("https://c.example/")
        );
    }

    #[test]
    fn fragments_are_dropped_so_loops_are_seen() {
        assert_eq!(
            hop(303, Some("/dir/page?q=1#top")),
            to("http://a.example/dir/page?q=1")
        );
    }

    #[test]
    fn a_redirect_without_a_usable_location_is_malformed() {
        assert_eq!(hop(301, None), Hop::Malformed);
        assert_eq!(hop(302, Some("  ")), Hop::Malformed);
        assert_eq!(hop(302, Some("http://[oops")), Hop::Malformed);
        assert_eq!(hop(302, Some("http://exa mple.com/")), Hop::Malformed);
    }

    #[test]
    fn other_statuses_are_answers() {
        assert_eq!(hop(200, Some("/ignored")), Hop::Stay);
        assert_eq!(hop(304, Some("/ignored")), Hop::Stay);
        assert_eq!(hop(300, Some("/ignored")), Hop::Stay);
    }

    #[test]
    fn credentials_in_a_location_are_never_followed() {
        assert_eq!(
            hop(302, Some("http://user:pw@b.example/")),
            to("http://b.example/")
        );
        assert_eq!(
            hop(302, Some("http://user:pw@a.example/x")),
            to("http://a.example/x")
        );
    }

    #[test]
    fn a_move_to_the_same_page_written_another_way_is_no_move() {
        let url = |s: &str| Url::parse(s).unwrap();
        let start = url("http://a.example/docs/page?q=1");
        for noise in [
            "http://a.example/docs/page/?q=1",
            "https://a.example/docs/page?q=1",
            "https://A.Example/docs/page/?q=1",
        ] {
            assert_eq!(moved(&start, Some(url(noise))), None, "{noise}");
        }
        for moves in [
            "http://a.example/docs/other?q=1",
            "http://a.example/docs/page?q=2",
            "https://www.a.example/docs/page?q=1",
            "http://a.example:8080/docs/page?q=1",
        ] {
            assert_eq!(moved(&start, Some(url(moves))), Some(url(moves)), "{moves}");
        }
        let secure = url("https://a.example/x");
        assert!(
            moved(&secure, Some(url("http://a.example/x"))).is_some(),
            "back to http"
        );
        assert_eq!(moved(&start, None), None);
    }

    #[test]
    fn credentials_of_the_start_url_go_to_its_origin_only() {
        let base = Url::parse("http://op:pw@a.example/dir/page").unwrap();
        let next = |location: &str| next_hop(&base, &redirect(302, Some(location)));
        assert_eq!(next("other"), to("http://op:pw@a.example/dir/other"));
        assert_eq!(
            next("http://evil:x@a.example/"),
            to("http://op:pw@a.example/")
        );
        assert_eq!(next("https://a.example/"), to("https://a.example/"));
        assert_eq!(next("//b.example/"), to("http://b.example/"));
    }
}
