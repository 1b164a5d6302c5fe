//! A link, resolved against its page, to the URL the queue stores: the rules of
//! `crawler-seed`'s normalization (`crates/coordinator/src/input/normalize.rs`) for a URL that
//! is already parsed: http and https only, no user name or password, no fragment, a domain
//! without its trailing dot and within DNS's limits, at most 8 KiB. So a link found on a page
//! and the same URL in a list are one site.

use url::{Host, Url};

/// The longest URL stored, as for a seed line (`MAX_LINE`).
pub const MAX_URL: usize = 8192;

/// A URL as the queue stores it, and its host (without port) for politeness.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Normal {
    pub url: String,
    pub host: String,
}

/// `link` resolved against `base`, if it names something to check: not empty, not a fragment
/// of the same page (`#top`), and not a scheme that is no request (`mailto:`, `javascript:`,
/// `data:`, `tel:`…: only http and https are kept, by [`normalize`]).
pub fn resolve(base: &Url, link: &str) -> Option<Url> {
    let link = link.trim_matches(|c: char| c.is_ascii_whitespace());
    if link.is_empty() || link.starts_with('#') {
        return None;
    }
    base.join(link).ok()
}

/// `link` resolved against `base`, same-page fragments (`#section`) included: for fragment
/// checking, where `#section` is a link to a section of this page. Only the empty fragment and
/// `#top` are left out, as they always exist.
pub fn resolve_with_fragment(base: &Url, link: &str) -> Option<Url> {
    let link = link.trim_matches(|c: char| c.is_ascii_whitespace());
    match link.strip_prefix('#') {
        Some(fragment) if crate::fragment::anchor_of(fragment).is_none() => None,
        Some(_) => base.join(link).ok(),
        None => resolve(base, link),
    }
}

/// The row of `url`'s fragment, beside `page` (`url` normalized, [`normalize`]): the page's URL
/// and its fragment, when the fragment names an anchor to look for
/// ([`crate::fragment::anchor_of`]) and the URL is within [`MAX_URL`].
pub fn with_fragment(page: &Normal, url: &Url) -> Option<Normal> {
    let fragment = url.fragment()?;
    crate::fragment::anchor_of(fragment)?;
    let url = format!("{}#{fragment}", page.url);
    (url.len() <= MAX_URL).then(|| Normal {
        url,
        host: page.host.clone(),
    })
}

/// `url` as the queue stores it, or why it is not a site to check.
pub fn normalize(mut url: Url) -> Result<Normal, &'static str> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err("not http or https");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("a user name or password");
    }
    url.set_fragment(None);
    let host = match url.host() {
        Some(Host::Domain(domain)) => {
            let domain = domain.strip_suffix('.').unwrap_or(domain).to_owned();
            if domain.len() > 253 || domain.split('.').any(|l| l.is_empty() || l.len() > 63) {
                return Err("not a host name dns could resolve");
            }
            if url.host_str() != Some(domain.as_str()) {
                url.set_host(Some(&domain)).map_err(|_| "bad host")?;
            }
            domain
        }
        Some(_) => url.host_str().unwrap_or_default().to_owned(),
        None => return Err("no host"),
    };
    if url.as_str().len() > MAX_URL {
        return Err("longer than 8 KiB");
    }
    Ok(Normal {
        url: url.into(),
        host,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(base: &str, link: &str) -> Option<String> {
        let url = resolve(&Url::parse(base).unwrap(), link)?;
        normalize(url).ok().map(|n| n.url)
    }

    #[test]
    fn links_resolve_as_a_browser_resolves_them() {
        let page = "http://a.example/docs/guide/page.html?x=1";
        assert_eq!(
            link(page, "other.html").unwrap(),
            "http://a.example/docs/guide/other.html"
        );
        assert_eq!(
            link(page, "../up.html#s").unwrap(),
            "http://a.example/docs/up.html"
        );
        assert_eq!(link(page, "/root").unwrap(), "http://a.example/root");
        assert_eq!(
            link(page, "?y=2").unwrap(),
            "http://a.example/docs/guide/page.html?y=2"
        );
        assert_eq!(link(page, "//B.Example./x").unwrap(), "http://b.example/x");
        assert_eq!(
            link(page, "HTTPS://a.example:443/").unwrap(),
            "https://a.example/"
        );
    }

    #[test]
    fn a_fragment_row_is_its_pages_url_and_its_fragment() {
        let base = Url::parse("http://A.example/d/p.html").unwrap();
        let url = resolve_with_fragment(&base, "#S%C3%A9c").unwrap();
        let page = normalize(url.clone()).unwrap();
        assert_eq!(page.url, "http://a.example/d/p.html");
        let row = with_fragment(&page, &url).unwrap();
        assert_eq!(row.url, "http://a.example/d/p.html#S%C3%A9c");
        assert_eq!(row.host, "a.example");
        for always in ["#", "#top", "#:~:text=x"] {
            assert_eq!(resolve_with_fragment(&base, always), None, "{always}");
        }
        let text = resolve_with_fragment(&base, "q.html#:~:text=x").unwrap();
        assert_eq!(
            with_fragment(&normalize(text.clone()).unwrap(), &text),
            None
        );
    }

    #[test]
    fn what_is_not_a_site_to_check_is_left_out() {
        let page = "http://a.example/";
        for skipped in [
            "#top",
            "",
            "  ",
            "mailto:x@a.example",
            "javascript:void(0)",
            "tel:1",
            "data:text/plain,x",
            "http://user:pw@a.example/",
            "ftp://a.example/f",
        ] {
            assert_eq!(link(page, skipped), None, "{skipped:?}");
        }
    }
}
