//! The dashboard's answers, every one with the same guards: no cache keeps it (the page is
//! live), no frame shows it (its buttons could be clicked through another page), no browser
//! sniffs it as another type, no link from it tells another site where it came from, and its
//! policy lets the page load, post forms to and set its base to nothing but the dashboard.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{
    HeaderName, HeaderValue, ALLOW, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION,
    REFERRER_POLICY, RETRY_AFTER, SET_COOKIE, WWW_AUTHENTICATE, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use hyper::{Response, StatusCode};
use serde::Serialize;

pub type Reply = Response<Full<Bytes>>;

/// The page a browser without a session gets instead of the dashboard.
const LOGIN: &str = include_str!("assets/login.html");

/// The policy of every answer: the page's script and style come from the dashboard, its forms
/// post to it only, a `<base>` cannot move its links, no page may frame it.
const POLICY: &str =
    "default-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The headers every answer carries.
const GUARDS: [(HeaderName, &str); 5] = [
    (CACHE_CONTROL, "no-store"),
    (X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (X_FRAME_OPTIONS, "DENY"),
    (REFERRER_POLICY, "no-referrer"),
    (CONTENT_SECURITY_POLICY, POLICY),
];

/// An answer with `status`, `body` of `content_type`, and the guards.
pub fn reply(status: StatusCode, body: impl Into<Bytes>, content_type: &'static str) -> Reply {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    for (name, value) in GUARDS {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

pub fn text(status: StatusCode, message: &str) -> Reply {
    reply(status, format!("{message}\n"), "text/plain; charset=utf-8")
}

pub fn json<T: Serialize>(value: &T) -> Reply {
    match serde_json::to_vec(value) {
        Ok(body) => reply(StatusCode::OK, body, "application/json"),
        Err(error) => text(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()),
    }
}

pub fn json_or_error<T: Serialize>(value: Result<T, crate::error::Error>) -> Reply {
    match value {
        Ok(value) => json(&value),
        Err(error) => unavailable(&error),
    }
}

/// 503: the database did not answer; logged.
pub fn unavailable(error: &crate::error::Error) -> Reply {
    let message = crate::error::chain(error);
    tracing::warn!(error = %message, "cannot read the database for the dashboard");
    text(StatusCode::SERVICE_UNAVAILABLE, &message)
}

/// `response`, with `Retry-After`: `wait` in whole seconds (at least one).
pub fn retry_after(mut response: Reply, wait: Duration) -> Reply {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(secs.max(1)));
    response
}

/// 405, with the methods the route answers.
pub fn method_not_allowed(allow: &'static str) -> Reply {
    let mut response = text(StatusCode::METHOD_NOT_ALLOWED, &format!("use {allow}"));
    response
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    response
}

/// 401: the login form for a page (saying `message`), a line saying what to send for the API.
pub fn unauthorized(path: &str, message: &str) -> Reply {
    let mut response = if path.starts_with("/api/") {
        text(
            StatusCode::UNAUTHORIZED,
            "this dashboard asks for its token: send Authorization: Bearer TOKEN, or log in at /",
        )
    } else {
        login_page(StatusCode::UNAUTHORIZED, message)
    };
    response.headers_mut().insert(
        WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"crawler-dashboard\""),
    );
    response
}

/// The login form, with `message` under it.
pub fn login_page(status: StatusCode, message: &str) -> Reply {
    let page = LOGIN.replace("<!--message-->", message);
    reply(status, page, "text/html; charset=utf-8")
}

/// 303 to the page, setting `cookie` if any.
pub fn see_other(cookie: Option<String>) -> Reply {
    let mut response = reply(StatusCode::SEE_OTHER, "", "text/plain; charset=utf-8");
    let headers = response.headers_mut();
    headers.insert(LOCATION, HeaderValue::from_static("/"));
    if let Some(Ok(cookie)) = cookie.map(HeaderValue::try_from) {
        headers.insert(SET_COOKIE, cookie);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_answer_carries_the_guards() {
        for response in [
            text(StatusCode::NOT_FOUND, "not found"),
            unauthorized("/", ""),
            see_other(None),
            method_not_allowed("POST"),
        ] {
            let headers = response.headers();
            assert_eq!(headers[REFERRER_POLICY], "no-referrer");
            let policy = headers[CONTENT_SECURITY_POLICY].to_str().unwrap();
            for part in [
                "form-action 'self'",
                "base-uri 'none'",
                "frame-ancestors 'none'",
            ] {
                assert!(policy.contains(part), "{policy}");
            }
        }
        let busy = retry_after(see_other(None), Duration::from_millis(1500));
        assert_eq!(busy.headers()[RETRY_AFTER], "2");
    }
}
