//! Who a request is, for every route behind the door: nobody needs to be on an open dashboard;
//! with a token, the request shows it as a bearer token, or a session cookie signed with it
//! that has not expired (on the database's clock) nor been ended by a log out (in the
//! database). A wrong token, here or in the login form, counts against the client (`logins`).

use std::fmt;
use std::net::IpAddr;
use std::time::Duration;

use hyper::header::HeaderMap;

use super::auth::Bearer;
use super::client::ClientKey;
use super::logins::{FAILURES, FAILURE_DELAY};
use super::session::Session;
use super::shared::Dashboard;

/// How a request got in: what a control request is logged with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    /// The dashboard has no token.
    Open,
    /// It showed the token.
    Bearer,
    /// It showed a live session's cookie.
    Session(Session),
}

impl fmt::Display for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Caller::Open => f.write_str("no token: the dashboard is open"),
            Caller::Bearer => f.write_str("bearer token"),
            Caller::Session(session) => write!(f, "session {}", session.short_id()),
        }
    }
}

/// Why a request is not let in.
#[derive(Debug)]
pub enum Refused {
    /// Neither the token nor a live session: log in.
    Anonymous,
    /// A bearer token that is not the token.
    WrongToken,
    /// The client sent too many wrong tokens lately; it may try again after this.
    Limited(Duration),
    /// The database could not say whether the session lives.
    Database(crate::error::Error),
}

/// Lets a request with `headers`, from `client`, in, or says why not.
pub async fn admit(
    dashboard: &Dashboard,
    headers: &HeaderMap,
    client: IpAddr,
) -> Result<Caller, Refused> {
    let Some(key) = dashboard.access.key() else {
        return Ok(Caller::Open);
    };
    let bearer = dashboard.access.bearer(headers);
    if bearer != Bearer::Absent {
        if let Some(wait) = dashboard.logins.refused_for(ClientKey::of(client)) {
            return Err(Refused::Limited(wait));
        }
        if bearer == Bearer::Right {
            return Ok(Caller::Bearer);
        }
        wrong_token(dashboard, client, "as a bearer token").await;
        return Err(Refused::WrongToken);
    }
    for session in Session::in_headers(headers, key) {
        let check = dashboard.queue.sessions().check(session.id()).await;
        let check = check.map_err(|e| Refused::Database(e.into()))?;
        if !check.ended && session.expires_at() > check.now {
            return Ok(Caller::Session(session));
        }
    }
    Err(Refused::Anonymous)
}

/// Counts a wrong token from `client` (sent `how`), logs it with the client's address, and
/// answers late.
pub async fn wrong_token(dashboard: &Dashboard, client: IpAddr, how: &str) {
    let failures = dashboard.logins.failed(ClientKey::of(client));
    if failures < FAILURES {
        tracing::warn!(%client, "wrong dashboard token {how}: {failures} of {FAILURES} a minute");
    } else {
        // Beyond the limit only when tokens were sent side by side, each before the others
        // were counted: bounded by the client's connections, and each logged.
        tracing::warn!(
            %client,
            "wrong dashboard token {how}: {failures} of {FAILURES} a minute; the client's \
             logins and bearer tokens are refused (429) until the minute ends"
        );
    }
    tokio::time::sleep(FAILURE_DELAY).await;
}
