//! The dashboard's HTTP routes: the page and its assets (embedded in the binary), the JSON it
//! polls, the two control endpoints, and the login form's.
//!
//! | route | |
//! |---|---|
//! | `POST /login` | `token=…` (the form): a session cookie and back to `/`, or 401 |
//! | `POST /logout` | the session ended, its cookie expired, and back to `/` |
//! | `GET /`, `/app.js`, `/style.css` | the page |
//! | `GET /api/state` | [`Snapshot`]: totals, plot, workers, hosts in backoff, paused |
//! | `GET /api/dead?q=TEXT&limit=N` | the latest dead sites whose URL contains TEXT |
//! | `GET /api/history?range=SECONDS` | [`Plot`]: verdicts and checks per worker over time (0: all) |
//! | `GET /api/rot?range=SECONDS` | [`Rot`]: links that broke and recovered over time, the latest changes |
//! | `POST /api/pause`, `/api/resume` | with `--allow-control` only (403 otherwise) |
//!
//! HEAD is answered wherever GET is. Before any route, a request must name this dashboard in
//! `Host` (421 otherwise), and one that changes something must come from its own pages when a
//! browser says where it comes from (403; `origin`). Then, with a token, every route but the
//! login form's answers 401 to a request that shows neither the token nor a live session
//! (`gate`): a page with the login form, an API call with a line that says what to send.
//!
//! A control request must also carry `X-Crawler-Control: 1`: a page of another site open in
//! the same browser can make it POST a form to the dashboard, but not with a header of its own
//! (that needs a CORS preflight, which is never answered). A route is a line of [`ROUTES`] and
//! an arm of [`serve`].

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::Body;
use hyper::header::HeaderValue;
use hyper::{Method, Request, StatusCode};
use serde::Serialize;

use super::client::ClientKey;
use super::gate::{admit, Caller, Refused};
use super::history::range_query;
#[cfg(doc)]
use super::history::Plot;
use super::login::{login, logout};
use super::origin::same_origin;
use super::reply::{
    json, json_or_error, method_not_allowed, reply, retry_after, text, unauthorized, unavailable,
    Reply,
};
#[cfg(doc)]
use super::rot::Rot;
use super::searches::Busy;
use super::shared::Dashboard;
use super::snapshot::{latest_dead, Snapshot};

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/style.css");

/// The header a control request must carry.
pub const CONTROL_HEADER: &str = "x-crawler-control";

/// The dead sites listed when the page does not say how many.
const DEAD_LIMIT: u32 = 50;

/// When a client refused for a busy search may ask again: the page asks at its next poll.
const SEARCH_RETRY: Duration = Duration::from_secs(1);

/// What a route answers to: reads (GET, and HEAD, its headers alone) or changes (POST).
const READ: &str = "GET, HEAD";
const CHANGE: &str = "POST";

/// Every route and the methods it answers; another method gets 405 with these in `Allow`.
const ROUTES: [(&str, &str); 11] = [
    ("/login", CHANGE),
    ("/logout", CHANGE),
    ("/", READ),
    ("/app.js", READ),
    ("/style.css", READ),
    ("/api/state", READ),
    ("/api/dead", READ),
    ("/api/history", READ),
    ("/api/rot", READ),
    ("/api/pause", CHANGE),
    ("/api/resume", CHANGE),
];

/// Answers one request, which came on a connection from `peer`.
pub async fn route<B>(dashboard: &Dashboard, peer: SocketAddr, req: Request<B>) -> Reply
where
    B: Body<Data = Bytes>,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let Some(host) = dashboard.hosts.host_of(&req) else {
        tracing::debug!(%peer, host = ?req.headers().get("host"), "refused: a foreign host");
        let message = "this dashboard answers to an address, localhost, and the names its \
                       --allowed-host gives, not to that name";
        return text(StatusCode::MISDIRECTED_REQUEST, message);
    };
    let client = dashboard.proxies.client(peer.ip(), req.headers());
    if !same_origin(req.method(), req.headers(), host) {
        tracing::debug!(%client, origin = ?req.headers().get("origin"), "refused: a cross-origin change");
        let message = "a request that changes something must come from the dashboard's own page";
        return text(StatusCode::FORBIDDEN, message);
    }
    let path = req.uri().path();
    let Some((_, allow)) = ROUTES.iter().find(|(p, _)| *p == path) else {
        return text(StatusCode::NOT_FOUND, "not found");
    };
    let method = req.method();
    let answers = match *allow {
        READ => method == Method::GET || method == Method::HEAD,
        _ => method == Method::POST,
    };
    if !answers {
        return method_not_allowed(allow);
    }
    match path {
        "/login" => return login(dashboard, req, client).await,
        "/logout" => return logout(dashboard, req.headers(), client).await,
        _ => {}
    }
    match admit(dashboard, req.headers(), client).await {
        Ok(caller) => serve(dashboard, &req, client, caller).await,
        Err(refused) => refusal(req.uri().path(), refused),
    }
}

/// The answer to a request the door did not let in.
fn refusal(path: &str, refused: Refused) -> Reply {
    match refused {
        Refused::Anonymous => unauthorized(path, ""),
        Refused::WrongToken => unauthorized(path, "wrong token"),
        Refused::Limited(wait) => {
            let message = "too many wrong tokens from your address: try again in a minute";
            retry_after(text(StatusCode::TOO_MANY_REQUESTS, message), wait)
        }
        Refused::Database(error) => unavailable(&error),
    }
}

/// Answers a request let in, by `caller`, from `client`.
async fn serve<B>(
    dashboard: &Dashboard,
    req: &Request<B>,
    client: IpAddr,
    caller: Caller,
) -> Reply {
    let query = req.uri().query().unwrap_or("");
    match req.uri().path() {
        "/" => reply(StatusCode::OK, INDEX, "text/html; charset=utf-8"),
        "/app.js" => reply(StatusCode::OK, SCRIPT, "text/javascript; charset=utf-8"),
        "/style.css" => reply(StatusCode::OK, STYLE, "text/css; charset=utf-8"),
        "/api/state" => {
            let snapshot = Snapshot::read(
                &dashboard.queue,
                &dashboard.counts,
                dashboard.allow_control,
                !dashboard.access.is_open(),
            );
            json_or_error(snapshot.await)
        }
        "/api/dead" => dead(dashboard, query, client).await,
        "/api/history" => match dashboard
            .history
            .plot(&dashboard.queue, range_query(query))
            .await
        {
            Ok(json) => reply(StatusCode::OK, json, "application/json"),
            Err(error) => unavailable(&error),
        },
        "/api/rot" => {
            let range = range_query(query);
            let read = || super::rot::read(&dashboard.queue, range);
            match dashboard.history.kept("rot", range, read).await {
                Ok(json) => reply(StatusCode::OK, json, "application/json"),
                Err(error) => unavailable(&error),
            }
        }
        "/api/pause" => control(dashboard, req, true, client, caller).await,
        "/api/resume" => control(dashboard, req, false, client, caller).await,
        _ => text(StatusCode::NOT_FOUND, "not found"),
    }
}

/// The latest dead sites, searched if the query says `q`: a search waits for no other, it is
/// refused while the client's last one runs, or while the dashboard runs as many as it may.
async fn dead(dashboard: &Dashboard, query: &str, client: IpAddr) -> Reply {
    let (search, limit) = dead_query(query);
    let _running = match search.is_empty() {
        true => None,
        false => match dashboard.searches.start(ClientKey::of(client)) {
            Ok(running) => Some(running),
            Err(Busy::Client) => {
                let message = "your last search is still running: ask again when it ends";
                return retry_after(text(StatusCode::TOO_MANY_REQUESTS, message), SEARCH_RETRY);
            }
            Err(Busy::Dashboard) => {
                let message = "the dashboard runs as many searches as it may (--max-searches)";
                return retry_after(text(StatusCode::SERVICE_UNAVAILABLE, message), SEARCH_RETRY);
            }
        },
    };
    json_or_error(latest_dead(dashboard.queue.reports(), &search, limit).await)
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

/// Pauses or resumes the fleet, if the dashboard allows it and the request says it means to;
/// logged with who asked, and how they got in.
async fn control<B>(
    dashboard: &Dashboard,
    req: &Request<B>,
    pause: bool,
    client: IpAddr,
    caller: Caller,
) -> Reply {
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
    match crate::control::set_paused(&dashboard.queue, pause).await {
        Ok(line) => {
            tracing::info!(%client, "{line} (from the dashboard, {caller})");
            json(&Control {
                paused: pause,
                message: line,
            })
        }
        Err(error) => unavailable(&error),
    }
}

#[derive(Serialize)]
struct Control {
    paused: bool,
    message: String,
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
