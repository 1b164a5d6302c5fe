//! A generated site of `FOLLOW_BENCH_PAGES` pages on 16 loopback hosts, crawled from its 16
//! roots by 4 workers: pages `/p/I.html`, page I on host I mod 16, linking to pages 2I+1 and
//! 2I+2 (a tree, so every page is reachable), to a pseudo-random page, to page 0 and to a
//! shared image. Each page has two sections, `#s1` and `#s2`, and links to both, to the first
//! of its first child, the second of its pseudo-random page, and to `#gone` of page 0, which
//! no page has: 2N + 1 links to sections, one of them broken. The site is crawled twice, with
//! fragments (the default) and with `--no-fragments`, each on a fresh database and server. The
//! server counts GETs per page: every page must be read exactly once over the fleet, sections
//! or not. Each worker's resident memory is sampled as the crawl goes, to show it flat.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crawler_tests::bins::{command, run, stderr, stdout};
use crawler_tests::Backend;

const HOSTS: usize = 16;
const WORKERS: usize = 4;

/// GETs per page, and requests of everything else.
struct Counts {
    pages: Vec<AtomicU8>,
    other: AtomicUsize,
}

pub fn bench(pages: usize) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let backend = match std::env::var("FOLLOW_BENCH_BACKEND").as_deref() {
        Ok("mariadb") => Backend::MariaDb,
        Ok("postgres") => Backend::Postgres,
        Ok("sqlite") | Err(_) => Backend::Sqlite,
        Ok(other) => panic!("FOLLOW_BENCH_BACKEND={other}: sqlite, mariadb or postgres"),
    };
    let with = crawl(&runtime, backend, pages, true);
    let without = crawl(&runtime, backend, pages, false);
    println!(
        "generated site ({backend:?}), {pages} pages: with fragments {:.1} s, with --no-fragments \
         {:.1} s: {:.2}x the time",
        with.as_secs_f64(),
        without.as_secs_f64(),
        with.as_secs_f64() / without.as_secs_f64()
    );
}

/// Serves a fresh copy of the site and crawls it with 4 workers on a fresh database, checking
/// `fragments` or not (`--no-fragments`); prints what the server saw and the broken links
/// reported; returns the time.
fn crawl(
    runtime: &tokio::runtime::Runtime,
    backend: Backend,
    pages: usize,
    fragments: bool,
) -> Duration {
    let counts = Arc::new(Counts {
        pages: (0..pages).map(|_| AtomicU8::new(0)).collect(),
        other: AtomicUsize::new(0),
    });
    let addrs = runtime.block_on(serve(pages, counts.clone()));
    // A private server for MariaDB and PostgreSQL, started by the test support; it lives as
    // long as `db`.
    let db = runtime.block_on(backend.fresh());
    let url = db.url.expose().to_owned();
    let starts: Vec<String> = addrs
        .iter()
        .enumerate()
        .map(|(i, a)| format!("http://{a}/p/{i}.html"))
        .collect();
    let started = Instant::now();
    let mut seed = command("crawler-seed", &url);
    seed.arg("--follow").args(&starts);
    if !fragments {
        seed.arg("--no-fragments");
    }
    let seeded = run(&mut seed);
    assert!(seeded.status.success(), "{}", stderr(&seeded));
    let mut workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            command("crawler-worker", &url)
                .args([
                    "--id",
                    &format!("w{w}"),
                    "--drain",
                    "--host-rate",
                    "1000000",
                ])
                .args([
                    "--host-concurrency",
                    "32",
                    "--concurrency",
                    "128",
                    "--attempts",
                    "1",
                ])
                .spawn()
                .unwrap()
        })
        .collect();
    let mut samples: Vec<(usize, u64)> = Vec::new();
    let mut next_sample = Instant::now();
    while workers.iter_mut().any(|w| w.try_wait().unwrap().is_none()) {
        if Instant::now() >= next_sample {
            let read = counts
                .pages
                .iter()
                .filter(|c| c.load(Ordering::Relaxed) > 0)
                .count();
            let rss = workers.iter().map(|w| rss_kb(w.id())).max().unwrap_or(0);
            samples.push((read, rss));
            next_sample += Duration::from_secs(10);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let time = started.elapsed();
    for w in &mut workers {
        assert!(w.wait().unwrap().success());
    }
    let per_page: Vec<u8> = counts
        .pages
        .iter()
        .map(|c| c.load(Ordering::Relaxed))
        .collect();
    let never = per_page.iter().filter(|&&n| n == 0).count();
    let twice = per_page.iter().filter(|&&n| n > 1).count();
    let with = match fragments {
        true => "with fragments",
        false => "with --no-fragments",
    };
    println!(
        "generated site ({backend:?}) {with}: {pages} pages on {HOSTS} hosts, {WORKERS} workers: {:.1} s ({:.0} pages/s), \
         pages never read {never}, read more than once {twice}, other requests {}",
        time.as_secs_f64(),
        pages as f64 / time.as_secs_f64(),
        counts.other.load(Ordering::Relaxed)
    );
    // With fragments, one broken link: page 0's `#gone`, a missing section, on every page.
    let out = run(command("crawler-report", &url).args([
        "--dead",
        "--missing-fragments",
        "--format",
        "ndjson",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let dead: Vec<(String, u64)> = stdout(&out)
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let url = v["url"].as_str().unwrap().to_owned();
            (url, v["found_count"].as_u64().unwrap_or(0))
        })
        .collect();
    let expected = match fragments {
        true => format!("[(\"http://{}/p/0.html#gone\", {})]", addrs[0], pages),
        false => "[]".to_owned(),
    };
    println!("  broken links reported (URL, pages it is on): {dead:?}; expected {expected}");
    println!("  pages read so far → largest worker RSS:");
    for (read, rss) in samples {
        println!("  {read:>9} → {:.1} MiB", rss as f64 / 1024.0);
    }
    time
}

/// The largest resident memory of a live process, KiB (0 if it is gone).
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Serves the site on 127.0.1.1 … 127.0.1.16, one port; returns the addresses.
async fn serve(pages: usize, counts: Arc<Counts>) -> Vec<SocketAddr> {
    let first = TcpListener::bind("127.0.1.1:0").await.unwrap();
    let port = first.local_addr().unwrap().port();
    let mut listeners = vec![first];
    for h in 2..=HOSTS {
        listeners.push(
            TcpListener::bind(format!("127.0.1.{h}:{port}"))
                .await
                .unwrap(),
        );
    }
    let addrs: Vec<SocketAddr> = listeners.iter().map(|l| l.local_addr().unwrap()).collect();
    let hosts: Arc<Vec<String>> = Arc::new(addrs.iter().map(|a| a.to_string()).collect());
    for listener in listeners {
        let (counts, hosts) = (counts.clone(), hosts.clone());
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (counts, hosts) = (counts.clone(), hosts.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |request: Request<hyper::body::Incoming>| {
                            let response = page(
                                request.method(),
                                request.uri().path(),
                                pages,
                                &counts,
                                &hosts,
                            );
                            async move { Ok::<_, std::convert::Infallible>(response) }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    }
    addrs
}

fn page(
    method: &hyper::Method,
    path: &str,
    pages: usize,
    counts: &Counts,
    hosts: &[String],
) -> Response<Full<Bytes>> {
    let n = path
        .strip_prefix("/p/")
        .and_then(|p| p.strip_suffix(".html"))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n < pages);
    let Some(i) = n else {
        counts.other.fetch_add(1, Ordering::Relaxed);
        let status = if path == "/static/logo.png" { 200 } else { 404 };
        return Response::builder()
            .status(status)
            .body(Full::new(Bytes::new()))
            .unwrap();
    };
    if method == hyper::Method::GET {
        counts.pages[i].fetch_add(1, Ordering::Relaxed);
    }
    let link = |j: usize| {
        format!(
            "<a href=\"http://{}/p/{j}.html\">{j}</a>\n",
            hosts[j % HOSTS]
        )
    };
    let mut body = String::from("<!DOCTYPE html><html><head><title>page</title></head><body>\n");
    for j in [2 * i + 1, 2 * i + 2, (i * 7919 + 13) % pages, 0] {
        if j < pages {
            body.push_str(&link(j));
        }
    }
    body.push_str("<h2 id=\"s1\">one</h2><h2 id=\"s2\">two</h2>\n");
    body.push_str("<a href=\"#s1\">one</a><a href=\"#s2\">two</a>\n");
    for (j, section) in [
        (2 * i + 1, "s1"),
        ((i * 7919 + 13) % pages, "s2"),
        (0, "gone"),
    ] {
        if j < pages {
            body.push_str(&format!(
                "<a href=\"http://{}/p/{j}.html#{section}\">{j}</a>\n",
                hosts[j % HOSTS]
            ));
        }
    }
    body.push_str("<img src=\"/static/logo.png\"></body></html>\n");
    Response::builder()
        .header("content-type", "text/html")
        .body(Full::new(Bytes::from(body)))
        .unwrap()
}
