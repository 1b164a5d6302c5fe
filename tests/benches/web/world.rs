//! The list: hosts of zipf sizes, each with its own loopback address and DNS record, some of
//! them broken, and a label (alive or not) for every URL.
//!
//! Deterministic: the same `urls` and `hosts` give the same list on every run.
//!
//! How the labels are decided (what a user of a link checker wants to be told):
//! - alive: a 2xx at the end, redirects followed; a transient failure that a retry gets past
//!   (a 500 once, a 503 twice, a 429 once with or without Retry-After) is alive, since the page
//!   is there; a HEAD answered 405 whose GET answers 200 is alive;
//! - not alive: 404; a name with no address (NXDOMAIN, SERVFAIL, a DNS server that never
//!   answers); a refused connection; a server that accepts and never answers; a certificate the
//!   client does not trust or for another name; and a server that answers only after 30 to 45 s.
//!   That last one is a choice: both tools run with a 20 s timeout (the crawler's default), and
//!   a page that takes longer than the timeout the user set is not there for them; a tool that
//!   waits for it breaks its own timeout.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::time::Duration;

use crawler_tests::dns::Record;

/// The suffix of every name: not reserved (lychee refuses `.test`, `.example`, `.localhost`).
pub const SUFFIX: &str = "webbench";

/// Share of the small hosts that are broken.
const BROKEN_SHARE: f64 = 0.05;
/// A host with more URLs than this is not "small" (never broken).
const SMALL: usize = 50;

/// What a host does, whatever the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostKind {
    Live,
    NxDomain,
    ServFail,
    /// The DNS server never answers for the name.
    DnsSilent,
    /// An address nothing listens on.
    Refused,
    /// Accepts connections, never answers.
    Hung,
    /// Answers 200 after 30 to 45 s.
    Slow,
    /// https with a self-signed certificate.
    SelfSigned,
    /// https with a certificate from a trusted CA, for another name.
    WrongName,
}

impl HostKind {
    pub const BROKEN: [HostKind; 8] = [
        HostKind::NxDomain,
        HostKind::ServFail,
        HostKind::DnsSilent,
        HostKind::Refused,
        HostKind::Hung,
        HostKind::Slow,
        HostKind::SelfSigned,
        HostKind::WrongName,
    ];

    pub fn is_tls(self) -> bool {
        matches!(self, HostKind::SelfSigned | HostKind::WrongName)
    }
}

/// What a path of a live host does. The path names it: `/{name}/{n}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    Ok,
    NotFound,
    /// 301 to `/ok/{n}` on the same host.
    Redirect,
    /// 500 to the first request, then 200.
    Flaky500,
    /// 503 to the first two requests, then 200.
    Busy503,
    /// 429 with `Retry-After: 1` to the first request, then 200.
    Limit429After,
    /// 429 without Retry-After to the first request, then 200.
    Limit429,
    /// HEAD answered 405, GET 200.
    NoHead,
}

/// Each path kind and how many in 100 URLs of a live host have it.
const MIX: [(PathKind, u64); 8] = [
    (PathKind::Ok, 78),
    (PathKind::NotFound, 5),
    (PathKind::Redirect, 4),
    (PathKind::Flaky500, 3),
    (PathKind::Busy503, 2),
    (PathKind::Limit429After, 2),
    (PathKind::Limit429, 2),
    (PathKind::NoHead, 4),
];

impl PathKind {
    pub fn name(self) -> &'static str {
        match self {
            PathKind::Ok => "ok",
            PathKind::NotFound => "gone",
            PathKind::Redirect => "moved",
            PathKind::Flaky500 => "flaky",
            PathKind::Busy503 => "busy",
            PathKind::Limit429After => "limit",
            PathKind::Limit429 => "limit-bare",
            PathKind::NoHead => "nohead",
        }
    }

    /// The requests a right verdict needs: one per redirect hop and one per transient answer
    /// (a client that asks with GET needs one for a HEAD-405 path).
    pub fn needed(self) -> usize {
        match self {
            PathKind::Ok | PathKind::NotFound | PathKind::NoHead => 1,
            PathKind::Redirect | PathKind::Flaky500 => 2,
            PathKind::Limit429After | PathKind::Limit429 => 2,
            PathKind::Busy503 => 3,
        }
    }

    pub fn parse(name: &str) -> Option<PathKind> {
        MIX.iter().map(|&(k, _)| k).find(|k| k.name() == name)
    }
}

pub struct Host {
    pub name: String,
    pub ip: Ipv4Addr,
    pub kind: HostKind,
    pub urls: usize,
}

/// One URL of the list and its label.
pub struct Url {
    pub url: String,
    pub host: usize,
    pub alive: bool,
}

pub struct World {
    pub hosts: Vec<Host>,
    pub urls: Vec<Url>,
}

impl World {
    /// `urls` URLs on `hosts` hosts, host `i` having about `urls / (H * (i + 1))` (zipf, s = 1).
    pub fn new(urls: usize, hosts: usize) -> World {
        assert!(urls >= hosts, "at least one URL per host");
        let sizes = zipf_sizes(urls, hosts);
        let mut rng = SplitMix(0x0005_eed0_f7eb);
        let small: Vec<usize> = (0..hosts).filter(|&i| sizes[i] <= SMALL).collect();
        let broken = ((small.len() as f64 * BROKEN_SHARE).round() as usize).max(8);
        let mut kinds = vec![HostKind::Live; hosts];
        let mut picks = small.clone();
        for b in 0..broken.min(picks.len()) {
            let at = b + (rng.next() as usize) % (picks.len() - b);
            picks.swap(b, at);
            kinds[picks[b]] = HostKind::BROKEN[b % HostKind::BROKEN.len()];
        }
        let hosts: Vec<Host> = (0..hosts)
            .map(|i| Host {
                name: format!("h{i}.{SUFFIX}"),
                ip: address(i),
                kind: kinds[i],
                urls: sizes[i],
            })
            .collect();
        let mut list = Vec::with_capacity(urls);
        for (i, host) in hosts.iter().enumerate() {
            let scheme = if host.kind.is_tls() { "https" } else { "http" };
            for n in 0..host.urls {
                let path = pick(&mut rng);
                list.push(Url {
                    url: format!("{scheme}://{}/{}/{n}", host.name, path.name()),
                    host: i,
                    alive: host.kind == HostKind::Live && path != PathKind::NotFound,
                });
            }
        }
        // Interleaved as a real list is (hosts' URLs scattered), deterministically.
        for i in (1..list.len()).rev() {
            list.swap(i, (rng.next() as usize) % (i + 1));
        }
        World { hosts, urls: list }
    }

    /// The DNS records of every host: its address, or its DNS failure.
    pub fn records(&self) -> HashMap<String, Record> {
        self.hosts
            .iter()
            .map(|h| {
                let record = match h.kind {
                    HostKind::NxDomain => Record::NxDomain,
                    HostKind::ServFail => Record::ServFail,
                    HostKind::DnsSilent => Record::Silent,
                    _ => Record::A(h.ip),
                };
                (h.name.clone(), record)
            })
            .collect()
    }

    pub fn count(&self, kind: HostKind) -> usize {
        self.hosts.iter().filter(|h| h.kind == kind).count()
    }

    /// The requests host `host`'s right verdicts need ([`PathKind::needed`]); for a live host.
    pub fn needed(&self, host: usize) -> usize {
        let kind = |url: &str| {
            let path = url.splitn(4, '/').nth(3).unwrap_or("");
            PathKind::parse(path.split('/').next().unwrap_or("")).unwrap_or(PathKind::NotFound)
        };
        self.urls
            .iter()
            .filter(|u| u.host == host)
            .map(|u| kind(&u.url).needed())
            .sum()
    }

    /// The URLs of the host that has the most.
    pub fn largest(&self) -> usize {
        self.hosts.iter().map(|h| h.urls).max().unwrap_or(0)
    }
}

/// How long slow host `i` takes to answer: 30 to 45 s.
pub fn slow_delay(i: usize) -> Duration {
    Duration::from_secs(30 + (i as u64 * 7) % 16)
}

/// Host `i`'s address: 127.20.0.1 on, 250 to a /24.
pub fn address(i: usize) -> Ipv4Addr {
    let (hi, lo) = (i / 250, i % 250);
    Ipv4Addr::new(127, 20 + (hi / 250) as u8, (hi % 250) as u8, 1 + lo as u8)
}

/// Sizes proportional to 1 / (i + 1), each at least 1, summing to `urls`.
fn zipf_sizes(urls: usize, hosts: usize) -> Vec<usize> {
    let harmonic: f64 = (1..=hosts).map(|k| 1.0 / k as f64).sum();
    let mut sizes: Vec<usize> = (0..hosts)
        .map(|i| ((urls as f64 / harmonic / (i + 1) as f64) as usize).max(1))
        .collect();
    let mut total: usize = sizes.iter().sum();
    let mut i = 0;
    while total != urls {
        if total < urls {
            sizes[i % hosts] += 1;
            total += 1;
        } else if sizes[i % hosts] > 1 {
            sizes[i % hosts] -= 1;
            total -= 1;
        }
        i += 1;
    }
    sizes
}

fn pick(rng: &mut SplitMix) -> PathKind {
    let mut roll = rng.next() % 100;
    for (kind, share) in MIX {
        if roll < share {
            return kind;
        }
        roll -= share;
    }
    PathKind::Ok
}

/// splitmix64: a deterministic stream, so every run has the same list.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}
