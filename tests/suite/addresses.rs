//! Politeness per server address, for the fleet (`--ip-concurrency`, `--ip-rate`): many host
//! names on one address, resolved through a test DNS (`--dns-server`), and two workers; the
//! server (`meter`, one tally per address) measures what each address sees: never more than
//! its limits, whatever the names. And a host's rate when four workers start together on many
//! small hosts (the partitions then move between them): never over it.

use std::collections::HashMap;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use crawler_queue::Among;
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
        two_workers_on_shared_addresses(backend.fresh().await, Duration::ZERO).await;
    }
);

on_every_backend!(
    async fn a_worker_joining_one_alone_keeps_to_an_addresss_limits(backend: Backend) {
        // The first is the fleet's only worker for a second and a half, its addresses its own
        // with no registration; the second waits until it has registered them.
        two_workers_on_shared_addresses(backend.fresh().await, Duration::from_millis(1500)).await;
    }
);

/// Hosts of the gate's test: each on an address of its own, some in the worker's half of the
/// partitions whatever the hash.
const GATE_HOSTS: usize = 8;

on_every_backend!(
    async fn a_worker_uses_no_address_while_another_is_alone(backend: Backend) {
        let meter = spawn_meter(GATE_HOSTS, Duration::from_millis(10)).await;
        let urls: Vec<String> = (0..5)
            .flat_map(|k| (0..GATE_HOSTS).map(move |h| (h, k)))
            .map(|(h, k)| meter.url(h, k))
            .collect();
        let db = backend.fresh().await;
        seed_urls(&db, &urls);
        let queue = db.queue().await;
        let addresses = queue.addresses();
        let live = Duration::from_secs(60);
        queue.register("ghost", "test", 1).await.unwrap();
        assert!(addresses.try_alone("ghost", live).await.unwrap());
        let flags = [&["--drain"][..], QUICK].concat();
        let mut worker = spawn_worker(&db, "w1", &flags);
        // The worker alone stays live (QUICK: dead after 1.5 s of silence) for two seconds,
        // its addresses not registered: w1 claims its half of the hosts and asks none.
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            queue.heartbeat("ghost", 0).await.unwrap();
        }
        let asked: usize = (0..GATE_HOSTS).map(|h| meter.report(h).requests).sum();
        if asked != 0 {
            let _ = worker.kill(); // not left running after the test
        }
        assert_eq!(asked, 0, "w1 asked while another worker was alone");
        addresses.leave_alone("ghost", &[]).await.unwrap();
        queue.deregister("ghost").await.unwrap();
        let status =
            tokio::task::spawn_blocking(move || wait(&mut worker, Duration::from_secs(60)))
                .await
                .unwrap();
        assert!(status.success());
        assert_eq!(reported(&db).len(), urls.len(), "every site reported once");
    }
);

/// Two workers, the second started `apart` after the first, drain a list of many names on
/// [`ADDRESSES`] addresses: no address over its limits, every verdict right, each host's
/// address and no address held in the reports after.
async fn two_workers_on_shared_addresses(db: TestDb, apart: Duration) {
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
    drain_with(&db, 2, apart, &flags).await;

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

on_every_backend!(
    async fn a_new_holder_of_an_address_waits_for_the_earlier_ones_to_count_it(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let addresses = queue.addresses();
        let live = Duration::from_secs(60);
        for id in ["x", "y", "z"] {
            queue.register(id, "test", 1).await.unwrap();
        }
        let a = vec!["127.0.9.1".to_owned()];
        // Alone: confirmed at once, nothing listed.
        addresses.register("x", &a).await.unwrap();
        let x = addresses.shares("x", live).await.unwrap();
        assert!(x.addresses.is_empty(), "{:?}", x.addresses);
        // A second holder: counted by both reads, confirmed once the first acknowledges a read
        // that started after it registered.
        tokio::time::sleep(Duration::from_millis(5)).await;
        addresses.register("y", &a).await.unwrap();
        let y = addresses.shares("y", live).await.unwrap();
        assert_eq!(y.addresses.len(), 1);
        assert_eq!(
            (y.addresses[0].holders, y.addresses[0].confirmed),
            (2, false)
        );
        addresses.acknowledge("x", x.started_at).await.unwrap();
        let y = addresses.shares("y", live).await.unwrap();
        assert!(
            !y.addresses[0].confirmed,
            "x's read started before y registered"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
        let x = addresses.shares("x", live).await.unwrap();
        assert_eq!(
            (x.addresses[0].holders, x.addresses[0].confirmed),
            (2, true)
        );
        addresses.acknowledge("x", x.started_at).await.unwrap();
        let y = addresses.shares("y", live).await.unwrap();
        assert_eq!(
            (y.addresses[0].holders, y.addresses[0].confirmed),
            (2, true)
        );
        assert_eq!(
            y.addresses[0].clear_in,
            Duration::ZERO,
            "x told of no close starts"
        );
        // x's starts at its larger share leave the window 700 ms from now: y waits that long.
        let clear = [(a[0].clone(), Duration::from_millis(700))];
        addresses.clear("x", &clear).await.unwrap();
        let y = addresses.shares("y", live).await.unwrap();
        let clear_in = y.addresses[0].clear_in;
        assert!(
            clear_in > Duration::from_millis(400) && clear_in <= Duration::from_millis(701),
            "{clear_in:?}"
        );
        // A dead holder is not counted; a holder that leaves gives its share back.
        let dead = Duration::ZERO;
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert!(addresses
            .shares("y", dead)
            .await
            .unwrap()
            .addresses
            .is_empty());
        addresses.release("x", &a).await.unwrap();
        assert!(addresses
            .shares("y", live)
            .await
            .unwrap()
            .addresses
            .is_empty());
        // The view of the addresses held, with the names asked at them.
        addresses
            .record_names(&[("n.example".to_owned(), a[0].clone())])
            .await
            .unwrap();
        let view = addresses.view(live).await.unwrap();
        assert_eq!(view.len(), 1);
        assert_eq!((view[0].holders, view[0].hosts), (1, 1));
        addresses.release_all("y").await.unwrap();
        assert!(addresses.view(live).await.unwrap().is_empty());
    }
);

on_every_backend!(
    async fn one_worker_is_alone_until_another_starts_and_that_one_waits_for_it(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let addresses = queue.addresses();
        let live = Duration::from_secs(60);
        queue.register("x", "test", 1).await.unwrap();
        assert!(
            addresses.try_alone("x", live).await.unwrap(),
            "the only worker"
        );
        assert!(addresses.still_alone("x", live).await.unwrap());
        // Taken for dead and registered again: no longer alone until it tries again.
        queue.register("x", "test", 1).await.unwrap();
        assert!(!addresses.still_alone("x", live).await.unwrap());
        assert!(addresses.try_alone("x", live).await.unwrap());
        queue.register("y", "test", 1).await.unwrap();
        assert!(
            !addresses.try_alone("y", live).await.unwrap(),
            "x is live: y is not alone"
        );
        assert!(
            !addresses.alone_elsewhere("x", live).await.unwrap(),
            "y's try left no flag"
        );
        assert!(addresses.alone_elsewhere("y", live).await.unwrap());
        assert!(
            !addresses.still_alone("x", live).await.unwrap(),
            "y counted"
        );
        // x leaves: the addresses it took alone are registered before y may register any.
        let a = vec!["127.0.9.1".to_owned()];
        addresses.leave_alone("x", &a).await.unwrap();
        assert!(!addresses.alone_elsewhere("y", live).await.unwrap());
        tokio::time::sleep(Duration::from_millis(5)).await;
        let joined = addresses.join("y", &a, live, Among::These).await.unwrap();
        assert_eq!(joined.addresses.len(), 1, "{joined:?}");
        assert_eq!(
            (joined.addresses[0].holders, joined.addresses[0].confirmed),
            (2, false),
            "y counts x, and waits for x to count it"
        );
        // A worker alone that is dead holds no one back; one that stops clears its flag.
        addresses.release_all("x").await.unwrap();
        queue.deregister("y").await.unwrap();
        assert!(addresses.try_alone("x", live).await.unwrap());
        queue.register("y", "test", 1).await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert!(!addresses
            .alone_elsewhere("y", Duration::ZERO)
            .await
            .unwrap());
        assert!(addresses.alone_elsewhere("y", live).await.unwrap());
        addresses.release_all("x").await.unwrap();
        assert!(!addresses.alone_elsewhere("y", live).await.unwrap());
        // A worker alone has rows only where requests wait, for the per-address view.
        queue.deregister("y").await.unwrap();
        assert!(addresses.try_alone("x", live).await.unwrap());
        let load = |address: &str, waiting| crawler_queue::AddressLoad {
            address: address.to_owned(),
            waiting,
            in_flight: 1,
        };
        addresses
            .record_loads("x", &[load("127.0.9.2", 3)], true)
            .await
            .unwrap();
        let view = addresses.view(live).await.unwrap();
        assert_eq!(
            view.iter()
                .map(|v| (v.address.as_str(), v.holders, v.waiting))
                .collect::<Vec<_>>(),
            [("127.0.9.2", 1, 3)]
        );
        addresses
            .record_loads("x", &[load("127.0.9.3", 2)], false)
            .await
            .unwrap();
        assert_eq!(
            addresses.view(live).await.unwrap().len(),
            1,
            "in a fleet: no row"
        );
    }
);

on_every_backend!(
    async fn joining_addresses_reads_them_as_the_whole_read_does(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let addresses = queue.addresses();
        let live = Duration::from_secs(60);
        for id in ["x", "y"] {
            queue.register(id, "test", 1).await.unwrap();
        }
        let [a, b, c, d] = ["127.0.9.1", "127.0.9.2", "127.0.9.3", "127.0.9.4"].map(str::to_owned);
        addresses
            .register("x", &[a.clone(), b.clone()])
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        addresses
            .register("y", std::slice::from_ref(&a))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        let x = addresses.shares("x", live).await.unwrap();
        addresses.acknowledge("x", x.started_at).await.unwrap();
        // y joins b (and c and d, its alone; three, a list padded to four) after x's
        // acknowledgement: b waits for x's next one.
        tokio::time::sleep(Duration::from_millis(5)).await;
        let held = |read: &[crawler_queue::AddressHolders], address: &str| {
            read.iter()
                .find(|h| h.address == address)
                .map(|h| (h.holders, h.confirmed))
        };
        let joined = addresses
            .join("y", &[b.clone(), c.clone(), d.clone()], live, Among::These)
            .await
            .unwrap()
            .addresses;
        assert_eq!(joined.len(), 1, "b only, not a, c or d: {joined:?}");
        assert_eq!(held(&joined, &b), Some((2, false)));
        let whole = addresses.shares("y", live).await.unwrap().addresses;
        assert_eq!(held(&whole, &a), Some((2, true)), "{whole:?}");
        assert_eq!(held(&whole, &b), Some((2, false)), "{whole:?}");
        assert_eq!(held(&whole, &c), None, "y's alone: {whole:?}");
        // A read in the millisecond of y's join may not have seen it, and does not count: the
        // database's clock counts milliseconds (seen on SQLite, whose statements take less).
        tokio::time::sleep(Duration::from_millis(5)).await;
        let x = addresses.shares("x", live).await.unwrap();
        addresses.acknowledge("x", x.started_at).await.unwrap();
        // Joining again changes nothing of the row: its `since` stays, now acknowledged.
        let some = addresses
            .join("y", std::slice::from_ref(&b), live, Among::These)
            .await
            .unwrap()
            .addresses;
        assert_eq!(
            held(&some, &b),
            Some((2, true)),
            "x acknowledged a later read"
        );
    }
);
