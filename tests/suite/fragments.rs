//! Fragments (`page#section`) end to end, on every backend: a crawl of real HTML (two pages
//! of the rustdoc book, as mdBook writes them, `tests/fixtures/fragments/`) served by a private
//! nginx, with some of their ids removed, reports every broken fragment with every page that
//! links to it, and no valid one; removed pages stay dead; each page is read once. A page
//! with 50 fragments asked is read once for the fleet.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::time::Duration;

use crawler_tests::bins::{command, run, stderr, stdout};
use crawler_tests::nginx::Nginx;
use crawler_tests::static_site::{spawn_static_site, Answer};
use crawler_tests::{on_every_backend, TestDb};

use crate::e2e::{drain_with_two, spawn_worker, wait};

/// A reported site: verdict, fragment, the pages it was found on (sorted).
type Reported = (String, Option<String>, BTreeSet<String>);

/// Every site of `args`' report, by URL.
fn report(db: &TestDb, args: &[&str]) -> BTreeMap<String, Reported> {
    let out = run(command("crawler-report", db.url.expose())
        .args(args)
        .args(["--format", "ndjson"]));
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let found_on = v["found_on"].as_array().unwrap();
            let site = (
                v["verdict"].as_str().unwrap().to_owned(),
                v["fragment"].as_str().map(str::to_owned),
                found_on
                    .iter()
                    .map(|r| r.as_str().unwrap().to_owned())
                    .collect(),
            );
            (v["url"].as_str().unwrap().to_owned(), site)
        })
        .collect()
}

/// The fixtures, copied to `root` with the ids `removed` taken out of the page that had them,
/// and a start page linking into them: to sections that exist, to a removed one, to one that
/// never existed, to a page that does not exist, and with fragments that always exist.
fn write_site(root: &Path, removed: &[(&str, &str)]) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fragments");
    for page in PAGES {
        let mut html = std::fs::read_to_string(fixtures.join(&page[1..])).unwrap();
        for (_, id) in removed.iter().filter(|(p, _)| *p == page) {
            let attribute = format!(" id=\"{id}\"");
            assert!(html.contains(&attribute), "{page} has no {attribute}");
            html = html.replace(&attribute, "");
        }
        let path = root.join(&page[1..]);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, html).unwrap();
    }
    let index = r##"<!DOCTYPE html><html><body>
        <a href="what-is-rustdoc.html#basic-usage">exists</a>
        <a href="what-is-rustdoc.html#configuring-rustdoc">removed</a>
        <a href="what-is-rustdoc.html#never-there">never there</a>
        <a href="what-is-rustdoc.html#top">always there</a>
        <a href="what-is-rustdoc.html#:~:text=rustdoc">a text fragment</a>
        <a href="write-documentation/linking-to-items-by-name.html#valid-links">removed too</a>
        <a href="write-documentation/linking-to-items-by-name.html#namespaces-and-disambiguators">exists</a>
        <a href="removed-page.html#anything">a page that is not there</a>
        <p id="here">x</p><a href="#here">this page, exists</a><a href="#not-here">missing</a>
        </body></html>"##;
    std::fs::write(root.join("index.html"), index).unwrap();
}

/// The pages of the fixtures, as served.
const PAGES: [&str; 2] = [
    "/what-is-rustdoc.html",
    "/write-documentation/linking-to-items-by-name.html",
];

/// What the test expects, worked out from the served files by plain string search (not the
/// crawler's tokenizer): every link with a fragment naming an anchor on the site, its pages,
/// and whether its target file has that id.
fn expected(root: &Path, origin: &str) -> BTreeMap<String, (Option<bool>, BTreeSet<String>)> {
    let mut links: BTreeMap<String, (Option<bool>, BTreeSet<String>)> = BTreeMap::new();
    let files = ["/index.html", PAGES[0], PAGES[1]];
    for file in files {
        let html = std::fs::read_to_string(root.join(&file[1..])).unwrap();
        let page = url::Url::parse(&format!("{origin}{file}")).unwrap();
        for href in html.split("href=\"").skip(1) {
            let href = &href[..href.find('"').unwrap()];
            let Ok(url) = page.join(href) else { continue };
            let Some(fragment) = url.fragment() else {
                continue;
            };
            let always = fragment.is_empty() || fragment == "top" || fragment.starts_with(":~:");
            if always || !url.as_str().starts_with(origin) {
                continue;
            }
            let target = &url.path()[1..];
            let found = std::fs::read_to_string(root.join(target))
                .ok()
                .map(|t| t.contains(&format!(" id=\"{fragment}\"")));
            let entry = links.entry(url.to_string()).or_default();
            entry.0 = found;
            entry.1.insert(page.to_string());
        }
    }
    links
}

on_every_backend!(
    async fn every_broken_fragment_of_real_pages_is_reported_with_its_pages(backend: Backend) {
        let site = tempfile::tempdir().unwrap();
        let removed = [(PAGES[0], "configuring-rustdoc"), (PAGES[1], "valid-links")];
        write_site(site.path(), &removed);
        let nginx = Nginx::serve(site.path());
        let db = backend.fresh().await;
        let include = format!("^{}/", nginx.origin().replace('.', r"\."));
        let seeded = run(command("crawler-seed", db.url.expose()).args([
            "--follow",
            &nginx.url("/index.html"),
            "--include",
            &include,
        ]));
        assert!(seeded.status.success(), "{}", stderr(&seeded));
        drain_with_two(&db, Duration::from_secs(180));

        let sites = report(&db, &["--all"]);
        let expected = expected(site.path(), nginx.origin());
        assert!(
            expected.len() > 15,
            "the pages link to their sections: {expected:?}"
        );
        for (url, (found, on)) in &expected {
            let (verdict, fragment, found_on) = sites
                .get(url)
                .unwrap_or_else(|| panic!("{url} not reported: {sites:#?}"));
            let seen = format!("{url}: {verdict} {fragment:?} on {found_on:?}");
            match found {
                Some(true) => assert_eq!(fragment.as_deref(), Some("found"), "{seen}"),
                Some(false) => assert_eq!(fragment.as_deref(), Some("missing"), "{seen}"),
                // Its page is not there: the fragment takes the page's verdict.
                None => assert_eq!((verdict.as_str(), fragment), ("dead", &None), "{seen}"),
            }
            if found.is_some() {
                assert_eq!(verdict, "alive", "{seen}");
            }
            assert_eq!(found_on, on, "{seen}");
        }
        let reported: BTreeSet<&String> = sites.keys().filter(|url| url.contains('#')).collect();
        assert_eq!(
            reported,
            expected.keys().collect(),
            "no other fragment site"
        );
        let missing: BTreeSet<String> = expected
            .iter()
            .filter(|(_, (found, _))| *found == Some(false))
            .map(|(url, _)| url.clone())
            .collect();
        let named = |path: &str| nginx.url(path);
        let must_be_missing: BTreeSet<String> = [
            "/what-is-rustdoc.html#configuring-rustdoc",
            "/what-is-rustdoc.html#never-there",
            "/write-documentation/linking-to-items-by-name.html#valid-links",
            "/index.html#not-here",
        ]
        .map(named)
        .into_iter()
        .collect();
        assert_eq!(missing, must_be_missing);
        // The removed page is still dead, as a page and as its fragment.
        assert_eq!(sites[&named("/removed-page.html")].0, "dead");
        assert_eq!(sites[&named("/removed-page.html#anything")].0, "dead");

        // The report's filter, --fail-on and the summary.
        let listed = report(&db, &["--missing-fragments"]);
        assert_eq!(listed.keys().cloned().collect::<BTreeSet<_>>(), missing);
        let junit = run(command("crawler-report", db.url.expose()).args([
            "--missing-fragments",
            "--format",
            "junit",
        ]));
        let junit = stdout(&junit);
        let failures = format!("tests=\"{0}\" failures=\"{0}\"", missing.len());
        assert!(junit.contains(&failures), "{junit}");
        assert_eq!(
            junit.matches("<failure type=\"fragment\"").count(),
            missing.len()
        );
        let fail = run(command("crawler-report", db.url.expose()).args([
            "--dead",
            "--fail-on",
            "dead,missing-fragment",
            "-q",
        ]));
        assert_eq!(fail.status.code(), Some(4), "{}", stderr(&fail));
        let summary =
            run(command("crawler-report", db.url.expose()).args(["--summary", "--format", "json"]));
        let summary: serde_json::Value = serde_json::from_str(&stdout(&summary)).unwrap();
        assert_eq!(summary[0]["missing_fragments"], missing.len());

        // Each page read once for the fleet, for its links and its anchors together.
        let requests = nginx.requests();
        for path in ["/index.html", PAGES[0], PAGES[1], "/removed-page.html"] {
            assert_eq!(
                requests.get(&format!("GET {path}")),
                Some(&1),
                "{path}: {requests:?}"
            );
        }
    }
);

on_every_backend!(
    async fn a_page_with_fifty_fragments_asked_is_read_once(backend: Backend) {
        let ids: String = (0..25)
            .map(|i| format!("<h2 id=\"s{i}\">{i}</h2>"))
            .collect();
        let pages = HashMap::from([("/page.html".to_owned(), Answer::html(ids))]);
        let site = spawn_static_site("127.0.0.1", pages).await;
        let db = backend.fresh().await;
        let list = tempfile::NamedTempFile::new().unwrap();
        let lines: String = (0..50)
            .map(|i| format!("{}#s{i}\n", site.url("/page.html")))
            .collect();
        std::fs::write(list.path(), lines).unwrap();
        let seeded = run(command("crawler-seed", db.url.expose())
            .arg("--fragments")
            .arg(list.path()));
        assert!(seeded.status.success(), "{}", stderr(&seeded));
        assert!(
            stdout(&seeded).starts_with("added 50,"),
            "{}",
            stdout(&seeded)
        );
        drain_with_two(&db, Duration::from_secs(120));
        let sites = report(&db, &["--all"]);
        assert_eq!(sites.len(), 50);
        for (url, (verdict, fragment, _)) in &sites {
            let n: usize = url.rsplit_once("#s").unwrap().1.parse().unwrap();
            let want = if n < 25 { "found" } else { "missing" };
            assert_eq!(
                (verdict.as_str(), fragment.as_deref()),
                ("alive", Some(want)),
                "{url}"
            );
        }
        let requests = site.requests();
        assert_eq!(requests.get("GET /page.html"), Some(&1), "{requests:?}");
        assert_eq!(requests.len(), 1, "{requests:?}");

        // Without --fragments, the list is one page, checked as before.
        let plain = backend.fresh().await;
        let seeded = run(command("crawler-seed", plain.url.expose()).arg(list.path()));
        assert!(
            stdout(&seeded).starts_with("added 1,"),
            "{}",
            stdout(&seeded)
        );
    }
);

on_every_backend!(
    async fn links_in_markdown_are_checked_against_its_github_slugs_and_the_web(backend: Backend) {
        let page = "<h2 id=\"usage\">Usage</h2>";
        let pages = HashMap::from([("/guide.html".to_owned(), Answer::html(page))]);
        let site = spawn_static_site("127.0.0.1", pages).await;
        let dir = tempfile::tempdir().unwrap();
        let readme = dir.path().join("README.md");
        let guide = site.url("/guide.html");
        let text = format!(
            "# Getting Started\n\
             ## Install (v2) — quick\n\
             ## FAQ\n\
             ## FAQ\n\
             ## Ünïcode héading\n\
             ## Custom {{#custom-id}}\n\
             <a name=\"legacy\"></a>\n\
             ```\n# Not a heading\n```\n\
             Links: [a](#getting-started) [b](#install-v2--quick) [c](#faq-1) [d](#faq-2)\n\
             [e](#%C3%BCn%C3%AFcode-h%C3%A9ading) [f](#custom-id) [g](#legacy) [h](#not-a-heading)\n\
             [i](#Getting-Started) [j](#top) [k]({guide}#usage) [l]({guide}#nowhere)\n"
        );
        std::fs::write(&readme, &text).unwrap();
        let db = backend.fresh().await;
        let seeded = run(command("crawler-seed", db.url.expose())
            .arg("--links-in")
            .arg(&readme));
        assert!(seeded.status.success(), "{}", stderr(&seeded));
        let mut worker = spawn_worker(&db, "w1", &["--drain"]);
        assert!(wait(&mut worker, Duration::from_secs(60)).success());

        let sites = report(&db, &["--all"]);
        let file = url::Url::from_file_path(std::fs::canonicalize(&readme).unwrap()).unwrap();
        let own = |fragment: &str| format!("{file}#{fragment}");
        // Where `](LINK)` starts its LINK on a line of the file (ASCII there: bytes are columns).
        let lines: Vec<&str> = text.lines().collect();
        let col = |line: u32, link: &str| {
            let written = lines[line as usize - 1]
                .find(&format!("]({link})"))
                .unwrap();
            format!("{}:{line}:{}", readme.display(), written + 3)
        };
        let at = |line: u32, link: &str| BTreeSet::from([col(line, link)]);
        let expected: BTreeMap<String, Reported> = [
            ("getting-started", "found", 11),
            ("install-v2--quick", "found", 11),
            ("faq-1", "found", 11),
            ("faq-2", "missing", 11),
            ("%C3%BCn%C3%AFcode-h%C3%A9ading", "found", 12),
            ("custom-id", "found", 12),
            ("legacy", "found", 12),
            ("not-a-heading", "missing", 12),
            ("Getting-Started", "missing", 13),
        ]
        .into_iter()
        .map(|(fragment, found, line)| (own(fragment), found, line, format!("#{fragment}")))
        .chain([
            (
                format!("{guide}#usage"),
                "found",
                13,
                format!("{guide}#usage"),
            ),
            (
                format!("{guide}#nowhere"),
                "missing",
                13,
                format!("{guide}#nowhere"),
            ),
        ])
        .map(|(url, fragment, line, link)| {
            let found_on = at(line, &link);
            (
                url,
                ("alive".to_owned(), Some(fragment.to_owned()), found_on),
            )
        })
        .chain([(
            guide.clone(),
            (
                "alive".to_owned(),
                None,
                BTreeSet::from([
                    col(13, &format!("{guide}#usage")),
                    col(13, &format!("{guide}#nowhere")),
                ]),
            ),
        )])
        .collect();
        assert_eq!(sites, expected);
        assert_eq!(site.requests().get("GET /guide.html"), Some(&1));
    }
);

/// A site of `n` pages: the start page (`/`) links to every page; page `i` to a section of the
/// next page that is there and one that is not, to one of its own, and to a removed page and
/// its section. Returns the pages and every fragment link (path and fragment) with whether its
/// section is there (`None`: its page is not).
fn linked_pages(n: usize) -> (HashMap<String, Answer>, BTreeMap<String, Option<bool>>) {
    let path = |i: usize| match i {
        0 => "/".to_owned(),
        i => format!("/p{i}.html"),
    };
    let (mut pages, mut links) = (HashMap::new(), BTreeMap::new());
    for i in 0..n {
        let next = path((i + 1) % n);
        let own = path(i);
        let mut body = format!("<h2 id=\"s{i}\">{i}</h2><h2 id=\"t{i}\">{i}</h2>");
        if i == 0 {
            body.extend((1..n).map(|p| format!("<a href=\"{}\">{p}</a>", path(p))));
        }
        for (href, found) in [
            (format!("{next}#s{}", (i + 1) % n), Some(true)),
            (format!("{next}#gone-{i}"), Some(false)),
            (format!("{own}#t{i}"), Some(true)),
            (format!("/removed-{i}.html#x"), None),
        ] {
            body.push_str(&format!("<a href=\"{href}\">x</a>"));
            links.insert(href, found);
        }
        pages.insert(own, Answer::html(body));
    }
    (pages, links)
}

on_every_backend!(
    async fn a_fragment_of_a_page_of_the_crawl_waits_for_its_read_in_the_queue_not_in_a_worker(
        backend: Backend,
    ) {
        // 15 pages and their links are more than a batch of the tests' worker (100): a page's
        // fragments may be found, and claimed, before the page is read.
        let n = 15;
        let (pages, links) = linked_pages(n);
        let site = spawn_static_site("127.0.0.1", pages).await;
        let db = backend.fresh().await;
        let seeded =
            run(command("crawler-seed", db.url.expose()).args(["--follow", &site.url("/")]));
        assert!(seeded.status.success(), "{}", stderr(&seeded));
        let worker = crate::e2e::worker_command(&db, "w1", &["--drain"])
            .env("RUST_LOG", "info")
            .output()
            .unwrap();
        assert!(worker.status.success(), "{}", stderr(&worker));

        // No fragment was claimed before its page was read: none was deferred for it, and
        // each page's read ended the holds of its fragments (none waited for the hold's end).
        let log = stderr(&worker);
        let stopped = log.lines().find(|l| l.contains("worker stopped")).unwrap();
        assert!(stopped.contains(" 0 deferred,"), "{stopped}");
        assert_eq!(
            db.queue().await.anchors().held_fragments().await.unwrap(),
            0
        );
        let sites = report(&db, &["--all"]);
        for (href, found) in &links {
            let url = site.url(href);
            let (verdict, fragment, _) = &sites[&url];
            let want = match found {
                Some(true) => ("alive", Some("found")),
                Some(false) => ("alive", Some("missing")),
                None => ("dead", None),
            };
            assert_eq!((verdict.as_str(), fragment.as_deref()), want, "{url}");
        }
        let requests = site.requests();
        let pages = (1..n)
            .map(|i| format!("/p{i}.html"))
            .chain(["/".to_owned()]);
        let removed = (0..n).map(|i| format!("/removed-{i}.html"));
        for path in pages.chain(removed) {
            let gets = requests.get(&format!("GET {path}"));
            assert_eq!(gets, Some(&1), "{path}: {requests:?}");
        }
    }
);

/// A site of `a.example`, at `path`.
fn site(path: &str) -> crawler_queue::NewSite {
    crawler_queue::NewSite {
        url: format!("http://a.example{path}"),
        host: "a.example".to_owned(),
    }
}

/// A crawl that checks fragments, its start page `http://a.example/` added: where its pages'
/// links go, one link deeper.
async fn start_crawl(queue: &crawler_queue::Queue) -> crawler_queue::Frontier {
    use crawler_queue::{Frontier, Links, NewCrawl};
    let spec = NewCrawl {
        fragments: true,
        ..NewCrawl::default()
    };
    let crawl = queue.follow().create_crawl(&spec).await.unwrap();
    let start = Frontier {
        crawl,
        depth: 0,
        max_pages: None,
    };
    let links = Links {
        follow: vec![site("/")],
        ..Links::default()
    };
    queue
        .follow()
        .add_links(None, Some(start), &links)
        .await
        .unwrap();
    start
}

on_every_backend!(
    async fn a_fragment_is_due_once_its_pages_anchors_are_stored(backend: Backend) {
        use crawler_queue::{Frontier, Links, NewSite, Page, PageAnchors, Verdict};
        const LEASE: Duration = Duration::from_secs(600);
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let start = start_crawl(&queue).await;
        let batch = queue.claim("w", 10, LEASE).await.unwrap();
        assert_eq!(batch.sites.len(), 1);
        let urls = |batch: crawler_queue::Batch| -> BTreeSet<String> {
            batch.sites.into_iter().map(|s| s.url).collect()
        };
        let read = PageAnchors {
            verdict: Verdict::Alive,
            status: Some(200),
            error_kind: None,
            final_url: None,
            redirects: 0,
            anchors: Some("a\n".to_owned()),
        };
        queue
            .anchors()
            .save("http://a.example/", &read)
            .await
            .unwrap();

        // The start page links to a page of the crawl and two of its sections, to a section of
        // its own (read: its anchors are stored), and to one of a page off the crawl.
        let found = Links {
            referrer: Some("http://a.example/".to_owned()),
            follow: vec![site("/next.html")],
            check: vec![
                site("/next.html#a"),
                site("/next.html#b"),
                site("/#a"),
                NewSite {
                    url: "http://b.example/out#c".to_owned(),
                    host: "b.example".to_owned(),
                },
            ],
        };
        let page = Page {
            site_id: batch.sites[0].id,
            token: batch.token,
        };
        let next = Frontier { depth: 1, ..start };
        queue
            .follow()
            .add_links(Some(page), Some(next), &found)
            .await
            .unwrap();
        let due = urls(queue.claim("w", 10, LEASE).await.unwrap());
        let want = [
            "http://a.example/next.html",
            "http://a.example/#a",
            "http://b.example/out#c",
        ];
        assert_eq!(due, want.map(str::to_owned).into());

        // Its read stores the page's anchors, and makes its two fragments due with them.
        let released = queue
            .anchors()
            .save("http://a.example/next.html", &read)
            .await
            .unwrap();
        assert_eq!(released, 2);
        let due = urls(queue.claim("w", 10, LEASE).await.unwrap());
        let want = [
            "http://a.example/next.html#a",
            "http://a.example/next.html#b",
        ];
        assert_eq!(due, want.map(str::to_owned).into());
    }
);

on_every_backend!(
    async fn a_pages_read_decides_the_sections_held_for_it_without_a_claim(backend: Backend) {
        use crawler_queue::{
            After, Finding, Fragment, Frontier, Links, Next, Outcome, Page, PageAnchors, PageLinks,
            Verdict,
        };
        const LEASE: Duration = Duration::from_secs(600);
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let start = start_crawl(&queue).await;
        let follow = queue.follow();
        let batch = queue.claim("w", 10, LEASE).await.unwrap();
        let page = |batch: &crawler_queue::Batch| Page {
            site_id: batch.sites[0].id,
            token: batch.token,
        };
        let read = |anchors: &str| PageAnchors {
            verdict: Verdict::Alive,
            status: Some(200),
            error_kind: None,
            final_url: None,
            redirects: 0,
            anchors: Some(anchors.to_owned()),
        };
        // The start page links to a page of the crawl and to two of its sections: held.
        let found = Links {
            referrer: Some("http://a.example/".to_owned()),
            follow: vec![site("/next.html")],
            check: vec![site("/next.html#a"), site("/next.html#b")],
        };
        let next = Frontier { depth: 1, ..start };
        let stored = |batch: &crawler_queue::Batch, url: &str, anchors: &str, links: Links| {
            let page = PageLinks {
                page: page(batch),
                url: url.to_owned(),
                anchors: Some(read(anchors)),
                frontier: next,
                links,
            };
            async move {
                let added = follow.add_pages(&[page]).await.unwrap();
                added.into_iter().next().flatten().unwrap()
            }
        };
        let added = stored(&batch, "http://a.example/", "", found).await;
        assert!(added.held.is_empty(), "nothing was held for the start page");
        let claimed = queue.claim("w", 10, LEASE).await.unwrap();
        let urls: Vec<&str> = claimed.sites.iter().map(|s| s.url.as_str()).collect();
        assert_eq!(
            urls,
            ["http://a.example/next.html"],
            "the sections are held"
        );

        // The page's read stores its anchors with its links: its two sections come back to be
        // decided from it, and are not made due.
        let added = stored(
            &claimed,
            "http://a.example/next.html",
            "a\n",
            Links::default(),
        )
        .await;
        let mut held: Vec<&str> = added.held.iter().map(|s| s.url.as_str()).collect();
        held.sort_unstable();
        assert_eq!(
            held,
            [
                "http://a.example/next.html#a",
                "http://a.example/next.html#b"
            ]
        );
        assert_eq!(added.released, 0);
        assert!(queue.claim("w", 10, LEASE).await.unwrap().sites.is_empty());

        let decided = |fragment: Fragment, site: &crawler_queue::Site| Outcome {
            site: site.clone(),
            finding: Finding {
                verdict: Verdict::Alive,
                status: Some(200),
                next: Next::Final,
                fragment: Some(fragment),
                ..Finding::excluded()
            },
        };
        let (a, b) = match added.held[0].url.ends_with("#a") {
            true => (&added.held[0], &added.held[1]),
            false => (&added.held[1], &added.held[0]),
        };
        let outcomes = [decided(Fragment::Found, a), decided(Fragment::Missing, b)];
        let completed = queue.complete_held(&outcomes).await.unwrap();
        assert_eq!(
            (completed.done, completed.verdicts.get(Verdict::Alive)),
            (2, 2)
        );
        // Written once: a second time, they are checked already.
        let again = queue.complete_held(&outcomes).await.unwrap();
        assert_eq!((again.done, again.stale), (0, 2));
        let page = queue
            .reports()
            .checked_page(Verdict::Alive, Default::default(), After::START, 10)
            .await
            .unwrap();
        let fragments: BTreeMap<&str, Option<Fragment>> =
            page.iter().map(|c| (c.url.as_str(), c.fragment)).collect();
        assert_eq!(
            fragments["http://a.example/next.html#a"],
            Some(Fragment::Found)
        );
        assert_eq!(
            fragments["http://a.example/next.html#b"],
            Some(Fragment::Missing)
        );
        assert!(page
            .iter()
            .all(|c| c.attempts == 1 && c.last_alive_at.is_some()));

        // A site claimed meanwhile is its claim's to write, not the page's.
        let more = Links {
            referrer: Some("http://a.example/".to_owned()),
            follow: vec![],
            check: vec![site("/other.html#c")],
        };
        follow.add_links(None, None, &more).await.unwrap();
        let claimed = queue.claim("w", 10, LEASE).await.unwrap();
        assert_eq!(claimed.sites.len(), 1);
        let unclaimed = crawler_queue::Site {
            token: 0,
            ..claimed.sites[0].clone()
        };
        let stale = queue
            .complete_held(&[decided(Fragment::Found, &unclaimed)])
            .await
            .unwrap();
        assert_eq!((stale.done, stale.stale), (0, 1));
    }
);
