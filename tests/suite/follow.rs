//! Recursive checks end to end, on every backend: `crawler-seed --follow` a local site with
//! cycles, relative links, `<base>`, a redirect, links out of scope, an excluded path, a page
//! robots.txt disallows and a gzipped sitemap behind a sitemap index; two workers crawl it
//! together. Every link is checked once, each page read once, nothing out of scope or excluded
//! is read, and every broken link is reported with exactly the pages it is on. A robots.txt
//! `Crawl-delay` paces every request to its host, as the host sees them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::convert::Infallible;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crawler_tests::bins::{command, run, stderr, stdout};
use crawler_tests::static_site::{serve_static, spawn_static_site, Answer, StaticSite};
use crawler_tests::{on_every_backend, TestDb};

use crate::e2e::{drain_with_two, spawn_worker, wait};

/// The site outside the crawl's scope (another host): its page links to `/ext-only.html`,
/// which must never be asked.
async fn spawn_outside() -> StaticSite {
    let pages = HashMap::from([(
        "/ext.html".to_owned(),
        Answer::html(r#"<a href="/ext-only.html">not followed</a>"#),
    )]);
    spawn_static_site("127.0.0.2", pages).await
}

fn gzip(text: &str) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap()
}

/// The site crawled, linking to `outside`; its own address is only known once bound, so
/// absolute links to itself are written `//SELF/`, replaced here.
async fn spawn_crawled(outside: &StaticSite) -> StaticSite {
    let ext = outside.url("/ext.html");
    let ext_dead = outside.url("/ext-dead.html");
    // Bound first, to know the address the pages name.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let own = format!("http://{}", listener.local_addr().unwrap());
    let html = |s: &str| Answer::html(s.replace("//SELF", &own));
    let pages: HashMap<String, Answer> = [
        (
            "/",
            html(&format!(
                r##"<html><head><link rel="stylesheet" href="style.css"></head><body>
            <a href="docs/">docs</a> <a href="/docs/intro.html">intro</a>
            <a href="missing.html">missing</a> <a href="old">old</a>
            <a href="{ext}">outside</a> <a href="{ext_dead}">outside, dead</a>
            <a href="/excluded/page.html">excluded</a> <a href="private/secret.html">private</a>
            <img src="img/logo.png"> <img srcset="img/broken.png 2x, img/logo.png 1x">
            <a href="mailto:webmaster@example.com">mail</a> <a href="#top">top</a>
            </body></html>"##
            )),
        ),
        ("/style.css", Answer::with(200, "text/css", "a{}")),
        ("/img/logo.png", Answer::with(200, "image/png", "png")),
        (
            "/docs/",
            html(
                r#"<head><base href="/docs/guide/"></head>
            <a href="start.html">start</a> <a href="../../">home, a cycle</a>
            <!-- <a href="commented.html"> -->"#,
            ),
        ),
        (
            "/docs/intro.html",
            html(
                r#"<a href="guide/start.html?lang=en&amp;v=1">start, en</a>
            <a href="../missing.html">missing again</a> <a href="//SELF/docs/">docs</a>"#,
            ),
        ),
        (
            "/docs/guide/start.html",
            html(
                r#"<a href="../intro.html">intro, a cycle</a>
            <a href="gone.html">gone</a>"#,
            ),
        ),
        (
            "/docs/guide/start.html?lang=en&v=1",
            html("<p>no links</p>"),
        ),
        ("/old", Answer::redirect(301, "/docs/moved.html")),
        (
            "/docs/moved.html",
            html(
                r#"<a href="../missing.html">missing, third</a>
            <a href="deep.html">deep</a>"#,
            ),
        ),
        ("/docs/deep.html", html("<p>the end</p>")),
        (
            "/docs/guide/gone.html",
            Answer::with(410, "text/html", "gone"),
        ),
        (
            "/private/secret.html",
            html(r#"<a href="/private/only-here.html">hidden</a>"#),
        ),
        (
            "/excluded/page.html",
            html(r#"<a href="/excluded/child.html">never</a>"#),
        ),
        (
            "/docs/sitemap-only.html",
            html(r#"<a href="sitemap-child-dead.html">dead</a>"#),
        ),
        (
            "/robots.txt",
            Answer::with(
                200,
                "text/plain",
                "User-agent: *\nDisallow: /private/\n\nUser-agent: other\nDisallow: /\n",
            ),
        ),
        (
            "/sitemap_index.xml",
            Answer::with(
                200,
                "application/xml",
                format!(
            "<?xml version=\"1.0\"?><sitemapindex><sitemap><loc>{own}/sitemap-pages.xml.gz</loc>\
             </sitemap></sitemapindex>"),
            ),
        ),
        (
            "/sitemap-pages.xml.gz",
            Answer::with(
                200,
                "application/gzip",
                gzip(&format!(
                    "<urlset><url><loc>{own}/docs/sitemap-only.html</loc></url>\
             <url><loc>{own}/docs/intro.html</loc></url></urlset>"
                )),
            ),
        ),
    ]
    .into_iter()
    .map(|(path, answer)| (path.to_owned(), answer))
    .collect();
    serve_static(listener, pages)
}

/// The report of every site: url → (verdict, status, found_on, found_count).
fn report(db: &TestDb) -> BTreeMap<String, (String, Option<u64>, Vec<String>, u64)> {
    let out = run(command("crawler-report", db.url.expose()).args(["--all", "--format", "ndjson"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let mut sites = BTreeMap::new();
    for line in stdout(&out).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let found_on = v["found_on"].as_array().unwrap();
        let entry = (
            v["verdict"].as_str().unwrap().to_owned(),
            v["status"].as_u64(),
            // In the order found, which depends on the order pages were read: compared sorted.
            found_on
                .iter()
                .map(|r| r.as_str().unwrap().to_owned())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
            v["found_count"].as_u64().unwrap(),
        );
        let url = v["url"].as_str().unwrap().to_owned();
        assert!(
            sites.insert(url.clone(), entry).is_none(),
            "{url} reported twice"
        );
    }
    sites
}

on_every_backend!(
    async fn two_workers_crawl_a_site_reading_each_page_once(backend: Backend) {
        let outside = spawn_outside().await;
        let site = spawn_crawled(&outside).await;
        let db = backend.fresh().await;
        let own = |path: &str| site.url(path);
        let seeded = run(command("crawler-seed", db.url.expose()).args([
            "--follow",
            &own("/"),
            "--exclude",
            "/excluded/",
            "--sitemap",
            &own("/sitemap_index.xml"),
        ]));
        assert!(seeded.status.success(), "{}", stderr(&seeded));
        assert!(
            stdout(&seeded).contains("pages to follow"),
            "{}",
            stdout(&seeded)
        );

        drain_with_two(&db, Duration::from_secs(120));

        let sites = report(&db);
        let dead = |path: &str, status: u64, on: &[&str]| {
            let on: Vec<String> = on
                .iter()
                .map(|p| {
                    if p.starts_with("http") {
                        (*p).to_owned()
                    } else {
                        own(p)
                    }
                })
                .collect();
            (
                own(path),
                ("dead".to_owned(), Some(status), on.clone(), on.len() as u64),
            )
        };
        let expected_dead: BTreeMap<_, _> = [
            dead(
                "/missing.html",
                404,
                &["/", "/docs/intro.html", "/docs/moved.html"],
            ),
            dead("/img/broken.png", 404, &["/"]),
            dead("/docs/guide/gone.html", 410, &["/docs/guide/start.html"]),
            dead(
                "/docs/sitemap-child-dead.html",
                404,
                &["/docs/sitemap-only.html"],
            ),
            (
                outside.url("/ext-dead.html"),
                ("dead".to_owned(), Some(404), vec![own("/")], 1),
            ),
        ]
        .into_iter()
        .collect();
        let got_dead: BTreeMap<_, _> = sites
            .iter()
            .filter(|(_, s)| s.0 != "alive")
            .map(|(url, s)| (url.clone(), s.clone()))
            .collect();
        assert_eq!(got_dead, expected_dead);

        let alive: BTreeSet<String> = sites
            .iter()
            .filter(|(_, s)| s.0 == "alive")
            .map(|(url, _)| url.clone())
            .collect();
        let mut expected_alive: BTreeSet<String> = [
            "/",
            "/style.css",
            "/img/logo.png",
            "/docs/",
            "/docs/intro.html",
            "/docs/guide/start.html",
            "/docs/guide/start.html?lang=en&v=1",
            "/old",
            "/docs/moved.html",
            "/docs/deep.html",
            "/private/secret.html",
            "/docs/sitemap-only.html",
        ]
        .iter()
        .map(|p| own(p))
        .collect();
        expected_alive.insert(outside.url("/ext.html"));
        assert_eq!(alive, expected_alive);
        // Referrers of alive links too: the sitemap, a redirect, `<base>`, a cycle.
        assert_eq!(
            sites[&own("/docs/sitemap-only.html")].2,
            [own("/sitemap-pages.xml.gz")]
        );
        assert_eq!(sites[&own("/docs/moved.html")].2, [own("/old")]);
        assert_eq!(
            sites[&own("/docs/guide/start.html")].2,
            [own("/docs/")],
            "through <base>"
        );
        assert_eq!(
            sites[&own("/")].3,
            1,
            "found on /docs/ (`../../` under its base)"
        );

        // Each page read once (the redirect's target twice: through /old, and as itself),
        // robots.txt once for the fleet; nothing excluded, disallowed or out of scope read.
        let requests = site.requests();
        for (request, n) in &requests {
            let twice = request == "GET /docs/moved.html";
            assert!(
                *n <= 1 + usize::from(twice),
                "{request} {n} times: {requests:?}"
            );
        }
        for never in [
            "GET /excluded/page.html",
            "HEAD /excluded/page.html",
            "GET /private/secret.html",
            "GET /private/only-here.html",
            "HEAD /private/only-here.html",
            "GET /docs/commented.html",
        ] {
            assert!(!requests.contains_key(never), "{never}: {requests:?}");
        }
        assert_eq!(requests.get("GET /robots.txt"), Some(&1));
        let outside_requests = outside.requests();
        assert!(
            outside_requests.keys().all(|r| !r.contains("ext-only")),
            "{outside_requests:?}"
        );

        // The dead links by page.
        let by_page = run(command("crawler-report", db.url.expose()).args(["--dead", "--by-page"]));
        assert!(by_page.status.success(), "{}", stderr(&by_page));
        let text = stdout(&by_page);
        assert!(
            text.contains(&format!(
                "{}\n  {} 404 dead\n",
                own("/docs/moved.html"),
                own("/missing.html")
            )),
            "{text}"
        );
        assert_eq!(
            text.lines().filter(|l| !l.starts_with("  ")).count(),
            5,
            "{text}"
        );
    }
);

/// A site of `n` pages in a chain, `/p/0.html` → `/p/1.html` → …, each also linking to a dead
/// `/dead/N.html`.
async fn spawn_chain(n: usize) -> StaticSite {
    let pages = (0..n)
        .map(|i| {
            let next = i + 1;
            let body =
                format!(r#"<a href="{next}.html">next</a> <a href="/dead/{i}.html">dead</a>"#);
            (format!("/p/{i}.html"), Answer::html(body))
        })
        .collect();
    spawn_static_site("127.0.0.1", pages).await
}

on_every_backend!(
    async fn max_depth_and_max_pages_bound_what_is_read_not_what_is_checked(backend: Backend) {
        // (option, pages fetched with GET, /p/ pages checked, dead links checked):
        // --max-depth 3 reads pages 0 to 3 (depths 0 to 3); page 4 and the dead links are
        // checked. --max-pages 3 takes page 0, then page 1 and /dead/0 (the links of page 0):
        // page 2 and /dead/1 are only checked (HEAD), and nothing further is found.
        for (option, gets, pages, dead) in [("--max-depth", 4, 5, 4), ("--max-pages", 2, 3, 2)] {
            let site = spawn_chain(10).await;
            let db = backend.fresh().await;
            let seeded = run(command("crawler-seed", db.url.expose()).args([
                "--follow",
                &site.url("/p/0.html"),
                option,
                "3",
            ]));
            assert!(seeded.status.success(), "{}", stderr(&seeded));
            let mut worker = spawn_worker(&db, "w1", &["--drain"]);
            assert!(wait(&mut worker, Duration::from_secs(60)).success());
            let requests = site.requests();
            let got = requests
                .iter()
                .filter(|(r, _)| r.starts_with("GET /p/"))
                .map(|(_, n)| n)
                .sum::<usize>();
            let sites = report(&db);
            let checked = |part: &str| sites.keys().filter(|u| u.contains(part)).count();
            assert_eq!(
                (got, checked("/p/"), checked("/dead/")),
                (gets, pages, dead),
                "{option}: {requests:?}"
            );
        }
    }
);

on_every_backend!(
    async fn the_pages_over_max_pages_are_only_checked_whatever_a_pages_count_of_links(
        backend: Backend,
    ) {
        use crawler_queue::{Frontier, Links, NewCrawl, NewSite};
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let spec = NewCrawl {
            max_pages: Some(4),
            ..NewCrawl::default()
        };
        let crawl = queue.follow().create_crawl(&spec).await.unwrap();
        let frontier = Frontier {
            crawl,
            depth: 0,
            max_pages: spec.max_pages,
        };
        // Three pages a time: a list length that is no power of two.
        let links = |paths: [&str; 3]| Links {
            follow: (paths.iter())
                .map(|path| NewSite {
                    url: format!("http://a.example{path}"),
                    host: "a.example".to_owned(),
                })
                .collect(),
            ..Links::default()
        };
        let (first, second) = (links(["/1", "/2", "/3"]), links(["/4", "/5", "/6"]));
        let follow = queue.follow();
        let first = follow.add_links(None, Some(frontier), &first).await;
        let first = first.expect("three pages within --max-pages");
        let second = follow.add_links(None, Some(frontier), &second).await;
        let second = second.expect("three pages, one within --max-pages");
        let pages = |added: Option<crawler_queue::Added>| added.map(|a| (a.new, a.pages));
        assert_eq!((pages(first), pages(second)), (Some((3, 3)), Some((3, 1))));
    }
);

on_every_backend!(
    async fn links_in_files_are_checked_and_found_at_file_line_and_column(backend: Backend) {
        let site = spawn_static_site(
            "127.0.0.1",
            HashMap::from([("/ok.html".to_owned(), Answer::html("ok"))]),
        )
        .await;
        let dir = tempfile::tempdir().unwrap();
        let (ok, gone) = (site.url("/ok.html"), site.url("/gone.html"));
        let md = dir.path().join("README.md");
        let markdown = format!(
            "# Title\n\nSee [ok]({ok}) and <{gone}>.\n\n```\n{gone}?in-code\n```\n[rel](docs/x.md)\n"
        );
        std::fs::write(&md, markdown).unwrap();
        let html = dir.path().join("page.html");
        let page = format!("<p>\n<a href=\"{gone}\">gone</a>\n<a href=\"other.html\">relative</a>");
        std::fs::write(&html, page).unwrap();
        let db = backend.fresh().await;
        let seeded = run(command("crawler-seed", db.url.expose())
            .arg("--links-in")
            .arg(&md)
            .arg(&html));
        assert!(seeded.status.success(), "{}", stderr(&seeded));
        assert!(
            stdout(&seeded).contains("relative links skipped 2"),
            "{}",
            stdout(&seeded)
        );
        let mut worker = spawn_worker(&db, "w1", &["--drain"]);
        assert!(wait(&mut worker, Duration::from_secs(60)).success());

        let sites = report(&db);
        let at = |file: &std::path::Path, line: u32, col: usize| {
            format!("{}:{line}:{col}", file.display())
        };
        // Where each URL starts on line 3 of the Markdown file, in characters (all ASCII).
        let (ok_at, gone_at) = (
            "See [ok](".len() + 1,
            format!("See [ok]({ok}) and <").len() + 1,
        );
        assert_eq!(sites.len(), 2, "{sites:?}");
        assert_eq!(
            sites[&ok],
            ("alive".into(), Some(200), vec![at(&md, 3, ok_at)], 1)
        );
        assert_eq!(
            sites[&gone],
            (
                "dead".into(),
                Some(404),
                vec![at(&md, 3, gone_at), at(&html, 2, "<a href=\"".len() + 1)],
                2
            )
        );
    }
);

/// A site whose every request is recorded with the time it arrived, as `METHOD /path`.
struct TimedSite {
    addr: std::net::SocketAddr,
    seen: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl TimedSite {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request so far, in the order they arrived.
    fn seen(&self) -> Vec<(Instant, String)> {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        seen.sort_by_key(|(at, _)| *at);
        seen
    }
}

/// Serves `pages` (path → status, content type, body; anything else a 404) on 127.0.0.1.
async fn spawn_timed_site(pages: HashMap<&'static str, (&'static str, String)>) -> TimedSite {
    use bytes::Bytes;
    use http_body_util::Full;
    use hyper::body::Incoming;
    use hyper::{Request, Response};

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::<Mutex<Vec<(Instant, String)>>>::default();
    let (log, pages) = (seen.clone(), Arc::new(pages));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (log, pages) = (log.clone(), pages.clone());
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let path = request.uri().path().to_owned();
                let request = format!("{} {path}", request.method());
                log.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((Instant::now(), request));
                let (status, content_type, body) = match pages.get(path.as_str()) {
                    Some((content_type, body)) => (200, *content_type, body.clone()),
                    None => (404, "text/plain", "not found".to_owned()),
                };
                let response = Response::builder()
                    .status(status)
                    .header("content-type", content_type)
                    .body(Full::new(Bytes::from(body)))
                    .unwrap();
                async move { Ok::<_, Infallible>(response) }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    TimedSite { addr, seen }
}

/// Four pages and an image, three files no page links to, and a robots.txt that asks for a
/// second between requests.
async fn spawn_delayed_site() -> TimedSite {
    let html = |body: &str| ("text/html", body.to_owned());
    let pages = HashMap::from([
        (
            "/",
            html(r#"<a href="a.html">a</a> <a href="b.html">b</a> <a href="c.html">c</a>"#),
        ),
        ("/a.html", html(r#"<img src="logo.png">"#)),
        ("/b.html", html("<p>b</p>")),
        ("/c.html", html("<p>c</p>")),
        ("/logo.png", ("image/png", "png".to_owned())),
        ("/files/1.pdf", ("application/pdf", "pdf".to_owned())),
        ("/files/2.pdf", ("application/pdf", "pdf".to_owned())),
        ("/files/3.pdf", ("application/pdf", "pdf".to_owned())),
        (
            "/robots.txt",
            (
                "text/plain",
                "User-agent: other\nDisallow: /\n\nUser-agent: *\nCrawl-delay: 1\n".to_owned(),
            ),
        ),
    ]);
    spawn_timed_site(pages).await
}

on_every_backend!(
    async fn a_crawl_delay_paces_every_request_to_its_host_across_the_fleet(backend: Backend) {
        for ignore_robots in [false, true] {
            let site = spawn_delayed_site().await;
            let db = backend.fresh().await;
            let mut seed = command("crawler-seed", db.url.expose());
            seed.args(["--follow", &site.url("/")]);
            if ignore_robots {
                seed.arg("--ignore-robots");
            }
            let seeded = run(&mut seed);
            assert!(seeded.status.success(), "{}", stderr(&seeded));
            // Two workers, each at the FAST settings' 100,000 requests a second per host.
            drain_with_two(&db, Duration::from_secs(60));

            let seen = site.seen();
            let asked: BTreeSet<&str> = seen.iter().map(|(_, r)| r.as_str()).collect();
            for page in ["GET /", "GET /a.html", "GET /b.html", "GET /c.html"] {
                assert!(asked.contains(page), "{page} never asked: {seen:?}");
            }
            assert!(
                asked.iter().any(|r| r.ends_with(" /logo.png")),
                "the image is checked: {seen:?}"
            );
            let gaps: Vec<Duration> = seen.windows(2).map(|p| p[1].0 - p[0].0).collect();
            if ignore_robots {
                assert!(!asked.contains("GET /robots.txt"), "{seen:?}");
                assert!(
                    gaps.iter().any(|g| *g < Duration::from_millis(500)),
                    "--ignore-robots ignores the delay too: {gaps:?}"
                );
            } else {
                assert_eq!(seen[0].1, "GET /robots.txt", "{seen:?}");
                // robots.txt, four pages, the image: a second between any two sent. The site
                // stamps arrivals, which a loaded machine can delay by a fraction of that, so
                // the bound is 750 ms (unpaced requests come milliseconds apart).
                assert!(seen.len() >= 6, "{seen:?}");
                assert!(
                    gaps.iter().all(|g| *g >= PACED),
                    "requests closer than the Crawl-delay: {gaps:?} ({seen:?})"
                );
                links_only_checked_are_paced_by_a_fresh_worker(&site, &db);
            }
        }
    }
);

/// The least gap between two arrivals of requests paced by a Crawl-delay of 1 s.
const PACED: Duration = Duration::from_millis(750);

/// After the crawl, links on its host that are only checked (a list, no page), by a worker that
/// has read no page there: it takes the delay from the fleet's robots.txt, not fetched again.
fn links_only_checked_are_paced_by_a_fresh_worker(site: &TimedSite, db: &TestDb) {
    let before = site.seen().len();
    let mut list = tempfile::NamedTempFile::new().unwrap();
    for n in 1..=3 {
        writeln!(list, "{}", site.url(&format!("/files/{n}.pdf"))).unwrap();
    }
    let seeded = run(command("crawler-seed", db.url.expose()).arg(list.path()));
    assert!(seeded.status.success(), "{}", stderr(&seeded));
    let mut worker = spawn_worker(db, "w3", &["--drain"]);
    assert!(wait(&mut worker, Duration::from_secs(60)).success());
    let seen = site.seen().split_off(before);
    assert!(seen.len() >= 3, "{seen:?}");
    assert!(seen.iter().all(|(_, r)| r.contains("/files/")), "{seen:?}");
    let gaps: Vec<Duration> = seen.windows(2).map(|p| p[1].0 - p[0].0).collect();
    assert!(
        gaps.iter().all(|g| *g >= PACED),
        "links only checked, closer than the Crawl-delay: {gaps:?} ({seen:?})"
    );
}

on_every_backend!(
    async fn pages_stored_together_keep_each_pages_claim_as_its_own(backend: Backend) {
        use crawler_queue::{Frontier, Links, NewCrawl, NewSite, Page, PageLinks};
        const LEASE: Duration = Duration::from_secs(600);
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let crawl = queue
            .follow()
            .create_crawl(&NewCrawl::default())
            .await
            .unwrap();
        let site = |path: &str| NewSite {
            url: format!("http://a.example{path}"),
            host: "a.example".to_owned(),
        };
        let start = Frontier {
            crawl,
            depth: 0,
            max_pages: None,
        };
        let pages = Links {
            follow: vec![site("/1"), site("/2"), site("/3")],
            ..Links::default()
        };
        queue
            .follow()
            .add_links(None, Some(start), &pages)
            .await
            .unwrap();
        let batch = queue.claim("w", 10, LEASE).await.unwrap();
        assert_eq!(batch.sites.len(), 3);
        let read = |i: usize, token: i64| {
            let url = batch.sites[i].url.clone();
            PageLinks {
                page: Page {
                    site_id: batch.sites[i].id,
                    token,
                },
                links: Links {
                    referrer: Some(url.clone()),
                    follow: vec![site(&format!("/from-{i}"))],
                    check: vec![site("/shared")],
                },
                url,
                anchors: None,
                frontier: Frontier { depth: 1, ..start },
            }
        };
        // The second page's claim is not this token's: it stores nothing, the others all.
        let group = [
            read(0, batch.token),
            read(1, batch.token + 1),
            read(2, batch.token),
        ];
        let added = queue.follow().add_pages(&group).await.unwrap();
        let new: Vec<Option<u64>> = added.iter().map(|a| a.as_ref().map(|a| a.new)).collect();
        assert_eq!(new, [Some(2), None, Some(1)]);
        let due: BTreeSet<String> = queue
            .claim("w", 10, LEASE)
            .await
            .unwrap()
            .sites
            .into_iter()
            .map(|s| s.url)
            .collect();
        let want = ["/from-0", "/from-2", "/shared"].map(|p| format!("http://a.example{p}"));
        assert_eq!(due, want.into());
        // Stored once: the same pages again add nothing.
        let again = queue.follow().add_pages(&group).await.unwrap();
        assert_eq!(again, [None, None, None]);
    }
);
