//! Who may see the dashboard: anyone (no token, on loopback or with `--no-auth`), or whoever
//! shows its token, as `Authorization: Bearer TOKEN` (scripts, `curl`) or as the session
//! cookie the login form sets (browsers).
//!
//! The cookie is not the token: it is an HMAC-SHA256 of a fixed text keyed by the token, so a
//! cookie read off a browser does not give the token away, every dashboard that has the same
//! token accepts it (several behind one address, or one restarted), and a new token ends every
//! session. Both are compared in constant time, on their SHA-256 digests, so neither the time
//! nor the length of a guess tells how much of it was right. The token is never printed: its
//! `Debug` says `Token(..)`.

use std::net::SocketAddr;
use std::path::Path;

use hmac::{Hmac, Mac};
use hyper::header::{HeaderMap, AUTHORIZATION, COOKIE};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The session cookie's name.
pub const COOKIE_NAME: &str = "crawler_session";

/// The shortest token taken: 16 characters, 96 bits or more as `openssl rand -hex 24` makes them.
pub const MIN_TOKEN_LEN: usize = 16;

/// The text the session cookie is the HMAC of; a new version would end every session.
const SESSION_TEXT: &[u8] = b"crawler-dashboard session v1";

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
    /// Only requests that show the token or its session cookie.
    Token { token: Token, session: String },
}

/// Neither the token nor the session: the cookie lets in as the token does.
impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Access::Open => f.write_str("Open"),
            Access::Token { .. } => f.write_str("Token(..)"),
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
        let mut mac = Hmac::<Sha256>::new_from_slice(token.0.as_bytes()).expect("any key length");
        mac.update(SESSION_TEXT);
        let session = hex(&mac.finalize().into_bytes());
        Access::Token { token, session }
    }

    pub fn is_open(&self) -> bool {
        matches!(self, Access::Open)
    }

    /// Whether a request with these headers may be answered.
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        let Access::Token { token, session } = self else {
            return true;
        };
        let bearer = headers
            .get_all(AUTHORIZATION)
            .iter()
            .filter_map(|v| bearer(v.to_str().ok()?))
            .any(|given| same(given.trim(), &token.0));
        bearer || cookies(headers).any(|(name, value)| name == COOKIE_NAME && same(value, session))
    }

    /// Whether `given`, typed in the login form, is the token.
    pub fn is_token(&self, given: &str) -> bool {
        match self {
            Access::Open => true,
            Access::Token { token, .. } => same(given.trim(), &token.0),
        }
    }

    /// The `Set-Cookie` value a right login gets: the session, for this site's pages only
    /// (`SameSite=Strict`), out of the page's scripts' reach (`HttpOnly`), until the browser
    /// closes. Not `Secure`: the dashboard speaks plain HTTP (a TLS proxy in front may add it).
    pub fn session_cookie(&self) -> Option<String> {
        match self {
            Access::Open => None,
            Access::Token { session, .. } => Some(format!(
                "{COOKIE_NAME}={session}; Path=/; HttpOnly; SameSite=Strict"
            )),
        }
    }
}

/// The cookie that ends the session (log out).
pub fn expired_cookie() -> String {
    format!("{COOKIE_NAME}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")
}

/// The credentials of an `Authorization: Bearer …` value (the scheme in any case, as RFC 9110
/// has it).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, credentials) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(credentials)
}

/// The `name=value` pairs of every `Cookie` header.
fn cookies(headers: &HeaderMap) -> impl Iterator<Item = (&str, &str)> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
}

/// Whether `a` and `b` are equal, in a time that tells nothing of where they differ or of
/// how long the secret is: their digests are compared, in constant time.
fn same(a: &str, b: &str) -> bool {
    Sha256::digest(a).ct_eq(&Sha256::digest(b)).into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
    fn the_token_or_its_session_cookie_lets_in_and_nothing_else() {
        let access = access();
        let bearer = format!("Bearer {SECRET}");
        assert!(access.admits(&headers(AUTHORIZATION, &bearer)));
        let lower = format!("bearer {SECRET}");
        assert!(access.admits(&headers(AUTHORIZATION, &lower)));
        assert!(!access.admits(&headers(AUTHORIZATION, "Bearer 0123456789abcdef-secreT")));
        assert!(!access.admits(&headers(AUTHORIZATION, &format!("Basic {SECRET}"))));
        assert!(!access.admits(&HeaderMap::new()));
        let cookie = access.session_cookie().unwrap();
        let pair = cookie.split(';').next().unwrap();
        assert!(access.admits(&headers(COOKIE, &format!("theme=dark; {pair}"))));
        assert!(!access.admits(&headers(COOKIE, &format!("{COOKIE_NAME}={SECRET}"))));
        assert!(Access::Open.admits(&HeaderMap::new()));
    }

    #[test]
    fn the_session_cookie_is_http_only_strict_and_not_the_token() {
        let cookie = access().session_cookie().unwrap();
        assert!(cookie.contains("; HttpOnly") && cookie.contains("; SameSite=Strict"));
        assert!(!cookie.contains(SECRET));
        let other = Access::with_token(Token::new("another-token-0123456789").unwrap());
        assert_ne!(other.session_cookie(), Some(cookie));
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
