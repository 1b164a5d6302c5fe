//! Politeness per server address, for the fleet (`--ip-concurrency`, `--ip-rate`): many host
//! names on one address, resolved through a test DNS (`--dns-server`), and two workers; the
//! server (`meter`, one tally per address) measures what each address sees: never more than
//! its limits, whatever the names. And a host's rate when four workers start together on many
//! small hosts (the partitions then move between them): never over it.

use std::collections::HashMap;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use crawler_tests::bench::host;
use crawler_tests::bins::{command, run, stdout};
use crawler_tests::dns::{DnsServer, Record};
use crawler_tests::meter::spawn_meter;
use crawler_tests::{on_every_backend, TestDb};

use crate::e2e::{reported, seed, spawn_worker, wait};
use crate::faults::QUICK;

/// Long enough that requests to an address overlap, so its concurrency limit binds too
/// (`IP_RATE` × 0.5 s = 8 would be on the wire at the rate, over `IP_CONCURRENCY`).
const LATENCY: Duration = Duration::from_millis(500);
const ADDRESSES: usize = 2;
/// Names per address; each name's own limits alone would let the address see
/// `NAMES × HOST_RATE` a second.
const NAMES: usize = 12;
const URLS_PER_NAME: usize = 8;
const HOST_CONCURRENCY: usize = 4;
const HOST_RATE: usize = 10;
const IP_CONCURRENCY: usize = 6;
/// Even, so that each of two workers' halves is a whole number a second.
const IP_RATE: usize = 16;
/// As `fleet.rs` says of a host's: the rate, plus one for a request delayed on its way.
const IP_MAX_PER_SECOND: usize = IP_RATE + 1;

/// Seeds `urls` into `db`.
fn seed_urls(db: &TestDb, urls: &[String]) {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    for url in urls {
        writeln!(file, "{url}").unwrap();
    }
    file.flush().unwrap();
    seed(db, file.path());
}

/// Runs `workers` workers with `flags` (after `e2e::FAST` and QUICK) until they drain `db`,
/// started `apart`.
async fn drain_with(db: &TestDb, workers: usize, apart: Duration, flags: &[&str]) {
    let flags = [&["--drain"][..], flags, QUICK].concat();
    let mut started = Vec::new();
    for i in 0..workers {
        started.push(spawn_worker(db, &format!("w{i}"), &flags));
        tokio::time::sleep(apart).await;
    }
    let mut workers = started;
    tokio::task::spawn_blocking(move || {
        for worker in &mut workers {
            assert!(wait(worker, Duration::from_secs(180)).success());
        }
    })
    .await
    .unwrap();
}

on_every_backend!(
    async fn two_workers_keep_to_an_addresss_limits_over_all_its_names(backend: Backend) {
        let meter = spawn_meter(ADDRESSES, LATENCY).await;
        let port = url::Url::parse(&meter.url(0, 0)).unwrap().port().unwrap();
        let names: Vec<String> = (0..ADDRESSES * NAMES)
            .map(|i| format!("n{i}.addresses-test"))
            .collect();
        let address = |i: usize| host(i % ADDRESSES);
        let records: HashMap<String, Record> = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let ip: Ipv4Addr = address(i).parse().unwrap();
                (name.clone(), Record::A(ip))
            })
            .collect();
        let dns = DnsServer::start(SocketAddr::from(([127, 0, 0, 1], 0)), records).unwrap();
        let urls: Vec<String> = (0..URLS_PER_NAME)
            .flat_map(|k| names.iter().map(move |n| (n.clone(), k)))
            .map(|(name, k)| format!("http://{name}:{port}/{k}"))
            .collect();
        let db = backend.fresh().await;
        seed_urls(&db, &urls);
        let server = dns.addr().to_string();
        let (hc, hr) = (HOST_CONCURRENCY.to_string(), HOST_RATE.to_string());
        let (ic, ir) = (IP_CONCURRENCY.to_string(), IP_RATE.to_string());
        let flags = [
            "--dns-server",
            &server,
            "--host-concurrency",
            &hc,
            "--host-rate",
            &hr,
            "--ip-concurrency",
            &ic,
            "--ip-rate",
            &ir,
        ];
        drain_with(&db, 2, Duration::ZERO, &flags).await;

        for a in 0..ADDRESSES {
            let seen = meter.report(a);
            println!("address {} saw {seen}", host(a)); // with --nocapture, to see the margin
            assert!(
                seen.max_in_flight <= IP_CONCURRENCY && seen.max_per_second <= IP_MAX_PER_SECOND,
                "two workers with --ip-concurrency {IP_CONCURRENCY} --ip-rate {IP_RATE} exceeded \
                 the limits of {} ({NAMES} names on it): it saw {seen}",
                host(a)
            );
            assert!(seen.requests >= NAMES * URLS_PER_NAME, "{seen}");
        }
        let sites = reported(&db);
        assert_eq!(sites.len(), urls.len(), "every site reported once");
        for url in &urls {
            assert_eq!(sites.get(url), Some(&("alive".into(), Some(200))), "{url}");
        }
        // Each host's address, and the addresses, in the reports.
        let hosts = stdout(&run(
            command("crawler-report", db.url.expose()).args(["--hosts", "--format", "csv"])
        ));
        for (i, name) in names.iter().enumerate() {
            let line = hosts.lines().find(|l| l.starts_with(&format!("{name},")));
            let at = format!(",{},", address(i));
            assert!(
                line.is_some_and(|l| l.ends_with(&at)),
                "{name} at {at} in {hosts}"
            );
        }
        // The fleet is gone: no address is held.
        let held = stdout(&run(command("crawler-report", db.url.expose()).args([
            "--addresses",
            "--format",
            "csv",
        ])));
        assert_eq!(held, "address,holders,waiting,in_flight,hosts\n");
    }
);

/// Hosts of the many-small-hosts list, and URLs each: a host is done within about a second at
/// its rate, so a host whose partition moves between workers meanwhile is asked by both.
const SMALL_HOSTS: usize = 60;
const URLS_PER_SMALL_HOST: usize = 23;
const SMALL_HOST_RATE: usize = 20;

on_every_backend!(
    async fn four_workers_starting_together_keep_to_each_small_hosts_rate(backend: Backend) {
        let meter = spawn_meter(SMALL_HOSTS, Duration::from_millis(10)).await;
        let urls: Vec<String> = (0..URLS_PER_SMALL_HOST)
            .flat_map(|k| (0..SMALL_HOSTS).map(move |h| (h, k)))
            .map(|(h, k)| meter.url(h, k))
            .collect();
        let db = backend.fresh().await;
        seed_urls(&db, &urls);
        let rate = SMALL_HOST_RATE.to_string();
        drain_with(
            &db,
            4,
            Duration::from_millis(200),
            &["--host-concurrency", "8", "--host-rate", &rate],
        )
        .await;

        let over: Vec<String> = (0..SMALL_HOSTS)
            .filter_map(|h| {
                let seen = meter.report(h);
                (seen.max_per_second > SMALL_HOST_RATE + 1).then(|| format!("{}: {seen}", host(h)))
            })
            .collect();
        let peaks = meter.peaks();
        println!("the hosts saw at most {peaks}");
        assert!(
            over.is_empty(),
            "hosts over {SMALL_HOST_RATE} + 1 started within one second: {over:?}"
        );
        assert_eq!(reported(&db).len(), urls.len(), "every site reported once");
    }
);
