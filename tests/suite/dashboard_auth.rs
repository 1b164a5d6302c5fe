//! `crawler-dashboard` with a token: every route answers 401 without it and 200 with it (as a
//! bearer token or as the login form's cookie), the cookie is HttpOnly and SameSite=Strict,
//! the token never shows in a log, an error or `--help`; and without a token the dashboard
//! refuses an address beyond loopback unless told `--no-auth`.

use std::net::IpAddr;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use crawler_tests::bins::{command, run, stderr, stdout};
use crawler_tests::{Backend, TestDb};
use reqwest::header::{AUTHORIZATION, COOKIE, SET_COOKIE, WWW_AUTHENTICATE};
use reqwest::{Method, StatusCode};

use crate::pause::{spawn_logged, wait_for_line, Killed};

pub const TOKEN: &str = "t0ken-of-the-dashboard-3f9a1c";

/// Every route, with the method it answers; the control routes need their header too.
pub const ROUTES: [(&str, &str); 8] = [
    ("GET", "/"),
    ("GET", "/app.js"),
    ("GET", "/style.css"),
    ("GET", "/api/state"),
    ("GET", "/api/dead?q=x"),
    ("GET", "/api/history?range=3600"),
    ("POST", "/api/pause"),
    ("POST", "/api/resume"),
];

/// A fresh SQLite database with one site (the dashboard refuses a database that is not there).
pub async fn database() -> TestDb {
    let db = Backend::Sqlite.fresh().await;
    let mut file = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut file, b"http://127.0.0.1:9/never-checked\n").unwrap();
    crate::e2e::seed(&db, file.path());
    db
}

/// A dashboard on a free port of `listen`'s address, with `env` and `args`; returns it, its
/// base URL and its log.
pub fn spawn(
    db: &TestDb,
    listen: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Killed, String, mpsc::Receiver<String>) {
    let mut cmd = command("crawler-dashboard", db.url.expose());
    cmd.args(["--listen", listen])
        .args(args)
        .envs(env.iter().copied());
    let (child, lines) = spawn_logged(&mut cmd, "debug");
    let line = wait_for_line(&lines, "dashboard on http://", Duration::from_secs(30));
    assert!(!line.contains(TOKEN), "{line}");
    let url = line[line.find("http://").unwrap()..]
        .split_whitespace()
        .next()
        .unwrap();
    let port = url.trim_end_matches('/').rsplit(':').next().unwrap();
    (child, format!("http://127.0.0.1:{port}"), lines)
}

pub fn client() -> reqwest::Client {
    client_from(IpAddr::from([127, 0, 0, 1]))
}

/// A client whose connections come from `ip`, an address of loopback: another client, for the
/// dashboard's limits per client.
pub fn client_from(ip: IpAddr) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(ip)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// The status of `route` with `header` (name and value) if any, and the control header.
pub async fn status(base: &str, route: (&str, &str), header: Option<(&str, &str)>) -> u16 {
    status_from(&client(), base, route, header).await
}

/// [`status`], asked by `client`.
pub async fn status_from(
    client: &reqwest::Client,
    base: &str,
    (method, path): (&str, &str),
    header: Option<(&str, &str)>,
) -> u16 {
    let method = Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = client
        .request(method, format!("{base}{path}"))
        .header("x-crawler-control", "1");
    if let Some((name, value)) = header {
        request = request.header(name, value);
    }
    request.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn with_a_token_every_route_answers_401_without_it_and_200_with_it_or_its_cookie() {
    let db = database().await;
    let env = [("CRAWLER_DASHBOARD_TOKEN", TOKEN)];
    let (mut dashboard, base, lines) = spawn(&db, "127.0.0.1:0", &["--allow-control"], &env);
    let bearer = format!("Bearer {TOKEN}");
    let wrong = format!("Bearer {TOKEN}x");
    for (n, route) in (2..).zip(ROUTES) {
        assert_eq!(status(&base, route, None).await, 401, "{route:?}");
        // Each wrong token from a client of its own: a client gets five a minute
        // (dashboard_sessions.rs tests that limit).
        let guesser = client_from(IpAddr::from([127, 0, 0, n]));
        let wrong = Some((AUTHORIZATION.as_str(), wrong.as_str()));
        assert_eq!(
            status_from(&guesser, &base, route, wrong).await,
            401,
            "{route:?}"
        );
        let cookie = Some((COOKIE.as_str(), "crawler_session=0123"));
        assert_eq!(status(&base, route, cookie).await, 401, "{route:?}");
        let right = Some((AUTHORIZATION.as_str(), bearer.as_str()));
        assert_eq!(status(&base, route, right).await, 200, "{route:?}");
    }
    let page = client().get(format!("{base}/")).send().await.unwrap();
    assert_eq!(
        page.headers()[WWW_AUTHENTICATE],
        "Bearer realm=\"crawler-dashboard\""
    );
    let form = page.text().await.unwrap();
    assert!(form.contains("action=\"/login\""), "{form}");
    assert!(!form.contains(TOKEN));

    // The login form: a wrong token gets the form again, the right one a cookie that opens
    // every route, and that is not the token.
    let login = |token: &str| {
        client()
            .post(format!("{base}/login"))
            .form(&[("token", token)])
            .send()
    };
    let refused = login("not-the-token-at-all").await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(refused.headers().get(SET_COOKIE).is_none());
    assert!(refused.text().await.unwrap().contains("wrong token"));
    let logged_in = login(TOKEN).await.unwrap();
    assert_eq!(logged_in.status(), StatusCode::SEE_OTHER);
    assert_eq!(logged_in.headers()["location"], "/");
    let set_cookie = logged_in.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    assert!(set_cookie.starts_with("crawler_session="), "{set_cookie}");
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(
            set_cookie.contains(&format!("; {attribute}")),
            "{set_cookie}"
        );
    }
    assert!(!set_cookie.contains(TOKEN), "{set_cookie}");
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    for route in ROUTES {
        let header = Some((COOKIE.as_str(), cookie.as_str()));
        assert_eq!(status(&base, route, header).await, 200, "{route:?}");
    }
    let logout = client()
        .post(format!("{base}/logout"))
        .send()
        .await
        .unwrap();
    assert_eq!(logout.status(), StatusCode::SEE_OTHER);
    assert!(logout.headers()[SET_COOKIE]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));

    // The token never reached the log.
    let _ = dashboard.0.kill();
    let _ = dashboard.0.wait();
    let log: Vec<String> = lines.iter().collect();
    assert!(log.iter().all(|l| !l.contains(TOKEN)), "{log:#?}");
}

#[tokio::test]
async fn the_token_may_come_from_a_file_and_a_short_one_is_refused_unquoted() {
    let db = database().await;
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), format!("{TOKEN}\n")).unwrap();
    let path = file.path().to_str().unwrap();
    let (_dashboard, base, _) = spawn(&db, "0.0.0.0:0", &["--token-file", path], &[]);
    let bearer = format!("Bearer {TOKEN}");
    let right = Some((AUTHORIZATION.as_str(), bearer.as_str()));
    assert_eq!(status(&base, ("GET", "/api/state"), right).await, 200);
    assert_eq!(status(&base, ("GET", "/api/state"), None).await, 401);

    let short =
        run(command("crawler-dashboard", db.url.expose())
            .env("CRAWLER_DASHBOARD_TOKEN", "sh0rtsecret"));
    assert_eq!(short.status.code(), Some(2), "{}", stderr(&short));
    assert!(stderr(&short).contains("too short"), "{}", stderr(&short));
    assert!(
        !stderr(&short).contains("sh0rtsecret"),
        "{}",
        stderr(&short)
    );
}

#[tokio::test]
async fn beyond_loopback_without_a_token_it_refuses_to_start_unless_told_no_auth() {
    let db = database().await;
    for listen in ["0.0.0.0:0", "[::]:0"] {
        let refused = run(command("crawler-dashboard", db.url.expose())
            .args(["--listen", listen])
            .env_remove("CRAWLER_DASHBOARD_TOKEN"));
        let err = stderr(&refused);
        assert_eq!(refused.status.code(), Some(2), "{err}");
        assert!(
            err.contains("refusing to serve")
                && err.contains("CRAWLER_DASHBOARD_TOKEN")
                && err.contains("--token-file")
                && err.contains("--no-auth"),
            "{err}"
        );
    }
    let (_open, base, _) = spawn(&db, "0.0.0.0:0", &["--no-auth"], &[]);
    assert_eq!(status(&base, ("GET", "/api/state"), None).await, 200);
    let both = run(command("crawler-dashboard", db.url.expose())
        .args(["--no-auth"])
        .env("CRAWLER_DASHBOARD_TOKEN", TOKEN));
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
    assert!(!stderr(&both).contains(TOKEN), "{}", stderr(&both));
}

#[test]
fn help_never_shows_the_token() {
    let out = run(Command::new(crawler_tests::bins::bin("crawler-dashboard"))
        .arg("--help")
        .env("CRAWLER_DASHBOARD_TOKEN", TOKEN));
    let help = stdout(&out);
    assert!(help.contains("CRAWLER_DASHBOARD_TOKEN") && help.contains("--token-file"));
    assert!(!help.contains(TOKEN), "{help}");
}
