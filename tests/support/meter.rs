//! A local HTTP server that measures what each of its hosts sees, to check politeness from the
//! server's side: per host, the most requests in flight at once, the most started within any one
//! second, and how many in all. Every request (HEAD or GET) is answered after a fixed latency,
//! so that requests overlap and a per-host concurrency limit matters: 200 for any path but
//! those of a list with dead links ([`Meter::write_list_with_dead_links`]), which say their
//! answer: `/dead/n` 404, `/moved/n` a 301 to `/n`, `/slow/n` 200 a second later, `/head404/n`
//! 404 to HEAD and 200 to GET (a server whose HEAD is not to be believed).
//!
//! Its hosts are loopback addresses on one port ([`crate::bench::host`]): the crawler's
//! politeness keys on the host without the port, so each address is a host of its own.

use std::convert::Infallible;
use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::bench::{bind_hosts, host};
use crate::stamped::{stamp_listener, Stamped};

/// The sliding window of [`Report::max_per_second`].
const WINDOW: Duration = Duration::from_secs(1);
/// What a `/slow/` path adds to the latency.
const SLOW: Duration = Duration::from_secs(1);

/// A running meter. Its listeners close when it is dropped.
pub struct Meter {
    port: u16,
    /// One tally per host, host `i` being `bench::host(i)`.
    tallies: Vec<Arc<Tally>>,
    listeners: Vec<JoinHandle<()>>,
}

/// What the meter's hosts saw: one host's figures, or the [`Meter::peaks`] over all of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub requests: usize,
    /// The most requests in flight at once, from a request's arrival to its answer.
    pub max_in_flight: usize,
    /// The most requests that arrived within any one second: the sliding window `[t, t + 1 s)`
    /// over the arrival times (the kernel's receive times, `stamped.rs`).
    pub max_per_second: usize,
}

/// A list of the meter's URLs, as written by [`Meter::write_list`].
pub struct UrlList {
    pub urls: Vec<String>,
    /// How many URLs each host has, by host index.
    pub per_host: Vec<usize>,
}

/// What one host has seen so far.
#[derive(Default)]
struct Tally {
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    /// When each request arrived (the kernel's receive time, since the Unix epoch); the
    /// per-second maximum is computed from these when read. A mutex: one short push per
    /// request, far below the cost of the request itself.
    starts: Mutex<Vec<Duration>>,
}

/// Starts a meter of `hosts` hosts (1 to `bench::HOSTS`) that answers after `latency`.
pub async fn spawn_meter(hosts: usize, latency: Duration) -> Meter {
    let bound = bind_hosts(hosts).await;
    let port = bound[0].local_addr().expect("a bound address").port();
    let tallies: Vec<Arc<Tally>> = (0..hosts).map(|_| Arc::default()).collect();
    let listeners = bound
        .into_iter()
        .zip(&tallies)
        .map(|(listener, tally)| tokio::spawn(serve(listener, tally.clone(), latency)))
        .collect();
    Meter {
        port,
        tallies,
        listeners,
    }
}

impl Meter {
    /// URL `n` of host `host_index`.
    pub fn url(&self, host_index: usize, n: usize) -> String {
        format!("http://{}:{}/{n}", host(host_index), self.port)
    }

    /// Writes `n` URLs to `path`, one a line. A `share` of them (0.0 to 1.0) are on host 0,
    /// spread evenly along the list, and the others take the other hosts in turn; with a
    /// `share` of 0, all hosts take turns.
    pub fn write_list(&self, path: &Path, n: usize, share: f64) -> UrlList {
        self.write_list_of(path, n, share, |i| i.to_string())
    }

    /// Writes `n` URLs to `path` as [`Meter::write_list`], with link rot mixed in, about so many
    /// in a hundred, on every host alike: 10 dead (404), 5 moved (a 301 to a live page), 1 slow
    /// (a second more), 2 whose HEAD says 404 where GET says 200 (alive).
    pub fn write_list_with_dead_links(&self, path: &Path, n: usize, share: f64) -> UrlList {
        self.write_list_of(path, n, share, rotten_path)
    }

    fn write_list_of(
        &self,
        path: &Path,
        n: usize,
        share: f64,
        path_of: impl Fn(usize) -> String,
    ) -> UrlList {
        let hosts = self.tallies.len();
        let big = (n as f64 * share.clamp(0.0, 1.0)).round() as usize;
        let mut out = BufWriter::new(File::create(path).expect("create the URL list"));
        let mut list = UrlList {
            urls: Vec::with_capacity(n),
            per_host: vec![0; hosts],
        };
        for i in 0..n {
            // Host 0 takes URL i when the count `i * big / n` steps up: `big` of `n`, evenly.
            let index = match (big, hosts) {
                (_, 1) => 0,
                (0, _) => i % hosts,
                _ if (i + 1) * big / n > i * big / n => 0,
                _ => 1 + (i - i * big / n) % (hosts - 1),
            };
            let path = path_of(i);
            let url = format!("http://{}:{}/{path}", host(index), self.port);
            writeln!(out, "{url}").expect("write the URL list");
            list.urls.push(url);
            list.per_host[index] += 1;
        }
        out.flush().expect("write the URL list");
        list
    }

    /// What host `host_index` has seen since the meter started or was [`Meter::reset`].
    pub fn report(&self, host_index: usize) -> Report {
        self.tallies[host_index].report()
    }

    /// The highest of each figure over all hosts (each may come from another host), with the
    /// requests of all: what a limit per host is checked against.
    pub fn peaks(&self) -> Report {
        self.tallies
            .iter()
            .map(|tally| tally.report())
            .fold(Report::default(), |peaks, host| Report {
                requests: peaks.requests + host.requests,
                max_in_flight: peaks.max_in_flight.max(host.max_in_flight),
                max_per_second: peaks.max_per_second.max(host.max_per_second),
            })
    }

    /// When each host's requests arrived, in order (the kernel's receive times, since the Unix
    /// epoch), by host index.
    pub fn arrivals(&self) -> Vec<Vec<Duration>> {
        self.tallies
            .iter()
            .map(|tally| {
                let mut starts = tally.starts.lock().expect("starts lock poisoned").clone();
                starts.sort_unstable();
                starts
            })
            .collect()
    }

    /// Forgets what was seen, for the next run against the same meter (call it when idle).
    pub fn reset(&self) {
        for tally in &self.tallies {
            tally.starts.lock().expect("starts lock poisoned").clear();
            let now = tally.in_flight.load(Ordering::SeqCst);
            tally.max_in_flight.store(now, Ordering::SeqCst);
        }
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        for listener in &self.listeners {
            listener.abort();
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} requests, at most {} in flight, at most {} started within one second",
            self.requests, self.max_in_flight, self.max_per_second
        )
    }
}

impl UrlList {
    /// The URLs of the host that has the most: the one that sets a politeness floor.
    pub fn most_on_one_host(&self) -> usize {
        self.per_host.iter().copied().max().unwrap_or(0)
    }
}

/// The path of URL `i` of a list with dead links ([`Meter::write_list_with_dead_links`]).
fn rotten_path(i: usize) -> String {
    // By a hash of `i`, not `i % 100`: a list spreads URL `i` to host `i % hosts`, so with 100
    // or 1,000 hosts `i % 100` made whole hosts dead, or slow (every URL of one host a second
    // late: a floor of its own, which the `zd` and `ad` runs measured rather than the mix).
    let mixed = ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % 100;
    match mixed {
        0..=9 => format!("dead/{i}"),
        10..=14 => format!("moved/{i}"),
        15 => format!("slow/{i}"),
        16..=17 => format!("head404/{i}"),
        _ => i.to_string(),
    }
}

/// How many of the first `n` URLs of a list with dead links are dead.
pub fn dead_links_in(n: usize) -> usize {
    (0..n)
        .filter(|&i| rotten_path(i).starts_with("dead/"))
        .count()
}

/// Serves one host on `listener`, counting into `tally`, until the meter is dropped.
async fn serve(listener: TcpListener, tally: Arc<Tally>, latency: Duration) {
    stamp_listener(&listener).expect("ask for receive times");
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let Ok((stream, arrival)) = Stamped::new(stream) else {
            continue;
        };
        let tally = tally.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let tally = tally.clone();
                let arrived = arrival.last_or_now();
                let head = request.method() == Method::HEAD;
                let path = request.uri().path().to_owned();
                async move { tally.answer(arrived, latency, head, &path).await }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

impl Tally {
    /// Counts a request that `arrived` from then until it is answered (or its connection
    /// drops).
    async fn answer(
        &self,
        arrived: Duration,
        latency: Duration,
        head: bool,
        path: &str,
    ) -> Result<Response<Full<Bytes>>, Infallible> {
        let _in_flight = self.arrive(arrived);
        let (kind, rest) = path[1..].split_once('/').unwrap_or(("", ""));
        let slow = if kind == "slow" { SLOW } else { Duration::ZERO };
        tokio::time::sleep(latency + slow).await;
        let response = Response::builder();
        let response = match kind {
            "dead" => response.status(404),
            "head404" if head => response.status(404),
            "moved" => response.status(301).header("location", format!("/{rest}")),
            _ => response,
        };
        let body = Full::new(Bytes::from_static(b"meter\n"));
        Ok(response.body(body).expect("a valid response"))
    }

    fn arrive(&self, arrived: Duration) -> InFlight<'_> {
        self.starts
            .lock()
            .expect("starts lock poisoned")
            .push(arrived);
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(self)
    }

    fn report(&self) -> Report {
        let mut starts = self.starts.lock().expect("starts lock poisoned").clone();
        Report {
            requests: starts.len(),
            max_in_flight: self.max_in_flight.load(Ordering::SeqCst),
            max_per_second: most_within(&mut starts, WINDOW),
        }
    }
}

/// A request in flight; counted out when dropped.
struct InFlight<'a>(&'a Tally);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The most of `starts` within any half-open window `[t, t + window)`. The busiest window can
/// always be slid to begin at a start, so only those are tried (two pointers, after a sort).
pub fn most_within(starts: &mut [Duration], window: Duration) -> usize {
    starts.sort_unstable();
    let mut first = 0;
    let mut most = 0;
    for (last, &at) in starts.iter().enumerate() {
        while at - starts[first] >= window {
            first += 1;
        }
        most = most.max(last + 1 - first);
    }
    most
}

/// Where `starts` (in order) first hold `n` within one `window`: the index of the first of
/// them, if they ever do (never for `n` = 0).
pub fn first_within(starts: &[Duration], n: usize, window: Duration) -> Option<usize> {
    let n = n.checked_sub(1)?;
    (0..starts.len().saturating_sub(n)).find(|&i| starts[i + n] - starts[i] < window)
}

/// The gaps between `starts` (in order), one after each but the first, in milliseconds.
pub fn gaps_ms(starts: &[Duration]) -> Vec<u128> {
    starts
        .windows(2)
        .map(|w| (w[1] - w[0]).as_millis())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(base: Duration, millis: &[u64]) -> Vec<Duration> {
        millis
            .iter()
            .map(|&ms| base + Duration::from_millis(ms))
            .collect()
    }

    #[test]
    fn a_window_holds_the_starts_less_than_a_second_apart() {
        let base = crate::stamped::now();
        // Every 50 ms for 2 s: 20 in any second, the 21st is exactly a second after the first.
        let mut even: Vec<Duration> = at(base, &(0..40).map(|i| i * 50).collect::<Vec<_>>());
        assert_eq!(most_within(&mut even, WINDOW), 20);
        let mut burst = at(base, &[1500, 0, 10, 990, 1000, 1001, 1989]);
        assert_eq!(most_within(&mut burst, WINDOW), 5, "1000 to 1989");
        assert_eq!(most_within(&mut [], WINDOW), 0);
        // Sorted by `most_within`: 0, 10, 990, 1000, 1001, 1500, 1989. Five are first within
        // a second from 990 ms (to 1989), four from 10 ms (to 1001).
        assert_eq!(first_within(&burst, 5, WINDOW), Some(2));
        assert_eq!(first_within(&burst, 4, WINDOW), Some(1));
        assert_eq!(first_within(&burst, 6, WINDOW), None);
        assert_eq!(first_within(&burst, 0, WINDOW), None);
        assert_eq!(gaps_ms(&burst[2..]), vec![10, 1, 499, 489]);
    }

    #[tokio::test]
    async fn the_meter_counts_what_each_host_sees() {
        let meter = spawn_meter(2, Duration::from_millis(200)).await;
        let dir = tempfile::tempdir().unwrap();
        let list = meter.write_list(&dir.path().join("urls.txt"), 10, 0.7);
        assert_eq!(list.per_host, [7, 3]);
        let url = url::Url::parse(&meter.url(0, 0)).unwrap();
        let host = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap());
        let get = |path: usize| {
            let host = host.clone();
            tokio::spawn(async move {
                let mut stream = tokio::net::TcpStream::connect(host.as_str()).await.unwrap();
                let request = format!("GET /{path} HTTP/1.1\r\nhost: {host}\r\n\r\n");
                tokio::io::AsyncWriteExt::write_all(&mut stream, request.as_bytes())
                    .await
                    .unwrap();
                let mut answer = [0; 12];
                tokio::io::AsyncReadExt::read_exact(&mut stream, &mut answer)
                    .await
                    .unwrap();
                assert_eq!(&answer, b"HTTP/1.1 200");
            })
        };
        let requests: Vec<_> = (0..3).map(get).collect();
        for request in requests {
            request.await.unwrap();
        }
        let expected = Report {
            requests: 3,
            max_in_flight: 3,
            max_per_second: 3,
        };
        assert_eq!(meter.report(0), expected);
        assert_eq!(meter.report(1), Report::default());
        assert_eq!(meter.peaks(), expected);
        meter.reset();
        assert_eq!(meter.peaks(), Report::default());
    }
}
