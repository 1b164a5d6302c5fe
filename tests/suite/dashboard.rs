//! `crawler-dashboard`: its JSON and control endpoints on every backend, and the page in a real
//! browser (headless Chromium, SQLite) while a worker crawls: totals that match the database,
//! a plot that draws, numbers that change without a reload, Pause and Resume that act on the
//! fleet, a search; and a browser that reaches nothing but the dashboard.

use std::time::{Duration, Instant};

use crawler_queue::{Queue, Verdict};
use crawler_tests::bins::command;
use crawler_tests::site::{spawn_site, Page};
use crawler_tests::{on_every_backend, Backend, TestDb};
use fantoccini::{Client, Locator};

use crate::browser::{Driver, Proxy};
use crate::e2e::{seed, url_file, wait};
use crate::pause::{spawn_logged, spawn_logged_worker, wait_for_line, Killed, PAUSABLE};
use crawler_tests::wait::until;

/// The database URL's password, if it has one (the MariaDB tests' does).
fn password(db: &TestDb) -> Option<String> {
    let url = url::Url::parse(db.url.expose()).ok()?;
    url.password().map(str::to_owned)
}

/// A dashboard on a free port of 127.0.0.1; returns it and its base URL.
fn spawn_dashboard(db: &TestDb, extra: &[&str]) -> (Killed, String) {
    let mut cmd = command("crawler-dashboard", db.url.expose());
    cmd.args(["--listen", "127.0.0.1:0"]).args(extra);
    let (child, lines) = spawn_logged(&mut cmd, "crawler_dashboard=info");
    let line = wait_for_line(&lines, "dashboard on http://", Duration::from_secs(30));
    if let Some(password) = password(db) {
        assert!(!line.contains(&password), "the password in the log: {line}");
    }
    let url = line[line.find("http://").unwrap()..]
        .split_whitespace()
        .next()
        .unwrap();
    // The log goes on; nobody reads it.
    std::thread::spawn(move || for _ in lines {});
    (child, url.trim_end_matches('/').to_owned())
}

on_every_backend!(
    async fn the_dashboard_serves_its_json_and_changes_nothing_unless_allowed(backend: Backend) {
        let db = backend.fresh().await;
        let site = spawn_site().await;
        let (file, _) = url_file(&site, 4, &[Page::Dead]);
        seed(&db, file.path());
        let queue = db.queue().await;
        let http = reqwest::Client::new();

        let (_read_only, base) = spawn_dashboard(&db, &[]);
        let state = get_json(&http, &format!("{base}/api/state")).await;
        assert_eq!(state["allow_control"], false);
        if let Some(password) = password(&db) {
            assert!(!state.to_string().contains(&password));
        }
        assert_eq!(control(&http, &base, "pause").await, 403);
        assert!(!queue.control().is_paused().await.unwrap());
        for asset in ["/", "/app.js", "/style.css"] {
            let page = http.get(format!("{base}{asset}")).send().await.unwrap();
            assert_eq!(page.status(), 200, "{asset}");
            assert!(!page.text().await.unwrap().contains("://cdn"), "{asset}");
        }

        let (_control, base) = spawn_dashboard(&db, &["--allow-control"]);
        let bare = http.post(format!("{base}/api/pause")).send().await.unwrap();
        assert_eq!(bare.status(), 403, "a control request without its header");
        assert!(!queue.control().is_paused().await.unwrap());
        assert_eq!(control(&http, &base, "pause").await, 200);
        assert!(queue.control().is_paused().await.unwrap());
        let get = http.get(format!("{base}/api/resume")).send().await.unwrap();
        assert_eq!(get.status(), 405);
        assert_eq!(control(&http, &base, "resume").await, 200);
        assert!(!queue.control().is_paused().await.unwrap());

        // The latest dead sites, searched with LIKE's wildcards taken as written.
        let batch = queue.claim("t", 10, Duration::from_secs(60)).await.unwrap();
        let finding = crawler_queue::Finding {
            verdict: Verdict::Dead,
            status: Some(404),
            ..crawler_tests::findings::alive()
        };
        let outcomes = crawler_tests::findings::outcomes_of(batch.sites, &finding);
        queue.complete(&outcomes).await.unwrap();
        let dead = |q: &str| {
            let url = format!("{base}/api/dead?q={q}");
            let http = http.clone();
            async move { get_json(&http, &url).await.as_array().unwrap().len() }
        };
        assert_eq!(dead("").await, 4);

        // The history, from checked_at: the 4 dead sites, checked by worker "t", in the whole
        // crawl and in the last hour.
        for range in ["0", "3600"] {
            let plot = get_json(&http, &format!("{base}/api/history?range={range}")).await;
            let sum = |series: &serde_json::Value, name: &str| -> i64 {
                let series = series.as_array().unwrap();
                let found = series.iter().find(|s| s["name"] == name);
                let counts = found.map(|s| s["counts"].as_array().unwrap().clone());
                counts
                    .unwrap_or_default()
                    .iter()
                    .map(|n| n.as_i64().unwrap())
                    .sum()
            };
            assert_eq!(sum(&plot["verdicts"], "dead"), 4, "{plot}");
            assert_eq!(sum(&plot["verdicts"], "alive"), 0, "{plot}");
            assert_eq!(sum(&plot["workers"], "t"), 4, "{plot}");
            assert_eq!(
                plot["verdicts"].as_array().unwrap().len(),
                Verdict::ALL.len()
            );
            assert!(plot["bucket_ms"].as_i64().unwrap() >= 5000, "{plot}");
        }
        assert_eq!(dead("%2Fdead%2F3").await, 1);
        assert_eq!(
            dead("%25").await,
            0,
            "a % in the search is a %, not a wildcard"
        );
        assert_eq!(
            dead("_").await,
            0,
            "an _ in the search is an _, not a wildcard"
        );

        // Hosts in trouble with their state and holder, the workers, and the totals once
        // sampled.
        queue
            .parts()
            .take("holder", 7, 1024, Duration::from_secs(60))
            .await
            .unwrap();
        let throttled = |host: &str, secs| crawler_queue::Throttled {
            host: host.into(),
            status: 429,
            retry_after: Some(Duration::from_secs(secs)),
        };
        queue
            .hosts()
            .record_throttled(&[
                throttled("slow.example", 3600),
                throttled("past.example", 0),
            ])
            .await
            .unwrap();
        let pace = crawler_queue::HostPace {
            host: "slow.example".into(),
            rate: Some(2.5),
            deferred: Duration::from_secs(3600),
        };
        queue.hosts().record_paces(&[pace]).await.unwrap();
        let why = crawler_queue::Unreachable {
            kind: crawler_queue::ErrorKind::Dns,
            detail: "decided for the host: the name does not resolve".into(),
        };
        queue
            .hosts()
            .record_unreachable("gone.example", Some(&why))
            .await
            .unwrap();
        queue.register("w1", "machine", 1).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let state = loop {
            let state = get_json(&http, &format!("{base}/api/state")).await;
            if state["totals"]["dead"] == 4 && state["totals"]["done"] == 4 {
                break state;
            }
            assert!(Instant::now() < deadline, "{state}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let backoffs = state["backoffs"].as_array().unwrap();
        assert_eq!(backoffs.len(), 2, "{state}");
        assert_eq!(backoffs[0]["host"], "gone.example");
        assert_eq!(backoffs[0]["state"], "unreachable");
        assert_eq!(backoffs[0]["cause"], "dns");
        assert_eq!(backoffs[1]["host"], "slow.example");
        assert_eq!(backoffs[1]["state"], "deferred");
        assert_eq!(backoffs[1]["owner"], "holder");
        assert_eq!(backoffs[1]["last_status"], 429);
        assert_eq!(state["workers"][0]["id"], "w1");
        assert!(state["workers"][0]["heartbeat_age_ms"].as_i64().unwrap() >= 0);
        assert_eq!(
            (
                state["totals"]["done"].as_i64(),
                state["totals"]["pending"].as_i64()
            ),
            (Some(4), Some(0))
        );
    }
);

async fn get_json(http: &reqwest::Client, url: &str) -> serde_json::Value {
    let body = http.get(url).send().await.unwrap().text().await.unwrap();
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{url}: {e}: {body}"))
}

/// The status of a control request (`pause` or `resume`) with the header the page sends.
async fn control(http: &reqwest::Client, base: &str, action: &str) -> u16 {
    http.post(format!("{base}/api/{action}"))
        .header("x-crawler-control", "1")
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The text of the element with `id`, as the page shows it; empty while the page has no such
/// element (a form's answer still loading). Read by one script, as [`plotted`] reads, so no
/// element handle can go stale between finding the element and reading it.
async fn text(browser: &Client, id: &str) -> String {
    let script = "const e = document.getElementById(arguments[0]); return e ? e.innerText : '';";
    let value = browser
        .execute(script, vec![serde_json::json!(id)])
        .await
        .unwrap();
    value.as_str().unwrap_or_default().to_owned()
}

/// The series a plot draws: each path's name and its points. One script reads them all: the
/// page redraws its plots every 10 s, so element handles fetched one call at a time could go
/// stale between the calls (a flaky "stale element reference" under load).
async fn plotted(browser: &Client, plot: &str) -> Vec<(String, usize)> {
    let script = "return [...document.querySelectorAll('#' + arguments[0] + ' path.series')]
        .map((p) => [p.getAttribute('data-name') || '', p.getAttribute('d') || '']);";
    let value = browser
        .execute(script, vec![serde_json::json!(plot)])
        .await
        .unwrap();
    let series: Vec<(String, String)> = serde_json::from_value(value).unwrap();
    series
        .into_iter()
        .map(|(name, d)| (name, d.matches(['M', 'L']).count()))
        .collect()
}

/// Clicks the element with `id`.
async fn click(browser: &Client, id: &str) {
    browser
        .find(Locator::Id(id))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// The number the element with `id` shows (`12,345` is 12345); `None` while it shows none.
async fn number(browser: &Client, id: &str) -> Option<i64> {
    let digits: String = text(browser, id)
        .await
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// What the page's totals should read: the database's counts.
async fn database_totals(queue: &Queue) -> Vec<(&'static str, i64)> {
    let states = queue.reports().state_counts().await.unwrap();
    let verdicts = queue.reports().verdict_counts().await.unwrap();
    let mut totals = vec![
        ("pending", states.pending),
        ("claimed", states.claimed),
        ("done", states.done),
    ];
    for v in Verdict::ALL {
        totals.push((v.as_str(), verdicts.get(v) as i64));
    }
    totals
}

async fn page_totals(browser: &Client, keys: &[&'static str]) -> Vec<(&'static str, i64)> {
    let mut totals = Vec::new();
    for key in keys {
        totals.push((
            *key,
            number(browser, &format!("total-{key}")).await.unwrap_or(-1),
        ));
    }
    totals
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_dashboard_in_a_browser_shows_the_crawl_live_and_pauses_and_resumes_it() {
    crate::browser::require_browser();
    let proxy = Proxy::spawn().await;
    let site = spawn_site().await;
    let db = Backend::Sqlite.fresh().await;
    let (file, expected) = url_file(
        &site,
        120,
        &[Page::Slow, Page::Slow, Page::Slow, Page::Dead],
    );
    seed(&db, file.path());
    let queue = db.queue().await;
    let (_dashboard, base) = spawn_dashboard(&db, &["--allow-control"]);
    let driver = Driver::spawn();
    let browser = driver.browser(&proxy).await;
    browser.goto(&format!("{base}/")).await.unwrap();
    assert_eq!(browser.title().await.unwrap(), "crawler dashboard");

    // Before any worker: the page shows the seeded list, all pending.
    until(
        "the page shows the pending sites",
        Duration::from_secs(20),
        || async { number(&browser, "total-pending").await == Some(120) },
    )
    .await;
    let (mut worker, lines) = spawn_logged_worker(&db, "w", PAUSABLE);

    // A live update: the number done moves while the page stays loaded.
    let first = number(&browser, "total-done").await.unwrap();
    until(
        "the page's done count changes without a reload",
        Duration::from_secs(30),
        || async {
            number(&browser, "total-done")
                .await
                .is_some_and(|n| n > first)
        },
    )
    .await;
    until(
        "the page lists the worker",
        Duration::from_secs(10),
        || async { text(&browser, "workers").await.contains('w') },
    )
    .await;

    // Pause from the page: the database says paused, the worker stops claiming and starts
    // no request; what it holds stays held.
    click(&browser, "pause").await;
    until(
        "the database says paused",
        Duration::from_secs(10),
        || async { queue.control().is_paused().await.unwrap() },
    )
    .await;
    wait_for_line(&lines, "fleet paused", Duration::from_secs(10));
    let pending = queue.reports().state_counts().await.unwrap().pending;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let counts = queue.reports().state_counts().await.unwrap();
    assert!(
        counts.pending >= pending && counts.pending > 0,
        "claimed while paused: {pending} then {counts:?}"
    );
    until("the page says paused", Duration::from_secs(10), || async {
        text(&browser, "state").await == "paused"
    })
    .await;

    // Resume from the page: the crawl finishes.
    click(&browser, "resume").await;
    until(
        "the database says resumed",
        Duration::from_secs(10),
        || async { !queue.control().is_paused().await.unwrap() },
    )
    .await;
    assert!(wait(&mut worker.0, Duration::from_secs(120)).success());
    crate::e2e::assert_report_matches(&db, &expected);
    // The plot (read every 10 s, from the database) draws the crawl's verdicts.
    until("the plot draws", Duration::from_secs(30), || async {
        let series = plotted(&browser, "plot-verdicts").await;
        series.iter().any(|(name, _)| name == "dead") && series.iter().all(|(_, n)| *n >= 2)
    })
    .await;

    // The totals shown are the database's.
    let want = database_totals(&queue).await;
    let keys: Vec<&'static str> = want.iter().map(|(k, _)| *k).collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let shown = page_totals(&browser, &keys).await;
        if shown == want {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the page shows {shown:?}, the database {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // The search filters the dead links on the server.
    let search = browser.find(Locator::Id("search")).await.unwrap();
    search.send_keys("/dead/11").await.unwrap();
    until(
        "the dead links filtered",
        Duration::from_secs(10),
        || async {
            let rows = text(&browser, "dead").await;
            let urls: Vec<&str> = rows.lines().filter(|l| l.contains("http://")).collect();
            // Dead pages are every fourth (3, 7, 11…): /dead/11, /111, /115 and /119 match.
            urls.len() == 4 && urls.iter().all(|l| l.contains("/dead/11"))
        },
    )
    .await;

    // Nothing left loopback; and the proxy does catch what would.
    assert_eq!(
        proxy.seen(),
        Vec::<String>::new(),
        "the browser reached beyond the dashboard"
    );
    let _ = browser.goto("http://proxy-check.invalid/").await;
    let seen = proxy.seen();
    assert!(
        seen.len() == 1 && seen[0].contains("proxy-check.invalid"),
        "a request off loopback must reach the recording proxy: {seen:?}"
    );
    browser.close().await.unwrap();
    drop(driver);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dashboard_opened_after_a_finished_crawl_shows_its_history_behind_the_login_form() {
    crate::browser::require_browser();
    let proxy = Proxy::spawn().await;
    let db = Backend::Sqlite.fresh().await;
    // Two lists, one after the other, each drained by a worker of its own.
    let mut expected = std::collections::HashMap::new();
    for id in ["first", "second"] {
        let site = spawn_site().await;
        let (file, list) = url_file(&site, 20, &[Page::Alive, Page::Alive, Page::Dead]);
        seed(&db, file.path());
        let mut worker = crate::e2e::spawn_worker(&db, id, &["--drain"]);
        assert!(wait(&mut worker, Duration::from_secs(120)).success());
        expected.extend(list);
    }
    crate::e2e::assert_report_matches(&db, &expected);

    // Started after the crawl: what it plots comes from the database.
    let token = "browser-token-0123456789abcdef";
    let token_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(token_file.path(), token).unwrap();
    let path = token_file.path().to_str().unwrap();
    let (_dashboard, base) = spawn_dashboard(&db, &["--token-file", path]);
    let driver = Driver::spawn();
    let browser = driver.browser(&proxy).await;
    browser.goto(&format!("{base}/")).await.unwrap();
    assert_eq!(browser.title().await.unwrap(), "crawler dashboard: log in");
    let field = browser.find(Locator::Id("token")).await.unwrap();
    field.send_keys("not-the-token-at-all").await.unwrap();
    click(&browser, "login").await;
    until(
        "a wrong token is refused",
        Duration::from_secs(10),
        || async { text(&browser, "login-error").await.contains("wrong token") },
    )
    .await;
    let field = browser.find(Locator::Id("token")).await.unwrap();
    field.send_keys(token).await.unwrap();
    click(&browser, "login").await;
    until(
        "the login opens the page",
        Duration::from_secs(10),
        || async { browser.title().await.unwrap() == "crawler dashboard" },
    )
    .await;
    let cookies = browser.get_all_cookies().await.unwrap();
    let session = cookies.iter().find(|c| c.name() == "crawler_session");
    let session = session.expect("the session cookie");
    assert_eq!(session.http_only(), Some(true));
    assert_eq!(format!("{:?}", session.same_site()), "Some(Strict)");
    assert_ne!(session.value(), token);

    // Both plots, with a line per verdict found and per worker, their axes and units.
    until("the verdicts plotted", Duration::from_secs(20), || async {
        let names: Vec<String> = plotted(&browser, "plot-verdicts")
            .await
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        names == ["alive", "dead"]
    })
    .await;
    let workers: Vec<String> = plotted(&browser, "plot-workers")
        .await
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(workers, ["first", "second"]);
    let legend = text(&browser, "legend-verdicts").await;
    let dead = expected.values().filter(|p| **p == Page::Dead).count();
    assert!(
        legend.contains(&format!("alive {}", 40 - dead))
            && legend.contains(&format!("dead {dead}")),
        "{legend}"
    );
    let legend = text(&browser, "legend-workers").await;
    assert_eq!(legend.matches(" 20").count(), 2, "{legend}");
    let axes = browser
        .find(Locator::Id("plot-verdicts"))
        .await
        .unwrap()
        .html(false)
        .await
        .unwrap();
    assert!(
        axes.contains("/min") && axes.contains("class=\"axis\""),
        "{axes}"
    );
    assert!(text(&browser, "span").await.contains("in buckets of"));

    // Another range: the crawl was within the last 15 minutes, so it shows the same.
    browser
        .find(Locator::Css("#range option[value='900']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until("the range changes", Duration::from_secs(10), || async {
        text(&browser, "span").await.contains("buckets of 10 s")
    })
    .await;
    assert_eq!(plotted(&browser, "plot-verdicts").await.len(), 2);

    assert_eq!(
        proxy.seen(),
        Vec::<String>::new(),
        "the browser reached beyond the dashboard"
    );
    browser.close().await.unwrap();
    drop(driver);
}

/// The attacker's site: a name that resolves to loopback in the test's browser.
const ATTACKER: &str = "rebind.attacker.test";

/// The port of a base URL.
fn port_of(base: &str) -> u16 {
    base.rsplit(':').next().unwrap().parse().unwrap()
}

/// An attacker's site on 127.0.0.1, serving `pages` (path, HTML) to whoever asks; returns its
/// port.
async fn spawn_attacker(pages: Vec<(&'static str, String)>) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let pages = std::sync::Arc::new(pages);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let pages = pages.clone();
            tokio::spawn(async move {
                let mut head = vec![0; 8192];
                let n = stream.read(&mut head).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&head[..n]);
                let path = head.split_whitespace().nth(1).unwrap_or("/");
                let page = pages.iter().find(|(p, _)| *p == path).map(|(_, html)| html);
                let (status, body) = page.map_or(("404 Not Found", ""), |b| ("200 OK", b));
                let answer = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_page_of_another_site_can_neither_read_nor_pause_nor_log_out_the_dashboard() {
    crate::browser::require_browser();
    let proxy = Proxy::spawn().await;
    let db = Backend::Sqlite.fresh().await;
    let site = spawn_site().await;
    let (file, _) = url_file(&site, 4, &[Page::Dead]);
    seed(&db, file.path());
    let queue = db.queue().await;
    // The setup the review attacked: open on loopback, with the controls.
    let (_open, open) = spawn_dashboard(&db, &["--allow-control"]);
    let token = "browser-token-0123456789abcdef";
    let token_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(token_file.path(), token).unwrap();
    let path = token_file.path().to_str().unwrap();
    let (_closed, closed) = spawn_dashboard(&db, &["--token-file", path]);
    let pause = format!(
        "<!doctype html><title>attack</title><script>
         fetch('{open}/api/pause', {{ method: 'POST', headers: {{ 'X-Crawler-Control': '1' }} }})
           .then((r) => {{ document.title = 'answered ' + r.status; }},
                 (e) => {{ document.title = 'failed'; }});
         </script>"
    );
    let logout = format!(
        "<!doctype html><title>attack</title>
         <form id='f' method='post' action='{closed}/logout'></form>
         <script>document.getElementById('f').submit();</script>"
    );
    let attacker = spawn_attacker(vec![("/pause", pause), ("/logout", logout)]).await;
    let driver = Driver::spawn();
    let browser = driver.browser_resolving(&proxy, &[ATTACKER]).await;

    // After a DNS rebinding: the attacker's name points at the dashboard. Its page, and its
    // scripts' requests, get 421: nothing of the crawl, no pause.
    browser
        .goto(&format!("http://{ATTACKER}:{}/", port_of(&open)))
        .await
        .unwrap();
    let body = text_of_page(&browser).await;
    assert!(body.contains("not to that name"), "{body}");
    let script = "return (async () => {
        const state = await fetch('/api/state');
        const pause = await fetch('/api/pause',
            { method: 'POST', headers: { 'X-Crawler-Control': '1' } });
        return [state.status, pause.status, await state.text()];
    })();";
    let got = browser.execute(script, vec![]).await.unwrap();
    assert_eq!(got[0], 421, "{got}");
    assert_eq!(got[1], 421, "{got}");
    assert!(!got[2].as_str().unwrap().contains("totals"), "{got}");
    assert!(!queue.control().is_paused().await.unwrap());

    // A page of the attacker's own site asks the dashboard to pause: refused.
    browser
        .goto(&format!("http://{ATTACKER}:{attacker}/pause"))
        .await
        .unwrap();
    until(
        "the attack's request ends",
        Duration::from_secs(10),
        || async { browser.title().await.unwrap() != "attack" },
    )
    .await;
    assert_eq!(
        browser.title().await.unwrap(),
        "failed",
        "its preflight refused"
    );
    assert!(!queue.control().is_paused().await.unwrap());

    // Logged in to the dashboard with a token, then on the attacker's page, whose form posts
    // to /logout: refused as cross-origin, and the session lives on.
    browser.goto(&format!("{closed}/")).await.unwrap();
    let field = browser.find(Locator::Id("token")).await.unwrap();
    field.send_keys(token).await.unwrap();
    click(&browser, "login").await;
    until("logged in", Duration::from_secs(10), || async {
        browser.title().await.unwrap() == "crawler dashboard"
    })
    .await;
    browser
        .goto(&format!("http://{ATTACKER}:{attacker}/logout"))
        .await
        .unwrap();
    until("the form posted", Duration::from_secs(10), || async {
        text_of_page(&browser)
            .await
            .contains("must come from the dashboard's own page")
    })
    .await;
    browser.goto(&format!("{closed}/")).await.unwrap();
    assert_eq!(browser.title().await.unwrap(), "crawler dashboard");

    assert_eq!(
        proxy.seen(),
        Vec::<String>::new(),
        "the browser reached beyond loopback"
    );
    browser.close().await.unwrap();
    drop(driver);
}

/// The text the browser shows of the page it is on.
async fn text_of_page(browser: &Client) -> String {
    let value = browser
        .execute(
            "return document.body ? document.body.innerText : '';",
            vec![],
        )
        .await
        .unwrap();
    value.as_str().unwrap_or_default().to_owned()
}

/// Claims every due site of `queue` and gives each the verdict `of` its URL says (alive or
/// dead), as a worker would.
async fn pass(queue: &Queue, of: impl Fn(&str) -> Verdict) {
    use crawler_tests::findings::{alive, outcomes_of};
    let batch = queue
        .claim("rot", 100, Duration::from_secs(600))
        .await
        .unwrap();
    let mut outcomes = Vec::new();
    for site in batch.sites {
        let verdict = of(&site.url);
        let finding = crawler_queue::Finding {
            verdict,
            status: Some(if verdict == Verdict::Dead { 404 } else { 200 }),
            ..alive()
        };
        outcomes.extend(outcomes_of([site], &finding));
    }
    queue.complete(&outcomes).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_rot_panel_plots_what_broke_and_recovered_and_lists_the_latest_changes() {
    crate::browser::require_browser();
    let proxy = Proxy::spawn().await;
    let db = Backend::Sqlite.fresh().await;
    let queue = db.queue().await;
    let sites: Vec<crawler_queue::NewSite> = (1..=4)
        .map(|n| crawler_queue::NewSite {
            url: format!("https://a.example/{n}"),
            host: "a.example".into(),
        })
        .collect();
    queue.seed(&sites, false).await.unwrap();
    // The first pass: 2 dead (a new link, dead); then 1 and 4 die and 2 recovers.
    pass(&queue, |url| match url.ends_with("/2") {
        true => Verdict::Dead,
        false => Verdict::Alive,
    })
    .await;
    queue.reaping().recheck(Duration::ZERO).await.unwrap();
    pass(&queue, |url| {
        match url.ends_with("/1") || url.ends_with("/4") {
            true => Verdict::Dead,
            false => Verdict::Alive,
        }
    })
    .await;

    let (_dashboard, base) = spawn_dashboard(&db, &[]);
    let http = reqwest::Client::new();
    let rot = get_json(&http, &format!("{base}/api/rot?range=86400")).await;
    let total = |k: usize| -> i64 {
        rot["series"][k]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_i64().unwrap())
            .sum()
    };
    assert_eq!(
        (rot["series"][0]["name"].as_str(), total(0)),
        (Some("newly dead"), 3),
        "{rot}"
    );
    assert_eq!(
        (rot["series"][1]["name"].as_str(), total(1)),
        (Some("recovered"), 1)
    );
    assert_eq!(rot["bucket_ms"], 3_600_000);
    let latest = rot["latest"].as_array().unwrap();
    assert_eq!(latest.len(), 4, "every site's current verdict: {rot}");
    assert_eq!(
        latest[3]["url"], "https://a.example/3",
        "the oldest change last"
    );
    assert_eq!(latest[3]["previous_verdict"], serde_json::Value::Null);

    let driver = Driver::spawn();
    let browser = driver.browser(&proxy).await;
    browser.goto(&format!("{base}/")).await.unwrap();
    until("the rot plotted", Duration::from_secs(20), || async {
        let names: Vec<String> = plotted(&browser, "plot-rot")
            .await
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        names == ["newly dead", "recovered"]
    })
    .await;
    let legend = text(&browser, "legend-rot").await;
    assert!(
        legend.contains("newly dead 3") && legend.contains("recovered 1"),
        "{legend}"
    );
    let axes = browser
        .find(Locator::Id("plot-rot"))
        .await
        .unwrap()
        .html(false)
        .await
        .unwrap();
    assert!(axes.contains("/hour"), "{axes}");
    let changes = text(&browser, "changes").await;
    let rows: Vec<&str> = changes.lines().collect();
    assert_eq!(rows.len(), 4, "{changes}");
    assert!(
        rows.iter()
            .any(|r| r.starts_with("https://a.example/2\talive\tdead\t200")),
        "{changes}"
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("https://a.example/3\talive\tnew\t200")),
        "{changes}"
    );
    assert_eq!(
        proxy.seen(),
        Vec::<String>::new(),
        "the browser reached beyond the dashboard"
    );
    browser.close().await.unwrap();
    drop(driver);
}
