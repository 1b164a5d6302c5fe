//! `crawler-dashboard` under attack, driven over real sockets on loopback: a foreign `Host`
//! (DNS rebinding) refused on every route, open or with a token; a cross-origin change
//! refused; the guard headers on every answer and HEAD wherever GET is; a half-sent request,
//! or an idle connection, closed within its timeout; connections past the caps refused; an
//! accept that fails paused rather than spun; searches bounded per client and in all.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use crawler_tests::{on_every_backend, Backend, TestDb};
use reqwest::header::{AUTHORIZATION, HOST};
use reqwest::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::dashboard_auth::{client, database, spawn, status, ROUTES, TOKEN};
use crate::pause::wait_for_line;
use crawler_tests::wait::until;

/// The routes of the login form, which answer before the door.
const LOGIN_ROUTES: [(&str, &str); 2] = [("POST", "/login"), ("POST", "/logout")];

/// The port of a dashboard's base URL.
fn port(base: &str) -> u16 {
    base.rsplit(':').next().unwrap().parse().unwrap()
}

/// A connection to the dashboard at `port` of 127.0.0.1 from `from`, an address of loopback.
async fn connect_from(from: IpAddr, port: u16) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(from, 0)).unwrap();
    socket
        .connect(SocketAddr::from(([127, 0, 0, 1], port)))
        .await
        .unwrap()
}

/// What `stream` sends until it closes, waiting `limit` at most: `None` if it was still open
/// then.
async fn read_to_close(stream: &mut TcpStream, limit: Duration) -> Option<String> {
    let mut got = Vec::new();
    match tokio::time::timeout(limit, stream.read_to_end(&mut got)).await {
        Ok(_) => Some(String::from_utf8_lossy(&got).into_owned()),
        Err(_) => None,
    }
}

/// Sends `request` (its bytes as written) on a fresh connection and reads the answer.
async fn raw(port: u16, request: &str) -> String {
    let mut stream = connect_from(IpAddr::from([127, 0, 0, 1]), port).await;
    stream.write_all(request.as_bytes()).await.unwrap();
    read_to_close(&mut stream, Duration::from_secs(30))
        .await
        .expect("an answer, then the connection closed")
}

/// A request for `route` with `host` as its `Host`, the control header, and `auth` if any.
async fn status_for_host(base: &str, (method, path): (&str, &str), host: &str, auth: bool) -> u16 {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = client()
        .request(method, format!("{base}{path}"))
        .header(HOST, host)
        .header("x-crawler-control", "1");
    if auth {
        request = request.header(AUTHORIZATION, format!("Bearer {TOKEN}"));
    }
    request.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn a_foreign_host_is_refused_on_every_route_open_or_with_a_token() {
    let db = database().await;
    let queue = db.queue().await;
    let token = [("CRAWLER_DASHBOARD_TOKEN", TOKEN)];
    let allowed = [
        "--allow-control",
        "--allowed-host",
        "dash.example:8443,ops.example",
    ];
    let (_open, open, _) = spawn(&db, "127.0.0.1:0", &allowed, &[]);
    let (_closed, closed, _) = spawn(&db, "127.0.0.1:0", &allowed, &token);
    for (base, auth) in [(&open, false), (&closed, true)] {
        let p = port(base);
        for route in ROUTES.iter().chain(&LOGIN_ROUTES).copied() {
            for host in [
                format!("rebind.attacker.example:{p}"),
                format!("127.0.0.1.nip.io:{p}"),
                "localhost.attacker.example".to_owned(),
                "dash.example:8080".to_owned(),
                "evil.ops.example".to_owned(),
            ] {
                let got = status_for_host(base, route, &host, auth).await;
                assert_eq!(got, 421, "{route:?} with Host {host}");
            }
        }
        assert!(
            !queue.control().is_paused().await.unwrap(),
            "paused through a foreign host"
        );
        // An address (no DNS answer decides it), localhost, and the names it was given, on
        // any port: through a port mapping or a tunnel, the port is not the dashboard's own.
        for host in [
            format!("127.0.0.1:{p}"),
            "192.0.2.7:9000".to_owned(),
            format!("localhost:{}", p + 1),
            "dash.example:8443".to_owned(),
            "OPS.example.".to_owned(),
        ] {
            let got = status_for_host(base, ("GET", "/api/state"), &host, auth).await;
            assert_eq!(got, 200, "Host {host}");
        }
        // The issue's own request, and one in absolute form naming another host.
        let pause = format!(
            "POST /api/pause HTTP/1.1\r\nHost: rebind.attacker.example:{p}\r\n\
             X-Crawler-Control: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        assert!(raw(p, &pause).await.starts_with("HTTP/1.1 421"));
        let absolute = format!(
            "GET http://rebind.attacker.example:{p}/api/dead HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n\
             Connection: close\r\n\r\n"
        );
        assert!(raw(p, &absolute).await.starts_with("HTTP/1.1 421"));
        let nameless = raw(p, "GET /api/state HTTP/1.0\r\n\r\n").await;
        assert!(nameless.starts_with("HTTP/1.0 421"), "{nameless}");
    }
    assert!(!queue.control().is_paused().await.unwrap());
}

/// The status of a control request with the control header and `headers`.
async fn control_with(base: &str, action: &str, headers: &[(&str, &str)]) -> u16 {
    let mut request = client()
        .post(format!("{base}/api/{action}"))
        .header("x-crawler-control", "1");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn a_change_from_another_origin_is_refused() {
    let db = database().await;
    let queue = db.queue().await;
    let (_open, base, _) = spawn(&db, "127.0.0.1:0", &["--allow-control"], &[]);
    let next_port = format!("http://127.0.0.1:{}", port(&base) + 1);
    let foreign = [
        vec![("origin", "http://evil.example")],
        vec![("origin", "null")],
        vec![("origin", next_port.as_str())],
        vec![("sec-fetch-site", "cross-site")],
        vec![("sec-fetch-site", "same-site"), ("origin", &*base)],
    ];
    for headers in &foreign {
        assert_eq!(
            control_with(&base, "pause", headers).await,
            403,
            "{headers:?}"
        );
        assert!(!queue.control().is_paused().await.unwrap(), "{headers:?}");
    }
    let own = [("origin", &*base), ("sec-fetch-site", "same-origin")];
    assert_eq!(control_with(&base, "pause", &own).await, 200);
    assert!(queue.control().is_paused().await.unwrap());
    assert_eq!(control_with(&base, "resume", &own[..1]).await, 200);
    assert!(!queue.control().is_paused().await.unwrap());
    // Reads are not changes: a page of another site may load them (it cannot read them).
    let read = client()
        .get(format!("{base}/api/state"))
        .header("origin", "http://evil.example");
    assert_eq!(read.send().await.unwrap().status(), 200);

    // The login form: another site's form cannot log in, or out.
    let token = [("CRAWLER_DASHBOARD_TOKEN", TOKEN)];
    let (_closed, base, _) = spawn(&db, "127.0.0.1:0", &[], &token);
    let login = |origin: &'static str| {
        client()
            .post(format!("{base}/login"))
            .header("origin", origin)
            .form(&[("token", TOKEN)])
            .send()
    };
    let refused = login("http://evil.example").await.unwrap();
    assert_eq!(refused.status(), 403);
    assert!(refused.headers().get("set-cookie").is_none());
    let own = format!("http://127.0.0.1:{}", port(&base));
    let logged_in = client()
        .post(format!("{base}/login"))
        .header("origin", &own)
        .form(&[("token", TOKEN)])
        .send()
        .await
        .unwrap();
    assert_eq!(logged_in.status(), StatusCode::SEE_OTHER);
    let cookie = logged_in.headers()["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let logout = client()
        .post(format!("{base}/logout"))
        .header("cookie", &cookie)
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(logout.status(), 403);
    let still = Some(("cookie", cookie.as_str()));
    assert_eq!(status(&base, ("GET", "/api/state"), still).await, 200);
}

#[tokio::test]
async fn every_answer_carries_the_guards_and_head_is_answered_where_get_is() {
    let db = database().await;
    let token = [("CRAWLER_DASHBOARD_TOKEN", TOKEN)];
    let (_dashboard, base, _) = spawn(&db, "127.0.0.1:0", &[], &token);
    let bearer = format!("Bearer {TOKEN}");
    let mut answers = Vec::new();
    for (method, path) in ROUTES.iter().filter(|(m, _)| *m == "GET") {
        let get = client()
            .get(format!("{base}{path}"))
            .header(AUTHORIZATION, &bearer);
        let get = get.send().await.unwrap();
        let head = client()
            .head(format!("{base}{path}"))
            .header(AUTHORIZATION, &bearer);
        let head = head.send().await.unwrap();
        assert_eq!(head.status(), 200, "HEAD {path}");
        assert_eq!(get.status(), 200, "{method} {path}");
        assert_eq!(
            head.headers()["content-type"],
            get.headers()["content-type"]
        );
        assert!(
            head.bytes().await.unwrap().is_empty(),
            "HEAD {path} has a body"
        );
        answers.push(get);
    }
    let p = port(&base);
    let more = [
        client().get(format!("{base}/api/state")),
        client()
            .get(format!("{base}/nowhere"))
            .header(AUTHORIZATION, &bearer),
        client().delete(format!("{base}/api/state")),
        client()
            .get(format!("{base}/"))
            .header(HOST, format!("evil.example:{p}")),
        client()
            .post(format!("{base}/logout"))
            .header("origin", "http://evil.example"),
    ];
    for request in more {
        answers.push(request.send().await.unwrap());
    }
    let statuses: Vec<u16> = answers[answers.len() - 5..]
        .iter()
        .map(|a| a.status().as_u16())
        .collect();
    assert_eq!(statuses, [401, 404, 405, 421, 403]);
    for answer in &answers {
        let headers = answer.headers();
        let url = answer.url();
        assert_eq!(headers["referrer-policy"], "no-referrer", "{url}");
        assert_eq!(headers["x-frame-options"], "DENY", "{url}");
        assert_eq!(headers["x-content-type-options"], "nosniff", "{url}");
        assert_eq!(headers["cache-control"], "no-store", "{url}");
        let policy = headers["content-security-policy"].to_str().unwrap();
        for part in [
            "default-src 'self'",
            "form-action 'self'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
        ] {
            assert!(policy.contains(part), "{url}: {policy}");
        }
    }
    let not_allowed = client().delete(format!("{base}/api/state")).send().await;
    assert_eq!(not_allowed.unwrap().headers()["allow"], "GET, HEAD");
}

/// The start of a request that never ends.
fn half_request(port: u16) -> String {
    format!("GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Half: ")
}

#[tokio::test]
async fn a_half_sent_request_is_closed_at_the_header_timeout_unanswered() {
    let db = database().await;
    let args = ["--header-timeout", "1s", "--idle-timeout", "60s"];
    let (_dashboard, base, _) = spawn(&db, "127.0.0.1:0", &args, &[]);
    let p = port(&base);
    let local = IpAddr::from([127, 0, 0, 1]);

    // Half a request, then nothing.
    let mut stream = connect_from(local, p).await;
    stream.write_all(half_request(p).as_bytes()).await.unwrap();
    let started = Instant::now();
    let got = read_to_close(&mut stream, Duration::from_secs(20)).await;
    assert_eq!(got.as_deref(), Some(""), "held open, or answered");
    assert!(started.elapsed() >= Duration::from_millis(900));

    // A byte every 100 ms: the bytes keep coming, the head never ends.
    let mut stream = connect_from(local, p).await;
    let started = Instant::now();
    let mut closed = false;
    for byte in half_request(p).bytes().cycle().take(400) {
        if stream.write_all(&[byte]).await.is_err() {
            closed = true;
            break;
        }
        let mut buf = [0; 64];
        match tokio::time::timeout(Duration::from_millis(100), stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                closed = true;
                break;
            }
            Ok(Ok(_)) => panic!("a half-sent request was answered"),
            Err(_) => {}
        }
    }
    assert!(closed, "a trickling head was held for 40 s");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );

    // The dashboard still answers whole requests.
    assert_eq!(status(&base, ("GET", "/api/state"), None).await, 200);
}

#[tokio::test]
async fn with_the_defaults_a_half_sent_request_is_closed_after_ten_seconds() {
    let db = database().await;
    let (_dashboard, base, _) = spawn(&db, "127.0.0.1:0", &[], &[]);
    let p = port(&base);
    let mut stream = connect_from(IpAddr::from([127, 0, 0, 1]), p).await;
    stream.write_all(half_request(p).as_bytes()).await.unwrap();
    let started = Instant::now();
    let got = read_to_close(&mut stream, Duration::from_secs(40)).await;
    assert_eq!(got.as_deref(), Some(""), "held open for 40 s, or answered");
    assert!(
        started.elapsed() >= Duration::from_secs(9),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_idle_connection_is_closed_and_a_busy_one_is_kept() {
    let db = database().await;
    let args = ["--idle-timeout", "1s", "--header-timeout", "30s"];
    let (_dashboard, base, _) = spawn(&db, "127.0.0.1:0", &args, &[]);
    let p = port(&base);
    let local = IpAddr::from([127, 0, 0, 1]);

    // Opened and never used.
    let mut unused = connect_from(local, p).await;
    let got = read_to_close(&mut unused, Duration::from_secs(20)).await;
    assert_eq!(got.as_deref(), Some(""));

    // Kept alive: a request every 300 ms for 3 s, all on one connection, then idle.
    let mut kept = connect_from(local, p).await;
    let request = format!("GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n\r\n");
    for _ in 0..10 {
        kept.write_all(request.as_bytes()).await.unwrap();
        let mut buf = vec![0; 64 * 1024];
        let n = kept.read(&mut buf).await.unwrap();
        assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "closed while in use");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let got = read_to_close(&mut kept, Duration::from_secs(20)).await;
    assert!(got.is_some(), "an idle keep-alive connection stayed open");
}

#[tokio::test]
async fn connections_past_the_caps_are_refused_until_one_closes() {
    let db = database().await;
    let args = [
        "--max-connections",
        "4",
        "--max-connections-per-client",
        "2",
        "--idle-timeout",
        "60s",
    ];
    let (_dashboard, base, lines) = spawn(&db, "127.0.0.1:0", &args, &[]);
    let p = port(&base);
    let from = |last: u8| IpAddr::from([127, 0, 0, last]);
    let busy = |answer: Option<String>| {
        let answer = answer.expect("refused at once");
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(answer.contains("too many connections"), "{answer}");
    };

    // One client: two, and the third refused.
    let mut first = connect_from(from(1), p).await;
    let _second = connect_from(from(1), p).await;
    until("two connections open", Duration::from_secs(10), || async {
        let mut third = connect_from(from(1), p).await;
        read_to_close(&mut third, Duration::from_millis(500))
            .await
            .is_some()
    })
    .await;
    let mut third = connect_from(from(1), p).await;
    busy(read_to_close(&mut third, Duration::from_secs(10)).await);
    wait_for_line(
        &lines,
        "--max-connections-per-client",
        Duration::from_secs(10),
    );

    // Others: two more in all, and the fifth refused.
    let _other = connect_from(from(2), p).await;
    let _another = connect_from(from(3), p).await;
    until("four connections open", Duration::from_secs(10), || async {
        let mut fifth = connect_from(from(4), p).await;
        read_to_close(&mut fifth, Duration::from_millis(500))
            .await
            .is_some()
    })
    .await;
    let mut fifth = connect_from(from(4), p).await;
    busy(read_to_close(&mut fifth, Duration::from_secs(10)).await);

    // One closes: its client connects again.
    first.shutdown().await.unwrap();
    drop(first);
    until("a place again", Duration::from_secs(10), || async {
        let mut again = connect_from(from(1), p).await;
        let request =
            format!("GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nConnection: close\r\n\r\n");
        again.write_all(request.as_bytes()).await.is_ok()
            && read_to_close(&mut again, Duration::from_secs(5))
                .await
                .is_some_and(|a| a.starts_with("HTTP/1.1 200"))
    })
    .await;
}

/// A dashboard that may open `files` file descriptors at most.
fn spawn_with_few_files(
    db: &TestDb,
    files: u64,
) -> (
    crate::pause::Killed,
    String,
    std::sync::mpsc::Receiver<String>,
) {
    use std::os::unix::process::CommandExt;
    let mut cmd = crawler_tests::bins::command("crawler-dashboard", db.url.expose());
    cmd.args(["--listen", "127.0.0.1:0", "--max-connections", "1000"])
        .args(["--max-connections-per-client", "1000"]);
    // SAFETY: setrlimit is async-signal-safe; the child runs nothing else before exec.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: files,
                rlim_max: files,
            };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let (child, lines) = crate::pause::spawn_logged(&mut cmd, "crawler_coordinator=warn,info");
    let line = wait_for_line(&lines, "dashboard on http://", Duration::from_secs(30));
    let url = line[line.find("http://").unwrap()..]
        .split_whitespace()
        .next()
        .unwrap();
    (child, url.trim_end_matches('/').to_owned(), lines)
}

#[tokio::test]
async fn out_of_file_descriptors_it_pauses_between_accepts_and_recovers() {
    let db = database().await;
    let (_dashboard, base, lines) = spawn_with_few_files(&db, 48);
    let p = port(&base);
    // More connections than it has descriptors for: its accepts fail while they stay open.
    let mut open = Vec::new();
    for _ in 0..80 {
        open.push(connect_from(IpAddr::from([127, 0, 0, 1]), p).await);
    }
    let accept_failed =
        |lines| wait_for_line(lines, "cannot accept a connection", Duration::from_secs(30));
    let first = accept_failed(&lines);
    assert!(first.contains("trying again in 50ms"), "{first}");
    let mut last = first.clone();
    for pause in ["100ms", "200ms", "400ms"] {
        last = accept_failed(&lines);
        assert!(last.contains(&format!("trying again in {pause}")), "{last}");
    }
    // Three pauses, 50 + 100 + 200 ms, passed between the four lines (by the times they were
    // logged at, which the pipe's delivery cannot shorten): no spin.
    let between = (logged_at(&last) - logged_at(&first)).rem_euclid(86_400.0);
    assert!(between >= 0.35, "{between} s between\n{first}\n{last}");
    drop(open);
    until("it answers again", Duration::from_secs(30), || async {
        let request = client().get(format!("{base}/api/state")).send().await;
        request.is_ok_and(|r| r.status() == 200)
    })
    .await;
}

/// When a log line was written, in seconds of its day: its timestamp is `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
fn logged_at(line: &str) -> f64 {
    let time = line
        .get(11..)
        .and_then(|t| t.split('Z').next())
        .unwrap_or("");
    let parts: Vec<f64> = time.split(':').filter_map(|n| n.parse().ok()).collect();
    assert_eq!(parts.len(), 3, "no timestamp in {line:?}");
    parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]
}

on_every_backend!(only [mariadb, postgres]
    async fn searches_run_one_per_client_and_a_few_in_all(backend: Backend) {
        searches_are_bounded(backend).await;
    }
);

/// A search runs a while only on a large crawl: here, every read of `sites` waits for a lock
/// the test holds, so the searches stay in flight until it lets go. SQLite cannot hold a reader
/// so (in WAL mode nothing blocks one): this runs on the servers.
async fn searches_are_bounded(backend: Backend) {
    let db = backend.fresh().await;
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), "http://127.0.0.1:9/never-checked\n").unwrap();
    crate::e2e::seed(&db, file.path());
    let args = ["--max-searches", "2"];
    let (_dashboard, base, _) = spawn(&db, "127.0.0.1:0", &args, &[]);
    let from = |last: u8| crate::dashboard_auth::client_from(IpAddr::from([127, 0, 0, last]));
    let search = |client: reqwest::Client, base: String| async move {
        let url = format!("{base}/api/dead?q=never");
        client.get(url).send().await.unwrap().status().as_u16()
    };
    let lock = LockedSites::take(&db).await;
    // Two clients' searches wait on the lock; a client's second, and a third client's, are
    // refused at once.
    let first = tokio::spawn(search(from(1), base.clone()));
    let second = tokio::spawn(search(from(2), base.clone()));
    until(
        "two searches refuse a third",
        Duration::from_secs(20),
        || async { search(from(3), base.clone()).await == 503 },
    )
    .await;
    assert_eq!(search(from(1), base.clone()).await, 429);
    lock.release().await;
    assert_eq!(first.await.unwrap(), 200);
    assert_eq!(second.await.unwrap(), 200);
    assert_eq!(search(from(3), base.clone()).await, 200);
}

/// A lock on `sites` that makes every other connection's read of it wait, held on a connection
/// of its own until [`LockedSites::release`].
enum LockedSites {
    MySql(sqlx::pool::PoolConnection<sqlx::MySql>),
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>),
}

impl LockedSites {
    async fn take(db: &TestDb) -> LockedSites {
        match db.queue().await.db() {
            crawler_queue::Db::MySql(pool) => {
                let mut conn = pool.acquire().await.unwrap();
                // The text protocol: MySQL does not prepare LOCK TABLES.
                sqlx::raw_sql("LOCK TABLES sites WRITE")
                    .execute(&mut *conn)
                    .await
                    .unwrap();
                LockedSites::MySql(conn)
            }
            crawler_queue::Db::Postgres(pool) => {
                let mut tx = pool.begin().await.unwrap();
                sqlx::raw_sql("LOCK TABLE sites IN ACCESS EXCLUSIVE MODE")
                    .execute(&mut *tx)
                    .await
                    .unwrap();
                LockedSites::Postgres(tx)
            }
            crawler_queue::Db::Sqlite(_) => panic!("SQLite cannot hold its readers"),
        }
    }

    async fn release(self) {
        match self {
            LockedSites::MySql(mut conn) => {
                sqlx::raw_sql("UNLOCK TABLES")
                    .execute(&mut *conn)
                    .await
                    .unwrap();
            }
            LockedSites::Postgres(tx) => tx.rollback().await.unwrap(),
        }
    }
}
