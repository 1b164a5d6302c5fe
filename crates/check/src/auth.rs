//! `--basic-auth` and `--host-header`: credentials for one host, sent to that host alone.

use std::collections::HashMap;
use std::fmt;

use reqwest::header::HeaderMap;
use reqwest::RequestBuilder;
use url::Url;

/// A user and password for one host. The password never prints: `Debug` hides it, and the
/// header reqwest builds from it is marked sensitive.
#[derive(Clone, PartialEq, Eq)]
pub struct BasicAuth {
    user: String,
    password: String,
}

impl BasicAuth {
    pub fn new(user: impl Into<String>, password: impl Into<String>) -> Self {
        BasicAuth {
            user: user.into(),
            password: password.into(),
        }
    }
}

impl fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BasicAuth")
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// Adds the credentials of `url`'s host in `basic_auth` (`--basic-auth`), looked up on every
/// hop, so that a redirect to another host never carries them. A URL with its own user name
/// keeps it: the list gave that one for this very URL (and reqwest would send both). And the
/// headers of that host in `host_headers` (`--host-header`), looked up the same way.
pub(crate) fn authorize(
    mut request: RequestBuilder,
    url: &Url,
    basic_auth: &HashMap<String, BasicAuth>,
    host_headers: &HashMap<String, HeaderMap>,
) -> RequestBuilder {
    let host = url.host_str().unwrap_or_default();
    if let Some(headers) = host_headers.get(host) {
        request = request.headers(headers.clone());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return request;
    }
    match basic_auth.get(host) {
        Some(auth) => request.basic_auth(&auth.user, Some(&auth.password)),
        None => request,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_never_prints() {
        let auth = BasicAuth::new("op", "s3cret");
        let printed = format!("{auth:?}");
        assert!(
            printed.contains("op") && !printed.contains("s3cret"),
            "{printed}"
        );
    }
}
