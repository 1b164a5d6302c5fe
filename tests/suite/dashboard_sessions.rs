//! `crawler-dashboard`'s sessions and who is logged: a session cookie refused after its log
//! out, by every dashboard of the database and after a restart, and refused past its expiry
//! (on every backend: the ended sessions are in the database); wrong tokens slowed, limited per
//! client (429), and logged with the client's address, behind a trusted proxy its forwarded
//! one; pause and resume logged with who asked and how they got in.

use std::net::IpAddr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crawler_tests::{on_every_backend, TestDb};
use reqwest::header::{AUTHORIZATION, COOKIE, RETRY_AFTER, SET_COOKIE};
use reqwest::StatusCode;

use crate::dashboard_auth::{client, client_from, database, spawn, status_from, TOKEN};
use crate::pause::wait_for_line;
use crawler_tests::wait::until;

/// The dashboards' environment: the same token for all.
const ENV: [(&str, &str); 1] = [("CRAWLER_DASHBOARD_TOKEN", TOKEN)];

/// Logs in to the dashboard at `base` from `client` with `token`.
async fn login(client: &reqwest::Client, base: &str, token: &str) -> reqwest::Response {
    client
        .post(format!("{base}/login"))
        .form(&[("token", token)])
        .send()
        .await
        .unwrap()
}

/// The `name=value` of a right login's cookie, and its whole `Set-Cookie`.
async fn session(base: &str) -> (String, String) {
    let answer = login(&client(), base, TOKEN).await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let set_cookie = answer.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    (set_cookie.split(';').next().unwrap().to_owned(), set_cookie)
}

/// The status of `/api/state` with `cookie`.
async fn with_cookie(base: &str, cookie: &str) -> u16 {
    let request = client()
        .get(format!("{base}/api/state"))
        .header(COOKIE, cookie);
    request.send().await.unwrap().status().as_u16()
}

async fn logout(base: &str, cookie: &str) {
    let request = client()
        .post(format!("{base}/logout"))
        .header(COOKIE, cookie);
    let answer = request.send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    assert!(answer.headers()[SET_COOKIE]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
}

/// The ended sessions the database lists.
async fn listed(db: &TestDb) -> i64 {
    let queue = db.queue().await;
    crawler_tests::raw::scalar(queue.db(), "SELECT COUNT(*) FROM dashboard_logouts").await
}

on_every_backend!(
    async fn a_session_ends_at_its_logout_everywhere_and_for_good_and_at_its_expiry(
        backend: Backend,
    ) {
        let db = backend.fresh().await;
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "http://127.0.0.1:9/never-checked\n").unwrap();
        crate::e2e::seed(&db, file.path());
        let (mut first, a, _) = spawn(&db, "127.0.0.1:0", &[], &ENV);
        let (_second, b, _) = spawn(&db, "127.0.0.1:0", &[], &ENV);

        // A session lasts 12 hours by default, and says so.
        let (ended, set_cookie) = session(&a).await;
        assert!(set_cookie.contains("; Max-Age=43200"), "{set_cookie}");
        let (kept, _) = session(&a).await;
        for base in [&a, &b] {
            assert_eq!(with_cookie(base, &ended).await, 200);
        }
        // Logged out on one dashboard: refused by both, and by the first once restarted; the
        // other session lives on.
        logout(&a, &ended).await;
        for base in [&a, &b] {
            assert_eq!(with_cookie(base, &ended).await, 401, "{base}");
            assert_eq!(with_cookie(base, &kept).await, 200, "{base}");
        }
        let _ = first.0.kill();
        let _ = first.0.wait();
        let (_restarted, a, _) = spawn(&db, "127.0.0.1:0", &[], &ENV);
        assert_eq!(with_cookie(&a, &ended).await, 401);
        assert_eq!(with_cookie(&a, &kept).await, 200);
        assert_eq!(listed(&db).await, 1);

        // A session of two seconds: its cookie says so, and is refused once they pass, by a
        // dashboard whose own sessions last longer too.
        let short = ["--session-lifetime", "2s"];
        let (_short, c, _) = spawn(&db, "127.0.0.1:0", &short, &ENV);
        let (brief, set_cookie) = session(&c).await;
        assert!(set_cookie.contains("; Max-Age=2"), "{set_cookie}");
        assert_eq!(with_cookie(&a, &brief).await, 200);
        until("the session expires", Duration::from_secs(20), || async {
            with_cookie(&c, &brief).await == 401
        })
        .await;
        assert_eq!(with_cookie(&a, &brief).await, 401);

        // An expiry moved by hand breaks the cookie's signature.
        let (name, value) = kept.split_once('=').unwrap();
        let (expiry, rest) = value.split_once('.').unwrap();
        let later = expiry.parse::<i64>().unwrap() + 86_400_000;
        assert_eq!(
            with_cookie(&a, &format!("{name}={later}.{rest}")).await,
            401
        );

        // An ended session is listed until it expires: a log out forgets those past theirs.
        let (short_lived, _) = session(&c).await;
        logout(&c, &short_lived).await;
        assert_eq!(listed(&db).await, 2);
        until(
            "the short session expires",
            Duration::from_secs(20),
            || async {
                with_cookie(&c, &short_lived).await == 401
                    && with_cookie(&a, &short_lived).await == 401
            },
        )
        .await;
        let (another, _) = session(&a).await;
        until(
            "the expired session forgotten",
            Duration::from_secs(20),
            || async {
                logout(&a, &another).await;
                listed(&db).await == 2
            },
        )
        .await;
    }
);

/// Wrong tokens from `client` until one is answered 429; returns how many were answered 401,
/// and how long they took.
async fn guess_until_refused(client: &reqwest::Client, base: &str) -> (usize, Duration) {
    let started = Instant::now();
    for n in 0..20 {
        let answer = login(client, base, "not-the-token-at-all").await;
        match answer.status() {
            StatusCode::UNAUTHORIZED => continue,
            StatusCode::TOO_MANY_REQUESTS => {
                let wait: u64 = answer.headers()[RETRY_AFTER]
                    .to_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!((1..=60).contains(&wait), "Retry-After: {wait}");
                return (n, started.elapsed());
            }
            other => panic!("a wrong token answered {other}"),
        }
    }
    panic!("20 wrong tokens from one client, none refused");
}

/// The lines logged up to the first that contains `last`, that one included.
fn logged_until(lines: &mpsc::Receiver<String>, last: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut logged = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let line = lines.recv_timeout(left).expect("the log goes on");
        let done = line.contains(last);
        logged.push(line);
        if done {
            return logged;
        }
    }
    panic!("no log line saying {last:?}: {logged:#?}");
}

#[tokio::test]
async fn wrong_tokens_are_slowed_limited_per_client_and_logged() {
    let db = database().await;
    let (_dashboard, base, lines) = spawn(&db, "127.0.0.1:0", &[], &ENV);
    let guesser = client_from(IpAddr::from([127, 0, 0, 2]));
    let (answered, took) = guess_until_refused(&guesser, &base).await;
    assert_eq!(answered, 5);
    assert!(
        took >= Duration::from_millis(2500),
        "five wrong tokens in {took:?}"
    );

    // Refused, the right token too, in the form and as a bearer; another client is not.
    let right = login(&guesser, &base, TOKEN).await;
    assert_eq!(right.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(right.headers().get(SET_COOKIE).is_none());
    let bearer = format!("Bearer {TOKEN}");
    let header = Some((AUTHORIZATION.as_str(), bearer.as_str()));
    let state = ("GET", "/api/state");
    assert_eq!(status_from(&guesser, &base, state, header).await, 429);
    let other = client_from(IpAddr::from([127, 0, 0, 3]));
    assert_eq!(status_from(&other, &base, state, header).await, 200);

    // A wrong bearer token counts as a wrong login.
    let bearer_guesser = client_from(IpAddr::from([127, 0, 0, 4]));
    let wrong = Some((AUTHORIZATION.as_str(), "Bearer not-the-token-at-all"));
    for _ in 0..5 {
        assert_eq!(status_from(&bearer_guesser, &base, state, wrong).await, 401);
    }
    assert_eq!(
        status_from(&bearer_guesser, &base, state, header).await,
        429
    );
    assert_eq!(
        login(&other, &base, TOKEN).await.status(),
        StatusCode::SEE_OTHER
    );

    // Each wrong token logged with its client, once: none of the refused ones. The other
    // client's login, logged last, with its address.
    let log = logged_until(&lines, "logged in to the dashboard");
    assert!(log.last().unwrap().contains("client=127.0.0.3"), "{log:#?}");
    let wrong: Vec<&String> = log
        .iter()
        .filter(|l| l.contains("wrong dashboard token"))
        .collect();
    let of = |client: &str| wrong.iter().filter(|l| l.contains(client)).count();
    assert_eq!(
        (of("client=127.0.0.2"), of("client=127.0.0.4")),
        (5, 5),
        "{wrong:#?}"
    );
    assert!(
        wrong.iter().any(|l| l.contains("refused (429)")),
        "{wrong:#?}"
    );
    assert!(wrong.iter().all(|l| !l.contains(TOKEN)));
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_client_is_the_forwarded_address_and_only_then() {
    let db = database().await;
    let trusted = ["--trusted-proxy", "127.0.0.5"];
    let (_dashboard, base, lines) = spawn(&db, "127.0.0.1:0", &trusted, &ENV);
    let proxy = client_from(IpAddr::from([127, 0, 0, 5]));
    let forwarded = |client: &'static str, token: &'static str| {
        proxy
            .post(format!("{base}/login"))
            .header("x-forwarded-for", format!("198.51.100.9, {client}"))
            .form(&[("token", token)])
            .send()
    };
    for _ in 0..5 {
        let answer = forwarded("192.0.2.1", "not-the-token-at-all")
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    }
    let refused = forwarded("192.0.2.1", TOKEN).await.unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let other = forwarded("192.0.2.2", TOKEN).await.unwrap();
    assert_eq!(other.status(), StatusCode::SEE_OTHER);
    let log = logged_until(&lines, "logged in to the dashboard");
    assert!(log.last().unwrap().contains("client=192.0.2.2"), "{log:#?}");
    let wrong: Vec<&String> = log
        .iter()
        .filter(|l| l.contains("wrong dashboard token"))
        .collect();
    assert_eq!(wrong.len(), 5, "{log:#?}");
    assert!(
        wrong.iter().all(|l| l.contains("client=192.0.2.1")),
        "{wrong:#?}"
    );

    // From an address it does not trust, the header is the client's own words: ignored.
    let untrusted = client_from(IpAddr::from([127, 0, 0, 6]));
    for n in 0..6 {
        let answer = untrusted
            .post(format!("{base}/login"))
            .header("x-forwarded-for", format!("192.0.2.{}", 10 + n))
            .form(&[("token", "not-the-token-at-all")])
            .send()
            .await
            .unwrap();
        let want = if n < 5 { 401 } else { 429 };
        assert_eq!(answer.status().as_u16(), want, "guess {n}");
    }
}

#[tokio::test]
async fn pause_and_resume_are_logged_with_the_client_and_how_it_got_in() {
    let db = database().await;
    let queue = db.queue().await;
    let control = ["--allow-control"];
    let (_closed, base, lines) = spawn(&db, "127.0.0.1:0", &control, &ENV);
    let (cookie, _) = session(&base).await;
    let line = wait_for_line(
        &lines,
        "logged in to the dashboard",
        Duration::from_secs(10),
    );
    let id = line
        .split("session ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_owned();
    let act = |from: u8, action: &str, header: (&'static str, String)| {
        client_from(IpAddr::from([127, 0, 0, from]))
            .post(format!("{base}/api/{action}"))
            .header("x-crawler-control", "1")
            .header(header.0, header.1)
            .send()
    };
    let paused = act(7, "pause", ("cookie", cookie.clone())).await.unwrap();
    assert_eq!(paused.status(), 200);
    assert!(queue.control().is_paused().await.unwrap());
    let line = wait_for_line(&lines, "fleet paused", Duration::from_secs(10));
    assert!(
        line.contains("client=127.0.0.7") && line.contains(&format!("session {id}")),
        "{line}"
    );
    let resumed = act(8, "resume", ("authorization", format!("Bearer {TOKEN}"))).await;
    assert_eq!(resumed.unwrap().status(), 200);
    let line = wait_for_line(&lines, "fleet resumed", Duration::from_secs(10));
    assert!(
        line.contains("client=127.0.0.8") && line.contains("bearer token"),
        "{line}"
    );
    assert!(!line.contains(TOKEN));

    let (_open, base, lines) = spawn(&db, "127.0.0.1:0", &control, &[]);
    let paused = client_from(IpAddr::from([127, 0, 0, 9]))
        .post(format!("{base}/api/pause"))
        .header("x-crawler-control", "1")
        .send()
        .await
        .unwrap();
    assert_eq!(paused.status(), 200);
    let line = wait_for_line(&lines, "fleet paused", Duration::from_secs(10));
    assert!(
        line.contains("client=127.0.0.9") && line.contains("no token"),
        "{line}"
    );
}
