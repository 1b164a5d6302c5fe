//! `--host HOST[:PORT]`: the sites of one host, all of them or only those on one port.
//!
//! Sites store their host without its port (politeness is per host), and their URL as the seed
//! normalized it, which leaves out the scheme's default port. So the host is matched on the
//! `host` column, and a port on the URL's beginning: port P of host H is `http://H:P/` or
//! `https://H:P/`, written `http://H/` when P is 80 and `https://H/` when it is 443, as the seed
//! writes them. `SUBSTR(url, 1, ?) = ?` rather than `LIKE`: nothing to escape, and the same SQL
//! on both backends.

use sqlx::query::QueryAs;
use sqlx::{Database, Encode, Type};

/// The sites of one host, as `--host` names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFilter {
    /// As sites store it: normalized, without port.
    host: String,
    /// The port asked for, if any.
    port: Option<u16>,
    /// How the URLs on that port begin, one per scheme; empty when any port will do.
    prefixes: Vec<String>,
}

impl HostFilter {
    /// The sites of `host` (normalized, without port), only those on `port` if given.
    pub fn new(host: impl Into<String>, port: Option<u16>) -> HostFilter {
        let host = host.into();
        let prefixes = port.map_or_else(Vec::new, |port| {
            [("http", 80), ("https", 443)]
                .into_iter()
                .map(|(scheme, default)| {
                    if port == default {
                        format!("{scheme}://{host}/")
                    } else {
                        format!("{scheme}://{host}:{port}/")
                    }
                })
                .collect()
        });
        HostFilter {
            host,
            port,
            prefixes,
        }
    }

    /// The host, normalized, without port.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port asked for, if any.
    pub fn port(&self) -> Option<u16> {
        self.port
    }
}

/// What shapes a filter's [`condition`]: none (`None`), or how many URL prefixes it compares.
pub(crate) type Shape = Option<usize>;

/// The [`Shape`] of `filter`'s condition.
pub(crate) fn shape(filter: Option<&HostFilter>) -> Shape {
    filter.map(|f| f.prefixes.len())
}

/// The condition that keeps the sites a filter of `shape` names, to follow a `WHERE …`
/// (nothing when there is no filter); [`bind`] binds its values.
pub(crate) fn condition(shape: Shape) -> String {
    let Some(prefixes) = shape else {
        return String::new();
    };
    let prefixes = vec!["SUBSTR(url, 1, ?) = ?"; prefixes];
    if prefixes.is_empty() {
        "AND host = ?".into()
    } else {
        format!("AND host = ? AND ({})", prefixes.join(" OR "))
    }
}

/// Binds what [`condition`] asks for.
pub(crate) fn bind<'q, DB: Database, O>(
    mut q: QueryAs<'q, DB, O, <DB as Database>::Arguments<'q>>,
    filter: Option<&'q HostFilter>,
) -> QueryAs<'q, DB, O, <DB as Database>::Arguments<'q>>
where
    &'q str: Encode<'q, DB> + Type<DB>,
    i32: Encode<'q, DB> + Type<DB>,
{
    if let Some(filter) = filter {
        q = q.bind(filter.host.as_str());
        for prefix in &filter.prefixes {
            // An INTEGER: PostgreSQL has no SUBSTR taking a BIGINT length.
            let length = i32::try_from(prefix.len()).unwrap_or(i32::MAX);
            q = q.bind(length).bind(prefix.as_str());
        }
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_is_matched_on_how_the_seed_writes_urls_on_it() {
        let on = |port| HostFilter::new("a.example", Some(port)).prefixes;
        assert_eq!(
            on(8080),
            ["http://a.example:8080/", "https://a.example:8080/"]
        );
        assert_eq!(on(443), ["http://a.example:443/", "https://a.example/"]);
        assert_eq!(on(80), ["http://a.example/", "https://a.example:80/"]);
        assert_eq!(
            HostFilter::new("[::1]", Some(8443)).prefixes,
            ["http://[::1]:8443/", "https://[::1]:8443/"]
        );
    }

    #[test]
    fn without_a_port_only_the_host_is_compared() {
        assert_eq!(condition(shape(None)), "");
        let host = HostFilter::new("a.example", None);
        assert_eq!(condition(shape(Some(&host))), "AND host = ?");
        let port = HostFilter::new("a.example", Some(8080));
        assert_eq!(
            condition(shape(Some(&port))),
            "AND host = ? AND (SUBSTR(url, 1, ?) = ? OR SUBSTR(url, 1, ?) = ?)"
        );
    }
}
