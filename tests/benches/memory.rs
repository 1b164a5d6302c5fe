//! A worker's memory against the number of hosts it meets: the same list, spread over 1,000,
//! 10,000 and 100,000 hosts, each host a name of its own on an address of its own, drained by
//! one `crawler-worker --drain` at its defaults on a fresh SQLite file; prints the drain's time
//! and the worker's peak resident memory (`ru_maxrss`) per host count. Asserts nothing.
//!
//! Run: `cargo bench -p crawler-tests --bench memory` (as root: it makes a network namespace)
//!
//! - `MEMORY_BENCH_HOSTS=1000,10000,100000`: the host counts;
//! - `MEMORY_BENCH_URLS=100000`: the list's size, the same for every count;
//! - `MEMORY_BENCH_LYCHEE=1`: lychee too, on the same list, with the crawler's politeness.
//!
//! As the web bench, it runs in a network namespace of its own with only `lo`, whose
//! `/etc/resolv.conf` names its DNS server on 127.0.0.1:53. One HTTP server answers every host:
//! it listens on port 80 of every address of the namespace (`0.0.0.0`, which there is `lo`
//! alone), so 100,000 hosts cost one socket; each host name resolves to its own address of
//! 127.16.0.0/12.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::Write;
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use crawler_tests::bench::{counts, raise_fd_limit, rerun_in_namespace, source_state};
use crawler_tests::bins::bin;
use crawler_tests::dns::{DnsServer, Record};
use http_body_util::Full;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

/// Set in the bench's own process inside the namespace.
const INSIDE: &str = "MEMORY_BENCH_NETNS";

fn main() {
    let _ = bin("crawler-worker"); // builds the release binaries
    match std::env::var(INSIDE) {
        Ok(_) => inside(),
        Err(_) => std::process::exit(rerun_in_namespace("memorybench", INSIDE)),
    }
}

/// Host `i`'s name and address (127.16.0.1 on). Not under `.test`: lychee skips the TLDs of RFC
/// 2606 (`.test`, `.example`, `.invalid`, `.localhost`) as it skips example.com, so it checked
/// nothing and exited in under a second.
fn host(i: usize) -> (String, Ipv4Addr) {
    let n = i as u32 + 1;
    let address = Ipv4Addr::from(u32::from(Ipv4Addr::new(127, 16, 0, 0)) + n);
    (format!("h{i}.memorybench"), address)
}

fn inside() {
    raise_fd_limit();
    let urls: usize = std::env::var("MEMORY_BENCH_URLS")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(100_000);
    let hosts = counts("MEMORY_BENCH_HOSTS", "1000,10000,100000");
    let lychee = std::env::var_os("MEMORY_BENCH_LYCHEE").is_some_and(|v| v != "0");
    let most = hosts.iter().copied().max().unwrap_or(0);
    let records: HashMap<String, Record> = (0..most)
        .map(|i| {
            let (name, address) = host(i);
            (name, Record::A(address))
        })
        .collect();
    let _dns = DnsServer::start("127.0.0.1:53".parse().unwrap(), records)
        .expect("start the DNS server on port 53");
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.spawn(serve());
    println!(
        "memory benchmark: {}, {} cores, {urls} URLs, in network namespace {}",
        source_state(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        std::env::var(INSIDE).unwrap_or_default()
    );
    println!(
        "{:>8} {:>9} {:>10} {:>14}",
        "hosts", "tool", "drain", "peak RSS"
    );
    for n in hosts {
        let dir = tempfile::tempdir().expect("a temp dir");
        let list = dir.path().join("urls.txt");
        let mut file = std::fs::File::create(&list).unwrap();
        for u in 0..urls {
            let (name, _) = host(u % n);
            writeln!(file, "http://{name}/page-{u}").unwrap();
        }
        drop(file);
        let (time, peak) = crawl(dir.path(), &list);
        println!(
            "{n:>8} {:>9} {time:>9.1?} {:>10.1} MiB",
            "crawler",
            peak as f64 / 1024.0
        );
        if lychee {
            let (time, peak) = run_lychee(&list);
            println!(
                "{n:>8} {:>9} {time:>9.1?} {:>10.1} MiB",
                "lychee",
                peak as f64 / 1024.0
            );
        }
    }
}

/// Seeds `list` into a fresh SQLite file in `dir`, drains it with one worker at its defaults;
/// returns the drain's time and the worker's peak RSS in KiB.
fn crawl(dir: &Path, list: &Path) -> (Duration, u64) {
    let database = format!("sqlite://{}", dir.join("crawler.db").display());
    let seeded = Command::new(bin("crawler-seed"))
        .env("DATABASE_URL", &database)
        .arg(list)
        .stdout(Stdio::null())
        .status()
        .expect("run crawler-seed");
    assert!(seeded.success(), "crawler-seed failed");
    let mut worker = Command::new(bin("crawler-worker"));
    worker
        .env("DATABASE_URL", &database)
        .args(["--drain", "-q"])
        .stdout(Stdio::null());
    measured(&mut worker)
}

/// lychee on `list`, with the crawler's defaults as lychee's flags
/// ([`crawler_tests::bench::LYCHEE_FLAGS`], as the web bench runs it).
fn run_lychee(list: &Path) -> (Duration, u64) {
    let lychee = crawler_tests::bench::find_lychee().expect("lychee (cargo install lychee)");
    let mut command = Command::new(lychee.path);
    command
        .arg("--no-progress")
        .args(crawler_tests::bench::LYCHEE_FLAGS)
        .arg(list)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    measured(&mut command)
}

/// Runs `command` to its end: its wall time and peak RSS (KiB), from `wait4`.
fn measured(command: &mut Command) -> (Duration, u64) {
    let started = Instant::now();
    // Reaped by `wait4` below, which also gives its peak memory.
    #[allow(clippy::zombie_processes)]
    let child = command.spawn().expect("start the command");
    let mut status = 0;
    // SAFETY: wait4 fills the status and the struct it is given; the pid is our child, reaped
    // only here.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::wait4(child.id() as i32, &mut status, 0, &mut usage);
        usage
    };
    (started.elapsed(), usage.ru_maxrss as u64)
}

/// Answers 200 to every request, on port 80 of every address of the namespace.
async fn serve() {
    let listener = tokio::net::TcpListener::bind("0.0.0.0:80")
        .await
        .expect("bind port 80");
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            let service = hyper::service::service_fn(|_: Request<hyper::body::Incoming>| async {
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"ok"))))
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
