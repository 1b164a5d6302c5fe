//! Which links a crawl follows (`--follow-scope`): a link in scope is checked, and if it is an
//! HTML page its links are read too; a link out of scope is only checked.

use url::Url;

/// How a start URL bounds its crawl.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeKind {
    /// The start URL's scheme, host and port (the default): `http://a.example:8080`.
    Origin,
    /// Its host, on any scheme and port.
    Host,
    /// Its host without a leading `www.`, and every subdomain of that: `www.a.example`
    /// covers `a.example`, `docs.a.example`. (By name: no public-suffix list is consulted, so
    /// start from the site's own host, not from a shared suffix.)
    Domain,
    /// URLs that start with the start URL's directory (`http://a.example/docs/` for
    /// `http://a.example/docs/index.html`), as `wget --no-parent`.
    Prefix,
}

impl ScopeKind {
    pub const NAMES: [(&'static str, ScopeKind); 4] = [
        ("origin", ScopeKind::Origin),
        ("host", ScopeKind::Host),
        ("domain", ScopeKind::Domain),
        ("prefix", ScopeKind::Prefix),
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, k)| *k == self)
            .expect("every kind is named")
            .0
    }

    pub fn parse(name: &str) -> Option<ScopeKind> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| *k)
    }
}

/// One start URL's scope: a kind and what it compares with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scope {
    pub kind: ScopeKind,
    /// `scheme://host:port` (origin), the host (host, domain) or a URL prefix.
    pub value: String,
}

impl Scope {
    /// The scope of `kind` around the start URL `start`.
    pub fn of(kind: ScopeKind, start: &Url) -> Scope {
        let host = start.host_str().unwrap_or_default();
        let value = match kind {
            ScopeKind::Origin => origin(start),
            ScopeKind::Host => host.to_owned(),
            ScopeKind::Domain => host.strip_prefix("www.").unwrap_or(host).to_owned(),
            ScopeKind::Prefix => {
                let url = start.as_str();
                let path_start = url.len() - start.path().len() - query_len(start);
                let dir_end = start
                    .path()
                    .rfind('/')
                    .map_or(url.len(), |i| path_start + i + 1);
                url[..dir_end].to_owned()
            }
        };
        Scope { kind, value }
    }

    /// Whether `url` is in this scope.
    pub fn contains(&self, url: &Url) -> bool {
        let host = url.host_str().unwrap_or_default();
        match self.kind {
            ScopeKind::Origin => origin(url) == self.value,
            ScopeKind::Host => host == self.value,
            ScopeKind::Domain => {
                host == self.value
                    || host
                        .strip_suffix(&self.value)
                        .is_some_and(|sub| sub.ends_with('.'))
            }
            ScopeKind::Prefix => url.as_str().starts_with(&self.value),
        }
    }

    /// One line, `KIND VALUE`, as the database keeps a crawl's scopes.
    pub fn to_line(&self) -> String {
        format!("{} {}", self.kind.name(), self.value)
    }

    /// A line of [`Scope::to_line`].
    pub fn from_line(line: &str) -> Option<Scope> {
        let (kind, value) = line.split_once(' ')?;
        Some(Scope {
            kind: ScopeKind::parse(kind)?,
            value: value.to_owned(),
        })
    }
}

fn origin(url: &Url) -> String {
    let port = url.port_or_known_default().unwrap_or(0);
    format!(
        "{}://{}:{port}",
        url.scheme(),
        url.host_str().unwrap_or_default()
    )
}

fn query_len(url: &Url) -> usize {
    url.query().map_or(0, |q| q.len() + 1) + url.fragment().map_or(0, |f| f.len() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(kind: ScopeKind, start: &str) -> Scope {
        Scope::of(kind, &Url::parse(start).unwrap())
    }

    fn has(scope: &Scope, url: &str) -> bool {
        scope.contains(&Url::parse(url).unwrap())
    }

    #[test]
    fn the_origin_is_scheme_host_and_port() {
        let s = scope(ScopeKind::Origin, "http://a.example:8080/docs/");
        assert!(has(&s, "http://a.example:8080/other"));
        assert!(!has(&s, "http://a.example/other"));
        assert!(!has(&s, "https://a.example:8080/"));
        let s = scope(ScopeKind::Origin, "https://a.example/");
        assert!(has(&s, "https://a.example:443/x"));
    }

    #[test]
    fn host_domain_and_prefix_scopes() {
        let host = scope(ScopeKind::Host, "https://a.example/");
        assert!(has(&host, "http://a.example:81/x") && !has(&host, "https://b.a.example/"));
        let domain = scope(ScopeKind::Domain, "https://www.a.example/");
        assert!(has(&domain, "https://a.example/") && has(&domain, "http://docs.a.example/"));
        assert!(!has(&domain, "https://notaa.example/") && !has(&domain, "https://example/"));
        let prefix = scope(ScopeKind::Prefix, "http://a.example/docs/index.html?x=1");
        assert_eq!(prefix.value, "http://a.example/docs/");
        assert!(has(&prefix, "http://a.example/docs/sub/x.html"));
        assert!(!has(&prefix, "http://a.example/blog/"));
    }

    #[test]
    fn a_scope_survives_its_line() {
        let s = scope(ScopeKind::Prefix, "http://a.example/d/");
        assert_eq!(Scope::from_line(&s.to_line()), Some(s));
    }
}
