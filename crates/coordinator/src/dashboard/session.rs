//! The session cookie a right login gets: `EXPIRY.ID.MAC`, where EXPIRY is when the session
//! ends (Unix milliseconds, the database's clock), ID a random 128-bit id, and MAC an
//! HMAC-SHA256 of both keyed by the dashboard's token.
//!
//! So the cookie is not the token and does not give it away; nobody without the token can
//! make one, nor move an expiry; every dashboard with the same token accepts it (several
//! behind one address, or one restarted), and a new token ends every session. The server
//! checks the expiry on the database's clock, and a log out lists the id in the database
//! until then (`crawler_queue::Sessions`), so an ended session stays ended in every
//! dashboard, across restarts. The MAC is checked in constant time (`Mac::verify_slice`).

use hmac::{Hmac, Mac};
use hyper::header::{HeaderMap, COOKIE};
use sha2::Sha256;

/// The session cookie's name.
pub const COOKIE_NAME: &str = "crawler_session";

/// What the MAC covers first: a new version ends every session of the old one.
const SESSION_TEXT: &[u8] = b"crawler-dashboard session v2\n";

/// A session: its id and when it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Session {
    id: [u8; 16],
    /// Unix milliseconds, on the database's clock.
    expires_at: i64,
}

impl Session {
    /// A new session, with a random id, that ends at `expires_at`.
    pub fn new(expires_at: i64) -> Session {
        Session {
            id: rand::random(),
            expires_at,
        }
    }

    pub fn id(&self) -> &[u8] {
        &self.id
    }

    pub fn expires_at(&self) -> i64 {
        self.expires_at
    }

    /// The first 8 hex digits of the id, which name the session in the log: enough to tell
    /// sessions apart, and nothing that lets anyone in (the MAC does).
    pub fn short_id(&self) -> String {
        hex(&self.id[..4])
    }

    /// The `Set-Cookie` value of this session under `key`: for this site's pages only
    /// (`SameSite=Strict`), out of the page's scripts' reach (`HttpOnly`), kept by the browser
    /// `max_age_secs`. Not `Secure`: the dashboard speaks plain HTTP (a TLS proxy in front may
    /// add it).
    pub fn set_cookie(&self, key: &[u8], max_age_secs: i64) -> String {
        let value = format!("{}.{}", self.signed_text(), hex(&self.mac(key)));
        format!("{COOKIE_NAME}={value}; Path=/; Max-Age={max_age_secs}; HttpOnly; SameSite=Strict")
    }

    /// The session of a cookie `value`, if it is one made with `key`; whether it has expired
    /// or was ended is for the caller to ask.
    pub fn from_cookie(value: &str, key: &[u8]) -> Option<Session> {
        let mut parts = value.split('.');
        let (expiry, id, mac) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || expiry.len() > 19 {
            return None;
        }
        let session = Session {
            expires_at: expiry.parse().ok()?,
            id: unhex(id)?,
        };
        let mac: [u8; 32] = unhex(mac)?;
        session.mac_of(key).verify_slice(&mac).ok()?;
        Some(session)
    }

    /// The sessions of every `crawler_session` cookie of a request that `key` signed.
    pub fn in_headers<'h>(
        headers: &'h HeaderMap,
        key: &'h [u8],
    ) -> impl Iterator<Item = Session> + 'h {
        cookies(headers)
            .filter(|(name, _)| *name == COOKIE_NAME)
            .filter_map(move |(_, value)| Session::from_cookie(value, key))
    }

    /// What the MAC covers after [`SESSION_TEXT`], as the cookie writes it.
    fn signed_text(&self) -> String {
        format!("{}.{}", self.expires_at, hex(&self.id))
    }

    fn mac_of(&self, key: &[u8]) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("any key length");
        mac.update(SESSION_TEXT);
        mac.update(self.signed_text().as_bytes());
        mac
    }

    fn mac(&self, key: &[u8]) -> [u8; 32] {
        self.mac_of(key).finalize().into_bytes().into()
    }
}

/// The cookie that ends the session in the browser (log out).
pub fn expired_cookie() -> String {
    format!("{COOKIE_NAME}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")
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

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `N` bytes from `2 × N` lowercase hex digits.
fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return None;
    }
    let mut bytes = [0; N];
    for (byte, pair) in bytes.iter_mut().zip(digits.chunks(2)) {
        let pair = std::str::from_utf8(pair).ok()?;
        if pair.bytes().any(|c| c.is_ascii_uppercase()) {
            return None;
        }
        *byte = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    const KEY: &[u8] = b"0123456789abcdef-secret";

    fn value(set_cookie: &str) -> &str {
        let pair = set_cookie.split(';').next().unwrap();
        pair.split_once('=').unwrap().1
    }

    #[test]
    fn a_cookie_names_its_session_under_its_key_only() {
        let session = Session::new(1_900_000_000_000);
        let cookie = session.set_cookie(KEY, 43_200);
        assert_eq!(Session::from_cookie(value(&cookie), KEY), Some(session));
        assert_eq!(
            Session::from_cookie(value(&cookie), b"another-key-0123456"),
            None
        );
        assert!(!cookie.contains(std::str::from_utf8(KEY).unwrap()));
        for attribute in ["Path=/", "Max-Age=43200", "HttpOnly", "SameSite=Strict"] {
            assert!(cookie.contains(&format!("; {attribute}")), "{cookie}");
        }
        assert_ne!(Session::new(1).id(), Session::new(1).id());
    }

    #[test]
    fn a_moved_expiry_or_a_changed_id_breaks_the_mac() {
        let session = Session::new(1_900_000_000_000);
        let cookie = session.set_cookie(KEY, 60);
        let value = value(&cookie);
        let (expiry, rest) = value.split_once('.').unwrap();
        let later = format!("{}.{rest}", expiry.parse::<i64>().unwrap() + 1);
        assert_eq!(Session::from_cookie(&later, KEY), None);
        let parts: Vec<&str> = value.split('.').collect();
        let other_id = format!("{}.{}.{}", parts[0], hex(&[7; 16]), parts[2]);
        assert_eq!(Session::from_cookie(&other_id, KEY), None);
        for broken in [
            "",
            "1.2.3",
            "0123",
            &format!("{value}.x"),
            &value.to_uppercase(),
        ] {
            assert_eq!(Session::from_cookie(broken, KEY), None, "{broken}");
        }
    }

    #[test]
    fn every_cookie_header_is_read() {
        let cookie = Session::new(5).set_cookie(KEY, 60);
        let pair = cookie.split(';').next().unwrap();
        let mut headers = HeaderMap::new();
        headers.append(COOKIE, HeaderValue::from_static("theme=dark"));
        let both = format!("crawler_session=junk; {pair}");
        headers.append(COOKIE, HeaderValue::from_str(&both).unwrap());
        assert_eq!(Session::in_headers(&headers, KEY).count(), 1);
    }
}
