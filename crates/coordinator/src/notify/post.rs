//! One POST of a digest: JSON, its id as `Idempotency-Key`, signed with
//! `X-Crawler-Signature: sha256=<HMAC-SHA256 of the body>` when there is a secret (as GitHub's
//! webhooks sign theirs), and what the answer means for the next try.
//!
//! The URL and the secret are the receiver's credentials (a Slack webhook URL is one): neither
//! is ever printed. A failure says what happened (no connection, a timeout, the status) and
//! nothing of the URL: reqwest's errors name their URL, so it is taken out of them.

use std::fmt;
use std::time::{Duration, SystemTime};

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The longest `Retry-After` heeded; a receiver asking for more is asked again after this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);

/// Where digests go, and the secret they are signed with. Neither prints.
#[derive(Clone)]
pub struct Receiver {
    url: reqwest::Url,
    secret: Option<String>,
    client: reqwest::Client,
}

impl fmt::Debug for Receiver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Receiver { url: <hidden>, secret: <hidden> }")
    }
}

/// Why a POST was not acknowledged.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// No answer: no connection, a reset, a timeout.
    NoAnswer(String),
    /// Any status but 2xx; with the wait it asked for (429, 503 with `Retry-After`).
    Status(u16, Option<Duration>),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::NoAnswer(why) => write!(f, "no answer: {why}"),
            Refused::Status(status, _) => write!(f, "HTTP {status}"),
        }
    }
}

impl Refused {
    /// The wait the receiver asked for, at most [`MAX_RETRY_AFTER`].
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Refused::Status(_, after) => after.map(|a| a.min(MAX_RETRY_AFTER)),
            Refused::NoAnswer(_) => None,
        }
    }
}

/// `text` is not an http(s) URL; says so without quoting it.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("the notify URL is not an http or https URL (its value is not shown: it is a secret)")]
pub struct BadUrl;

impl Receiver {
    /// A receiver at `url` (http or https), signing with `secret`, each POST given `timeout`.
    pub fn new(url: &str, secret: Option<String>, timeout: Duration) -> Result<Receiver, BadUrl> {
        let url = reqwest::Url::parse(url.trim()).map_err(|_| BadUrl)?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(BadUrl);
        }
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            // A receiver answers where it is asked: the body goes nowhere else.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("crawler/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("a TLS client");
        Ok(Receiver {
            url,
            secret: secret.filter(|s| !s.is_empty()),
            client,
        })
    }

    /// POSTs `body`, digest `id`: acknowledged on a 2xx.
    pub async fn post(&self, id: &str, body: &str) -> Result<(), Refused> {
        let mut request = self
            .client
            .post(self.url.clone())
            .header("content-type", "application/json")
            .header("idempotency-key", id)
            .body(body.to_owned());
        if let Some(secret) = &self.secret {
            request = request.header("x-crawler-signature", signature(secret, body));
        }
        let response = request
            .send()
            .await
            .map_err(|e| Refused::NoAnswer(e.without_url().to_string()))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_after(v, SystemTime::now()));
        Err(Refused::Status(status.as_u16(), after))
    }
}

/// `sha256=` and the hex HMAC-SHA256 of `body` under `secret`.
pub fn signature(secret: &str, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(body.as_bytes());
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256={hex}")
}

/// A `Retry-After` value: seconds, or an HTTP date (RFC 9110), from `now`.
fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_githubs() {
        // GitHub's documented example: secret "It's a Secret to Everybody", payload
        // "Hello, World!".
        assert_eq!(
            signature("It's a Secret to Everybody", "Hello, World!"),
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        );
    }

    #[test]
    fn retry_after_is_seconds_or_a_date_and_is_bounded() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:50:37 GMT", now),
            Some(Duration::from_secs(60))
        );
        assert_eq!(retry_after("soon", now), None);
        let far = Refused::Status(429, Some(Duration::from_secs(86_400)));
        assert_eq!(far.retry_after(), Some(MAX_RETRY_AFTER));
    }

    #[test]
    fn a_bad_url_is_refused_without_being_quoted() {
        for url in [
            "hooks.example/secret-token",
            "ftp://h.example/secret-token",
            "",
        ] {
            let error = Receiver::new(url, None, Duration::from_secs(1)).unwrap_err();
            assert!(!error.to_string().contains("secret-token"));
        }
        let receiver = Receiver::new(
            "https://h.example/secret-token",
            Some("k".into()),
            Duration::from_secs(1),
        )
        .unwrap();
        assert!(!format!("{receiver:?}").contains("secret-token"));
    }
}
