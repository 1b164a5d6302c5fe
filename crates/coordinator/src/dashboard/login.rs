//! The login form's two routes. `POST /login` takes `token=…`: the right token gets a new
//! session's cookie, good for `--session-lifetime` on the database's clock, and the page; a
//! wrong one the form again, late, counted against the client (`logins`). `POST /logout` ends
//! the sessions its cookies name, in the database, so their cookies are refused from then on
//! by every dashboard of the database, even one that kept a copy.

use std::net::IpAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Body;
use hyper::header::HeaderMap;
use hyper::{Request, StatusCode};

use super::client::ClientKey;
use super::gate::wrong_token;
use super::reply::{login_page, retry_after, see_other, text, unauthorized, unavailable, Reply};
use super::session::{expired_cookie, Session};
use super::shared::Dashboard;
use crate::report::timestamp::rfc3339;

/// The login form's body read at most: a token is far shorter.
const LOGIN_BODY: usize = 4096;

/// Checks the login form's token: right, a new session's cookie and back to the page; wrong,
/// the form again, with 401.
pub async fn login<B>(dashboard: &Dashboard, req: Request<B>, client: IpAddr) -> Reply
where
    B: Body<Data = Bytes>,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let Some(key) = dashboard.access.key() else {
        return see_other(None);
    };
    if let Some(wait) = dashboard.logins.refused_for(ClientKey::of(client)) {
        let message = "too many wrong tokens from your address: try again in a minute";
        return retry_after(login_page(StatusCode::TOO_MANY_REQUESTS, message), wait);
    }
    let given = match read_token(dashboard, req).await {
        Ok(given) => given,
        Err(reply) => return reply,
    };
    if !dashboard.access.is_token(&given) {
        wrong_token(dashboard, client, "in the login form").await;
        return unauthorized("/", "wrong token");
    }
    let now = match dashboard.queue.reports().now().await {
        Ok(now) => now,
        Err(error) => return unavailable(&error.into()),
    };
    let lifetime = i64::try_from(dashboard.session_lifetime.as_millis()).unwrap_or(i64::MAX);
    let session = Session::new(now.saturating_add(lifetime));
    tracing::info!(
        %client,
        "logged in to the dashboard: session {} until {}",
        session.short_id(),
        rfc3339(session.expires_at())
    );
    see_other(Some(session.set_cookie(key, lifetime / 1000)))
}

/// The `token` field of the login form, read within the body timeout.
async fn read_token<B>(dashboard: &Dashboard, req: Request<B>) -> Result<String, Reply>
where
    B: Body<Data = Bytes>,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let body = Limited::new(req.into_body(), LOGIN_BODY).collect();
    let body = match tokio::time::timeout(dashboard.body_timeout, body).await {
        Err(_) => {
            let message = "the login form did not arrive in time";
            return Err(text(StatusCode::REQUEST_TIMEOUT, message));
        }
        Ok(Err(_)) => {
            let message = "the login form is too large";
            return Err(text(StatusCode::PAYLOAD_TOO_LARGE, message));
        }
        Ok(Ok(body)) => body.to_bytes(),
    };
    Ok(url::form_urlencoded::parse(&body)
        .find(|(key, _)| key == "token")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default())
}

/// Ends the sessions the request's cookies name, and expires the cookie.
pub async fn logout(dashboard: &Dashboard, headers: &HeaderMap, client: IpAddr) -> Reply {
    if let Some(key) = dashboard.access.key() {
        let sessions = dashboard.queue.sessions();
        for session in Session::in_headers(headers, key) {
            if let Err(error) = sessions.end(session.id(), session.expires_at()).await {
                return unavailable(&error.into());
            }
            tracing::info!(
                %client,
                "logged out of the dashboard: session {} ended",
                session.short_id()
            );
        }
    }
    see_other(Some(expired_cookie()))
}
