//! The dashboard's HTTP routes: the page and its assets (embedded in the binary), the JSON it
//! polls, the two control endpoints, and the login form's.
//!
//! With a token ([`Access`]), every route but `POST /login` and `/logout` answers 401 to a
//! request that shows neither the token nor the session cookie: a page with the login form,
//! an API call with a line that says what to send.
//!
//! | route | |
//! |---|---|
//! | `POST /login` | `token=…` (the form): the session cookie and back to `/`, or 401 |
//! | `POST /logout` | the session cookie expired, and back to `/` |
//! | `GET /`, `/app.js`, `/style.css` | the page |
//! | `GET /api/state` | [`Snapshot`]: totals, plot, workers, hosts in backoff, paused |
//! | `GET /api/dead?q=TEXT&limit=N` | the latest dead sites whose URL contains TEXT |
//! | `GET /api/history?range=SECONDS` | [`Plot`]: verdicts and checks per worker over time (0: all) |
//! | `POST /api/pause`, `/api/resume` | with `--allow-control` only (403 otherwise) |
//!
//! A control request must carry `X-Crawler-Control: 1`: a page of another site open in the
//! same browser can make it POST a form to the dashboard, but not with a header of its own
//! (that needs a CORS preflight, which is never answered).

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Body;
use hyper::header::{
    HeaderValue, CACHE_CONTROL, CONTENT_TYPE, LOCATION, SET_COOKIE, WWW_AUTHENTICATE,
};
use hyper::{Method, Request, Response, StatusCode};
use serde::Serialize;

use super::auth::expired_cookie;
use super::history::range_query;
#[cfg(doc)]
use super::history::Plot;
use super::snapshot::{latest_dead, Snapshot};
use super::Dashboard;

const INDEX: &str = include_str!("assets/index.html");
const LOGIN: &str = include_str!("assets/login.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/style.css");

/// The header a control request must carry.
pub const CONTROL_HEADER: &str = "x-crawler-control";

/// The dead sites listed when the page does not say how many.
const DEAD_LIMIT: u32 = 50;

pub type Reply = Response<Full<Bytes>>;

/// The login form's body read at most: a token is far shorter.
const LOGIN_BODY: usize = 4096;

/// Answers one request.
pub async fn route<B>(dashboard: &Dashboard, req: Request<B>) -> Reply
where
    B: Body<Data = Bytes>,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    match (req.method(), req.uri().path()) {
        (&Method::POST, "/login") => return login(dashboard, req).await,
        (&Method::POST, "/logout") => return see_other(expired_cookie()),
        (_, "/login" | "/logout") => return text(StatusCode::METHOD_NOT_ALLOWED, "use POST"),
        _ => {}
    }
    if !dashboard.access.admits(req.headers()) {
        return unauthorized(req.uri().path(), "");
    }
    let path = req.uri().path();
    match (req.method(), path) {
        (&Method::GET, "/") => asset(INDEX, "text/html; charset=utf-8"),
        (&Method::GET, "/app.js") => asset(SCRIPT, "text/javascript; charset=utf-8"),
        (&Method::GET, "/style.css") => asset(STYLE, "text/css; charset=utf-8"),
        (&Method::GET, "/api/state") => {
            let snapshot = Snapshot::read(
                &dashboard.queue,
                &dashboard.counts,
                dashboard.allow_control,
                !dashboard.access.is_open(),
            )
            .await;
            json_or_error(snapshot)
        }
        (&Method::GET, "/api/dead") => {
            let (text, limit) = dead_query(req.uri().query().unwrap_or(""));
            json_or_error(latest_dead(dashboard.queue.reports(), &text, limit).await)
        }
        (&Method::GET, "/api/history") => {
            let range = range_query(req.uri().query().unwrap_or(""));
            match dashboard.history.plot(&dashboard.queue, range).await {
                Ok(json) => reply(StatusCode::OK, json, "application/json"),
                Err(error) => json_or_error::<()>(Err(error)),
            }
        }
        (&Method::POST, "/api/pause") => control(dashboard, &req, true).await,
        (&Method::POST, "/api/resume") => control(dashboard, &req, false).await,
        (_, "/" | "/app.js" | "/style.css" | "/api/state" | "/api/dead" | "/api/history") => {
            text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed")
        }
        (_, "/api/pause" | "/api/resume") => text(StatusCode::METHOD_NOT_ALLOWED, "use POST"),
        _ => text(StatusCode::NOT_FOUND, "not found"),
    }
}

/// Checks the login form's token: right, the session cookie and back to the page; wrong,
/// the form again, with 401.
async fn login<B>(dashboard: &Dashboard, req: Request<B>) -> Reply
where
    B: Body<Data = Bytes>,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let Ok(body) = Limited::new(req.into_body(), LOGIN_BODY).collect().await else {
        return text(StatusCode::PAYLOAD_TOO_LARGE, "the login form is too large");
    };
    let body = body.to_bytes();
    let given = url::form_urlencoded::parse(&body)
        .find(|(key, _)| key == "token")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default();
    match dashboard.access.session_cookie() {
        Some(cookie) if dashboard.access.is_token(&given) => see_other(cookie),
        Some(_) => unauthorized("/", "wrong token"),
        None => see_other(String::new()),
    }
}

/// 401: the login form for a page, a line saying what to send for the API.
fn unauthorized(path: &str, message: &str) -> Reply {
    let mut response = if path.starts_with("/api/") {
        text(
            StatusCode::UNAUTHORIZED,
            "this dashboard asks for its token: send Authorization: Bearer TOKEN, or log in at /",
        )
    } else {
        let page = LOGIN.replace("<!--message-->", message);
        reply(StatusCode::UNAUTHORIZED, page, "text/html; charset=utf-8")
    };
    response.headers_mut().insert(
        WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"crawler-dashboard\""),
    );
    response
}

/// 303 to the page, setting `cookie` unless it is empty.
fn see_other(cookie: String) -> Reply {
    let mut response = reply(StatusCode::SEE_OTHER, "", "text/plain; charset=utf-8");
    let headers = response.headers_mut();
    headers.insert(LOCATION, HeaderValue::from_static("/"));
    if let Ok(cookie) = HeaderValue::from_str(&cookie) {
        if !cookie.is_empty() {
            headers.insert(SET_COOKIE, cookie);
        }
    }
    response
}

/// `q` (the text to search for, empty for any) and `limit` from a query string.
fn dead_query(query: &str) -> (String, u32) {
    let mut text = String::new();
    let mut limit = DEAD_LIMIT;
    for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
        match &*key {
            "q" => text = value.into_owned(),
            "limit" => limit = value.parse().unwrap_or(DEAD_LIMIT),
            _ => {}
        }
    }
    (text, limit)
}

/// Pauses or resumes the fleet, if the dashboard allows it and the request says it means to.
async fn control<B>(dashboard: &Dashboard, req: &Request<B>, pause: bool) -> Reply {
    if !dashboard.allow_control {
        return text(
            StatusCode::FORBIDDEN,
            "this dashboard is read-only: start it with --allow-control",
        );
    }
    if req.headers().get(CONTROL_HEADER) != Some(&HeaderValue::from_static("1")) {
        return text(
            StatusCode::FORBIDDEN,
            "a control request needs X-Crawler-Control: 1",
        );
    }
    let result = crate::control::set_paused(&dashboard.queue, pause).await;
    if let Ok(line) = &result {
        tracing::info!("{line} (from the dashboard)");
    }
    json_or_error(result.map(|line| Control {
        paused: pause,
        message: line,
    }))
}

#[derive(Serialize)]
struct Control {
    paused: bool,
    message: String,
}

fn json_or_error<T: Serialize>(value: Result<T, crate::Error>) -> Reply {
    match value.map(|v| serde_json::to_vec(&v)) {
        Ok(Ok(body)) => reply(StatusCode::OK, body, "application/json"),
        Ok(Err(error)) => text(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()),
        Err(error) => {
            let message = crate::chain(&error);
            tracing::warn!(error = %message, "cannot read the database for the dashboard");
            text(StatusCode::SERVICE_UNAVAILABLE, &message)
        }
    }
}

fn asset(body: &'static str, content_type: &'static str) -> Reply {
    reply(StatusCode::OK, body, content_type)
}

fn text(status: StatusCode, message: &str) -> Reply {
    reply(status, format!("{message}\n"), "text/plain; charset=utf-8")
}

/// A response that no cache keeps (the page is live), no frame shows (its buttons could be
/// clicked through another page), and no browser sniffs as another type.
fn reply(status: StatusCode, body: impl Into<Bytes>, content_type: &'static str) -> Reply {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    headers.insert(
        "content-security-policy",
        HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dead_query_reads_the_text_and_a_limit() {
        assert_eq!(dead_query("q=%2Fdead%2F+x&limit=7"), ("/dead/ x".into(), 7));
        assert_eq!(dead_query(""), (String::new(), DEAD_LIMIT));
        assert_eq!(dead_query("limit=lots"), (String::new(), DEAD_LIMIT));
    }
}
