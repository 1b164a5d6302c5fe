//! Who may see the dashboard: anyone (no token, on loopback or with `--no-auth`), or whoever
//! shows its token, as `Authorization: Bearer TOKEN` (scripts, `curl`) or as a session cookie
//! the login form sets (browsers; `session`).
//!
//! The token is compared in constant time, on its SHA-256 digest, so neither the time nor the
//! length of a guess tells how much of it was right. It is never printed: its `Debug` says
//! `Token(..)`.

use std::net::SocketAddr;
use std::path::Path;

use hyper::header::{HeaderMap, AUTHORIZATION};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The shortest token taken: 16 characters, 96 bits or more as `openssl rand -hex 24` makes them.
pub const MIN_TOKEN_LEN: usize = 16;

/// A secret that lets its holder in.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

/// Why a token was refused; the message never quotes it.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the dashboard's token is empty")]
    Empty,
    #[error("the dashboard's token is too short: at least {MIN_TOKEN_LEN} characters (for instance: openssl rand -hex 24)")]
    Short,
    #[error("the dashboard's token has a space or a control character: it must fit in a header")]
    Unprintable,
}

/// Why the dashboard cannot start with the options it was given; no message quotes a token.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error(transparent)]
    Token(#[from] TokenError),
    #[error("cannot read --token-file {path}")]
    TokenFile {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "refusing to serve on {0} without a token: anyone who reaches it would see the crawl. \
         Set CRAWLER_DASHBOARD_TOKEN (or --token-file FILE) to a secret of {MIN_TOKEN_LEN} \
         characters or more (openssl rand -hex 24), listen on 127.0.0.1, or pass --no-auth if \
         a proxy in front authenticates"
    )]
    Exposed(SocketAddr),
}

impl Token {
    /// `text` as a token, without the line end a file adds.
    pub fn new(text: &str) -> Result<Token, TokenError> {
        let text = text.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            Err(TokenError::Empty)
        } else if !text.bytes().all(|b| b.is_ascii_graphic()) {
            Err(TokenError::Unprintable)
        } else if text.len() < MIN_TOKEN_LEN {
            Err(TokenError::Short)
        } else {
            Ok(Token(text.to_owned()))
        }
    }
}

/// The dashboard's door.
#[derive(Clone)]
pub enum Access {
    /// Every request is answered.
    Open,
    /// Only requests that show the token or a session cookie signed with it.
    Token(Token),
}

/// What a request's `Authorization` header shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bearer {
    /// No bearer token.
    Absent,
    /// The token.
    Right,
    /// Another text: a guess.
    Wrong,
}

/// Never the token.
impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Access::Open => f.write_str("Open"),
            Access::Token(_) => f.write_str("Token(..)"),
        }
    }
}

impl Access {
    /// The door the options ask for: the token given, or the first line of `token_file`;
    /// without either, open on loopback, or beyond it with `no_auth` only.
    pub fn from_options(
        token: Option<&str>,
        token_file: Option<&Path>,
        listen: SocketAddr,
        no_auth: bool,
    ) -> Result<Access, AccessError> {
        let text = match (token, token_file) {
            (Some(token), _) => token.to_owned(),
            (None, Some(path)) => std::fs::read_to_string(path)
                .map_err(|source| AccessError::TokenFile {
                    path: path.display().to_string(),
                    source,
                })?
                .lines()
                .next()
                .unwrap_or("")
                .to_owned(),
            (None, None) if listen.ip().is_loopback() || no_auth => return Ok(Access::Open),
            (None, None) => return Err(AccessError::Exposed(listen)),
        };
        Ok(Access::with_token(Token::new(&text)?))
    }

    pub fn with_token(token: Token) -> Access {
        Access::Token(token)
    }

    pub fn is_open(&self) -> bool {
        matches!(self, Access::Open)
    }

    /// The key session cookies are signed with (the token), if the dashboard has one.
    pub fn key(&self) -> Option<&[u8]> {
        match self {
            Access::Open => None,
            Access::Token(token) => Some(token.0.as_bytes()),
        }
    }

    /// What the bearer tokens of a request with these headers show: the token if any of them
    /// is it.
    pub fn bearer(&self, headers: &HeaderMap) -> Bearer {
        let Access::Token(token) = self else {
            return Bearer::Absent;
        };
        let mut shown = Bearer::Absent;
        for given in headers
            .get_all(AUTHORIZATION)
            .iter()
            .filter_map(|v| bearer(v.to_str().ok()?))
        {
            if same(given.trim(), &token.0) {
                return Bearer::Right;
            }
            shown = Bearer::Wrong;
        }
        shown
    }

    /// Whether `given`, typed in the login form, is the token.
    pub fn is_token(&self, given: &str) -> bool {
        match self {
            Access::Open => true,
            Access::Token(token) => same(given.trim(), &token.0),
        }
    }
}

/// The credentials of an `Authorization: Bearer …` value (the scheme in any case, as RFC 9110
/// has it).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, credentials) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(credentials)
}

/// Whether `a` and `b` are equal, in a time that tells nothing of where they differ or of
/// how long the secret is: their digests are compared, in constant time.
fn same(a: &str, b: &str) -> bool {
    Sha256::digest(a).ct_eq(&Sha256::digest(b)).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    const SECRET: &str = "0123456789abcdef-secret";

    fn headers(name: hyper::header::HeaderName, value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_str(value).unwrap());
        headers
    }

    fn access() -> Access {
        Access::with_token(Token::new(SECRET).unwrap())
    }

    #[test]
    fn only_the_token_as_a_bearer_is_right() {
        let access = access();
        let bearer = |value: &str| access.bearer(&headers(AUTHORIZATION, value));
        assert_eq!(bearer(&format!("Bearer {SECRET}")), Bearer::Right);
        assert_eq!(bearer(&format!("bearer  {SECRET} ")), Bearer::Right);
        assert_eq!(bearer("Bearer 0123456789abcdef-secreT"), Bearer::Wrong);
        assert_eq!(bearer(&format!("Basic {SECRET}")), Bearer::Absent);
        assert_eq!(access.bearer(&HeaderMap::new()), Bearer::Absent);
        let mut two = headers(AUTHORIZATION, "Bearer wrong-guess-0123456789");
        two.append(AUTHORIZATION, format!("Bearer {SECRET}").parse().unwrap());
        assert_eq!(access.bearer(&two), Bearer::Right);
        assert_eq!(Access::Open.bearer(&two), Bearer::Absent);
        assert!(access.is_token(SECRET) && !access.is_token("x") && Access::Open.is_token(""));
        assert_eq!(access.key(), Some(SECRET.as_bytes()));
    }

    #[test]
    fn without_a_token_only_loopback_is_served_unless_no_auth() {
        let at = |addr: &str| addr.parse::<SocketAddr>().unwrap();
        for open in ["127.0.0.1:8080", "[::1]:8080"] {
            assert!(Access::from_options(None, None, at(open), false)
                .unwrap()
                .is_open());
        }
        for exposed in ["0.0.0.0:8080", "[::]:8080", "192.0.2.7:80"] {
            let error = Access::from_options(None, None, at(exposed), false).unwrap_err();
            assert!(matches!(error, AccessError::Exposed(_)), "{error}");
            assert!(Access::from_options(None, None, at(exposed), true)
                .unwrap()
                .is_open());
        }
        let with = Access::from_options(Some(SECRET), None, at("0.0.0.0:80"), false).unwrap();
        assert!(!with.is_open());
    }

    #[test]
    fn a_token_is_long_printable_and_never_printed() {
        assert_eq!(Token::new("").unwrap_err(), TokenError::Empty);
        assert_eq!(Token::new("\n").unwrap_err(), TokenError::Empty);
        assert_eq!(Token::new("short").unwrap_err(), TokenError::Short);
        assert_eq!(
            Token::new("with a space in it, long").unwrap_err(),
            TokenError::Unprintable
        );
        let token = Token::new(&format!("{SECRET}\n")).unwrap();
        assert_eq!(format!("{token:?}"), "Token(..)");
        assert!(!format!("{:?}", Access::with_token(token)).contains(SECRET));
        assert!(!TokenError::Short.to_string().contains(SECRET));
    }
}
