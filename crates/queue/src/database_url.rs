//! A database URL: [`DatabaseUrl`] never prints its password, and is checked before connecting:
//! a URL that cannot work is a usage error naming the problem (not a refused connection, nor a
//! wait for a migration lock that never comes), and the message never quotes the URL, which may
//! hold a password.

use std::fmt;
use std::str::FromStr;

use crate::dialect::Dialect;

/// The default database: a SQLite file in the working directory, so that a newcomer gets a full
/// crawl with no server.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://crawler.db";

/// A database URL. It may hold a password, so it never prints: `Debug` and `Display` show
/// [`DatabaseUrl::redacted`], and only [`DatabaseUrl::expose`] gives the real text.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl(String);

impl DatabaseUrl {
    pub fn new(url: impl Into<String>) -> Self {
        DatabaseUrl(url.into())
    }

    /// The URL with its password, for connecting only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The URL without password or query, fit for logs and errors:
    /// `mysql://crawler@db.example:3306/crawler`.
    pub fn redacted(&self) -> String {
        match url::Url::parse(&self.0) {
            Ok(mut url) if url.has_host() => {
                let _ = url.set_password(None);
                url.set_query(None);
                url.to_string()
            }
            // sqlite://file.db has no host: show the path, which is no secret.
            Ok(url) if url.scheme() == "sqlite" => self.0.split('?').next().unwrap_or("").into(),
            _ => "<unparsable database url>".into(),
        }
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseUrl({})", self.redacted())
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl FromStr for DatabaseUrl {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(DatabaseUrl(s.to_owned()))
    }
}

/// The forms a database URL takes, for messages.
const FORMS: &str = "mysql://USER:PASSWORD@HOST:PORT/DATABASE, \
                     postgres://USER:PASSWORD@HOST:PORT/DATABASE or sqlite://PATH";

/// Why a database URL cannot work. No variant holds the URL's text: it may hold a password.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadDatabaseUrl {
    #[error("the database url has no scheme: expected {FORMS}")]
    NoScheme,
    #[error("the database url's scheme \"{0}\" is not mysql, mariadb, postgres, postgresql or sqlite: expected {FORMS}")]
    Scheme(String),
    #[error("the database url is malformed ({0}): expected {FORMS}")]
    Malformed(url::ParseError),
    #[error("the database url names no host: expected {FORMS}")]
    NoHost,
    #[error("the database url names no database: expected {FORMS}")]
    NoDatabase,
    /// What follows the host is not one name: most likely a password holding `/`, `@`, `?` or
    /// `#` unencoded, cut in two by the parser.
    #[error(
        "the database url has more than a database name after the host: \
         percent-encode / @ ? # in the password as %2F %40 %3F %23"
    )]
    AfterDatabase,
    #[error("the database url names no file: expected sqlite://PATH")]
    NoFile,
}

impl DatabaseUrl {
    /// Which database this URL is for, or why it cannot work; checked before connecting.
    pub fn dialect(&self) -> Result<Dialect, BadDatabaseUrl> {
        let raw = self.expose();
        let scheme = raw
            .split_once(':')
            .map(|(scheme, _)| scheme)
            .filter(|scheme| is_scheme(scheme))
            .ok_or(BadDatabaseUrl::NoScheme)?;
        match scheme.to_ascii_lowercase().as_str() {
            "mysql" | "mariadb" => check_server(raw).map(|()| Dialect::MySql),
            "postgres" | "postgresql" => check_server(raw).map(|()| Dialect::Postgres),
            "sqlite" => check_sqlite(self.after_scheme()).map(|()| Dialect::Sqlite),
            other => Err(BadDatabaseUrl::Scheme(other.to_owned())),
        }
    }

    /// The URL from the `:` after its scheme on, so that the caller can spell the scheme as its
    /// driver expects (`mariadb:` and `MySQL:` become `mysql:`, `postgresql:` `postgres:`).
    pub(crate) fn after_scheme(&self) -> &str {
        let raw = self.expose();
        &raw[raw.find(':').map_or(0, |colon| colon + 1)..]
    }
}

/// RFC 3986: a letter, then letters, digits, `+`, `-`, `.`.
fn is_scheme(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// A server's URL (MySQL or PostgreSQL): a host, and one database name after it.
fn check_server(raw: &str) -> Result<(), BadDatabaseUrl> {
    let url = url::Url::parse(raw).map_err(BadDatabaseUrl::Malformed)?;
    if url.host_str().unwrap_or_default().is_empty() {
        return Err(BadDatabaseUrl::NoHost);
    }
    let name = url.path().strip_prefix('/').unwrap_or(url.path());
    if name.contains(['/', '@']) || url.fragment().is_some() {
        return Err(BadDatabaseUrl::AfterDatabase);
    }
    if name.is_empty() {
        return Err(BadDatabaseUrl::NoDatabase);
    }
    Ok(())
}

/// `sqlite:PATH`, `sqlite://PATH`, options after `?`: the path must not be empty.
fn check_sqlite(after_scheme: &str) -> Result<(), BadDatabaseUrl> {
    let path = after_scheme.strip_prefix("//").unwrap_or(after_scheme);
    match path.split('?').next() {
        Some(path) if !path.is_empty() => Ok(()),
        _ => Err(BadDatabaseUrl::NoFile),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(url: &str) -> Result<Dialect, BadDatabaseUrl> {
        DatabaseUrl::new(url).dialect()
    }

    #[test]
    fn postgres_urls_pass_under_either_scheme() {
        for url in [
            "postgres://crawler:pw@db.example:5432/crawler",
            "postgresql://crawler:p%2Fw@127.0.0.1/crawl?sslmode=disable",
            "PostgreSQL://db.example/crawler",
        ] {
            assert_eq!(check(url), Ok(Dialect::Postgres), "{url}");
        }
        assert_eq!(
            check("postgres://u:pw@db.example/"),
            Err(BadDatabaseUrl::NoDatabase)
        );
    }

    #[test]
    fn mysql_mariadb_and_sqlite_urls_pass() {
        for url in [
            "mysql://crawler:pw@db.example:3306/crawler",
            "MySQL://db.example/crawler?ssl-mode=disabled",
            "mariadb://crawler:p%2Fw@127.0.0.1/crawl",
            "mysql://crawler:p@w@db.example/crawler",
        ] {
            assert_eq!(check(url), Ok(Dialect::MySql), "{url}");
        }
        for url in [
            "sqlite://crawler.db",
            "sqlite:///tmp/x.db?mode=rwc",
            "sqlite::memory:",
        ] {
            assert_eq!(check(url), Ok(Dialect::Sqlite), "{url}");
        }
    }

    #[test]
    fn other_databases_and_missing_schemes_are_named() {
        assert_eq!(
            check("oracle://u:pw@db/crawl"),
            Err(BadDatabaseUrl::Scheme("oracle".into()))
        );
        assert_eq!(check("crawler.db"), Err(BadDatabaseUrl::NoScheme));
        assert_eq!(check("://x"), Err(BadDatabaseUrl::NoScheme));
    }

    #[test]
    fn a_mysql_url_without_host_or_database_is_refused() {
        assert_eq!(
            check("mysql://u:pw@db.example"),
            Err(BadDatabaseUrl::NoDatabase)
        );
        assert_eq!(
            check("mysql://u:pw@db.example:3306/"),
            Err(BadDatabaseUrl::NoDatabase)
        );
        assert_eq!(check("mysql:///crawl"), Err(BadDatabaseUrl::NoHost));
        assert_eq!(check("mysql:crawl"), Err(BadDatabaseUrl::NoHost));
    }

    #[test]
    fn a_password_cut_by_an_unencoded_character_is_caught() {
        assert_eq!(
            check("mysql://u:12/secret@db.example/crawl"),
            Err(BadDatabaseUrl::AfterDatabase)
        );
        assert_eq!(
            check("mysql://u:12#secret@db.example/crawl"),
            Err(BadDatabaseUrl::AfterDatabase)
        );
        assert!(matches!(
            check("mysql://u:pa/ss@db.example/crawl"),
            Err(BadDatabaseUrl::Malformed(_))
        ));
    }

    #[test]
    fn an_empty_sqlite_path_is_refused() {
        assert_eq!(check("sqlite://"), Err(BadDatabaseUrl::NoFile));
        assert_eq!(check("sqlite:?mode=rwc"), Err(BadDatabaseUrl::NoFile));
    }

    #[test]
    fn messages_never_quote_the_url() {
        for url in [
            "oracle://u:s3cret@db/crawl",
            "postgres://u:s3cret@db",
            "postgresql://u:12/s3cret@db/crawl",
            "mysql://u:s3cret@db",
            "mysql://u:s3cret@[db/crawl",
            "mysql://u:12/s3cret@db/crawl",
        ] {
            let message = check(url).unwrap_err().to_string();
            assert!(!message.contains("s3cret"), "{message}");
        }
    }

    #[test]
    fn redacted_url_has_no_password() {
        let url = DatabaseUrl::new("mysql://crawler:s3cret@db.example:3306/crawler?ssl-mode=off");
        assert_eq!(url.redacted(), "mysql://crawler@db.example:3306/crawler");
        assert!(!format!("{url:?} {url}").contains("s3cret"));
        let url =
            DatabaseUrl::new("postgresql://crawler:s3cret@db.example/crawler?password=s3cret");
        assert_eq!(url.redacted(), "postgresql://crawler@db.example/crawler");
        assert!(!format!("{url:?} {url}").contains("s3cret"));
    }

    #[test]
    fn sqlite_url_shows_its_path() {
        assert_eq!(
            DatabaseUrl::new("sqlite://crawler.db").redacted(),
            "sqlite://crawler.db"
        );
    }
}
