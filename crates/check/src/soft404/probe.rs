//! Probes: what a host answers for a path that cannot exist, one per host and path pattern,
//! made once per worker (checks of the pattern wait for the one in flight) and once per fleet
//! (stored in the database, reused for [`TTL`] by whoever holds the host next). Besides the
//! root's, a host is probed in [`DIRECTORY_PROBES`] patterns at most, counted in the worker
//! and in the fleet's store.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crawler_verdict::Verdict;
use futures::future::BoxFuture;
use rand::Rng;
use url::Url;

use super::decide::{is_root, Answer};
use super::fingerprint::{Fingerprint, Signals};
use crate::hosts::{HostProbes, Probe, ProbeCell, ProbesOf};

/// How long a stored probe is reused: about one crawl round. A site changing its not-found
/// behaviour is rare, and a day-old probe costs at most a day of misjudged pages.
pub const TTL: Duration = Duration::from_secs(24 * 3600);
/// Directory levels a pattern keeps: `/a/b/c/d.html` is probed as `/a/b/TOKEN.html`, so a
/// host with deep trees costs a probe per top directory, not per leaf.
const LEVELS: usize = 2;
/// Longest pattern stored (the database key's share).
const MAX_PATTERN: usize = 512;
/// Patterns besides the root's (a directory, an extension) that one host is probed in at
/// most, within [`TTL`]. A directory's probe is asked only for a page that looks missing and
/// that the root's probe did not explain; a host with many such pages in many directories (a
/// blog whose mistyped slugs redirect to posts: each slug a directory of its own) would
/// otherwise pay one or two probe requests for each. Past the cap, a page of a pattern not
/// yet probed is judged by the root's probe alone, which has already found it alive: the cap
/// costs recall, never precision. Two leaves room for a wiki and its scripts (`/wiki/*`,
/// `/w/*.php`) under a host that answers otherwise, at four probe requests at most.
pub const DIRECTORY_PROBES: usize = 2;

/// Where a URL's probe goes: its pattern (the cache key), directory and extension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// `scheme://authority/dir/*.ext`.
    pub key: String,
    /// `/dir/`, at most [`LEVELS`] deep.
    pub dir: String,
    /// `.ext`, or empty.
    pub ext: String,
}

impl Pattern {
    /// Whether this is a host's own pattern, at its root with no extension (`/*`), of which
    /// the probe is always asked; the others count against [`DIRECTORY_PROBES`].
    pub fn is_host(&self) -> bool {
        is_host_pattern(&self.key)
    }
}

/// Whether the pattern `key` (`scheme://authority/dir/*.ext`) is a host's own, `…/*`.
fn is_host_pattern(key: &str) -> bool {
    key.split_once("://")
        .and_then(|(_, rest)| rest.split_once('/'))
        .is_some_and(|(_, path)| path == "*")
}

/// The pattern of `url`; `None` for the root and its default documents (never a soft 404)
/// or a pattern too long to store. A path ending in `/` is a directory, probed in its parent
/// as Bar-Yossef et al. probe (`/blog/hello/` as `/blog/TOKEN`, `/hello/` as the host's
/// root): a blog's pretty permalinks end in `/`, and a redirected one (a mistyped slug) would
/// otherwise be a directory of its own, each costing a probe.
pub fn pattern_of(url: &Url) -> Option<Pattern> {
    let path = url.path();
    if is_root(path) {
        return None;
    }
    let directory = path.strip_suffix('/');
    let path = directory.unwrap_or(path);
    let (dir, last) = path.rsplit_once('/').unwrap_or(("", path));
    let dirs: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    let mut dir = dirs[..dirs.len().min(LEVELS)].join("/");
    dir = if dir.is_empty() {
        "/".into()
    } else {
        format!("/{dir}/")
    };
    let ext = match last.rsplit_once('.') {
        Some((stem, ext))
            if directory.is_none()
                && !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.bytes().all(|b| b.is_ascii_alphanumeric()) =>
        {
            format!(".{}", ext.to_ascii_lowercase())
        }
        _ => String::new(),
    };
    let authority = &url[url::Position::BeforeHost..url::Position::AfterPort];
    let key = format!("{}://{authority}{dir}*{ext}", url.scheme());
    (key.len() <= MAX_PATTERN).then_some(Pattern { key, dir, ext })
}

/// The host's own pattern, `scheme://authority/*`: what it answers for a missing path at
/// its root, asked before any other (the pattern of `/anything`).
pub fn host_pattern(url: &Url) -> Option<Pattern> {
    let mut root = url.clone();
    root.set_path("/x");
    pattern_of(&root)
}

/// A path in `pattern` that cannot exist: 20 random letters and digits, as Bar-Yossef et al.
/// probe (25 letters) and w3af (8 characters). It starts with a digit and has no upper case
/// letter, a shape canonicalisers leave alone: a wiki capitalises a title's first letter,
/// others lower-case the path, and neither then redirects the probe.
pub fn probe_path(pattern: &Pattern) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    let first = char::from(b'0' + rng.random_range(0..10u8));
    let token: String = std::iter::once(first)
        .chain((1..20).map(|_| CHARS[rng.random_range(0..CHARS.len())] as char))
        .collect();
    format!("{}{token}{}", pattern.dir, pattern.ext)
}

/// One probe as the fleet's store keeps it (a row of the queue's `soft404_probes`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoredProbe {
    pub probe_path: String,
    /// The final status; `None` when the probe got no answer.
    pub status: Option<i32>,
    /// The final URL, the path probed masked.
    pub final_url: Option<String>,
    pub redirects: i32,
    /// The shingles two probes' bodies shared (`fingerprint.rs`).
    pub fingerprint: Option<Vec<u8>>,
    /// The shingles one probe had beyond those: how much the not-found page varies; `-1` for
    /// a probe asked once.
    pub spread: i32,
    pub noindex: bool,
}

/// What the fleet holds of a site's last check: whether a soft 404 found now turns a site that
/// was alive dead, or is confirmed first (`soft404/mod.rs`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LastCheck {
    /// The verdict of the site's last final check, `None` before its first.
    pub verdict: Option<Verdict>,
    /// Checks made in this round that ended in a transient result (a soft 404 to confirm is one).
    pub tries: i32,
}

/// Where probes are shared with the rest of the fleet: the database, in a worker (its
/// `probe_store.rs`, which keeps them in the queue).
pub trait ProbeStore: Send + Sync {
    /// The probe of `host` and `pattern` made within [`TTL`], if any; errors read as none.
    fn load<'a>(&'a self, host: &'a str, pattern: &'a str) -> BoxFuture<'a, Option<StoredProbe>>;
    /// Stores a probe; an error loses only the sharing.
    fn save<'a>(&'a self, host: &'a str, pattern: &'a str, probe: StoredProbe)
        -> BoxFuture<'a, ()>;
    /// The patterns `host` was probed in within [`TTL`] by the fleet; errors read as none
    /// (then the cap holds for this worker's probes only).
    fn patterns<'a>(&'a self, host: &'a str) -> BoxFuture<'a, Vec<String>> {
        let _ = host;
        Box::pin(async { Vec::new() })
    }
    /// What the fleet holds of the last check of the site seeded as `url`; errors read as
    /// none (then a soft 404 is not held back for confirmation).
    fn last_check<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Option<LastCheck>> {
        let _ = url;
        Box::pin(async { None })
    }
}

/// Where a check's probe comes from: the host's entry of the book (its probes,
/// `hosts/probes.rs`), else the fleet's store, else a probe made now.
#[derive(Default)]
pub struct ProbeSource {
    store: OnceLock<Arc<dyn ProbeStore>>,
}

impl ProbeSource {
    pub fn share_in(&self, store: Arc<dyn ProbeStore>) {
        let _ = self.store.set(store);
    }

    /// Where probes are shared, once set.
    pub fn store(&self) -> Option<&Arc<dyn ProbeStore>> {
        self.store.get()
    }

    /// The probe of `pattern` on `host`: cached, else stored, else made by `make` (which says
    /// how long the host is busy when it could not be asked; nothing is cached then). A
    /// pattern other than the host's own is made only within the host's cap, else it is
    /// [`Probe::unprobed`] (see [`ProbeSource::admit`]).
    pub async fn get<F>(
        &self,
        (host, known): ProbesOf<'_>,
        pattern: &Pattern,
        make: F,
    ) -> Result<Arc<Probe>, Duration>
    where
        F: std::future::Future<Output = Result<Probe, Duration>>,
    {
        let cell = cell(known, &pattern.key);
        if let Some(settled) = cell.settled.get() {
            return Ok(settled.clone());
        }
        let probe = cell
            .first
            .get_or_try_init(|| async {
                let store = self.store.get();
                if let Some(row) = match store {
                    Some(store) => store.load(host, &pattern.key).await,
                    None => None,
                } {
                    return Ok::<_, Duration>(Arc::new(from_stored(row)));
                }
                if !pattern.is_host() && !self.admit((host, known), &pattern.key).await {
                    tracing::debug!(host, pattern = pattern.key, "soft-404 probes capped");
                    return Ok(Arc::new(Probe::unprobed()));
                }
                let probe = make.await?;
                if let Some(store) = store {
                    store.save(host, &pattern.key, to_stored(&probe)).await;
                }
                Ok(Arc::new(probe))
            })
            .await?;
        Ok(probe.clone())
    }

    /// `first`, the probe of `pattern` on `host` asked once, settled: its second request
    /// made by `make` (`first` and the second combined; stored for the fleet), once per
    /// worker however many checks ask at once. `first` itself when it is settled already.
    pub async fn settle<F>(
        &self,
        (host, known): ProbesOf<'_>,
        pattern: &Pattern,
        first: &Arc<Probe>,
        make: F,
    ) -> Result<Arc<Probe>, Duration>
    where
        F: std::future::Future<Output = Result<Probe, Duration>>,
    {
        if first.settled {
            return Ok(first.clone());
        }
        let cell = cell(known, &pattern.key);
        let probe = cell
            .settled
            .get_or_try_init(|| async {
                let probe = make.await?;
                if let Some(store) = self.store.get() {
                    store.save(host, &pattern.key, to_stored(&probe)).await;
                }
                Ok::<_, Duration>(Arc::new(probe))
            })
            .await?;
        Ok(probe.clone())
    }

    /// Whether `host` may be probed in the directory pattern `key`: yes if the pattern was
    /// admitted before (its probe found the host busy), or if fewer than [`DIRECTORY_PROBES`]
    /// directory patterns of the host were admitted by this worker or stored by the fleet
    /// within [`TTL`] (the union, so this worker's probes stored meanwhile count once). A
    /// host is held by one worker at a time (its partition's lease), so what the fleet spent
    /// before is in the store; only probes in flight at a handover can pass the cap.
    async fn admit(&self, (host, known): ProbesOf<'_>, key: &str) -> bool {
        let stored = match self.store.get() {
            Some(store) => store.patterns(host).await,
            None => Vec::new(),
        };
        let mut known = known.lock().unwrap_or_else(|e| e.into_inner());
        let admitted = &mut known.admitted;
        if admitted.contains(key) || stored.iter().any(|k| k == key) {
            return true;
        }
        let spent: HashSet<&str> = admitted
            .iter()
            .map(String::as_str)
            .chain(stored.iter().map(String::as_str))
            .filter(|k| !is_host_pattern(k))
            .collect();
        if spent.len() >= DIRECTORY_PROBES {
            return false;
        }
        admitted.insert(key.to_owned());
        true
    }
}

/// The cell of the pattern `key` among a host's probes, made empty when absent.
fn cell(known: &Mutex<HostProbes>, key: &str) -> Arc<ProbeCell> {
    let mut known = known.lock().unwrap_or_else(|e| e.into_inner());
    known.cell(key)
}

/// The stored `spread` of a probe asked once whose spread is not known yet (a worker of
/// before the gray zone reads it as 0: a probe asked once, as it is).
const UNSETTLED: i32 = -1;

fn to_stored(probe: &Probe) -> StoredProbe {
    let Some(answer) = &probe.answer else {
        return StoredProbe {
            probe_path: probe.path.clone(),
            ..StoredProbe::default()
        };
    };
    StoredProbe {
        probe_path: probe.path.clone(),
        status: Some(answer.status.into()),
        final_url: Some(answer.final_url.clone()),
        redirects: answer.redirects as i32,
        fingerprint: answer.body.as_ref().map(Fingerprint::to_bytes),
        spread: if probe.settled {
            answer.spread as i32
        } else {
            UNSETTLED
        },
        noindex: answer.signals.noindex,
    }
}

fn from_stored(row: StoredProbe) -> Probe {
    let settled = row.status.is_none() || row.spread != UNSETTLED;
    let answer = row.status.map(|status| Answer {
        status: u16::try_from(status).unwrap_or_default(),
        final_url: row.final_url.unwrap_or_default(),
        redirects: row.redirects.max(0) as u32,
        body: row.fingerprint.as_deref().map(Fingerprint::from_bytes),
        bare: None,
        spread: row.spread.max(0) as usize,
        signals: Signals {
            title: None,
            noindex: row.noindex,
        },
    });
    Probe {
        path: row.probe_path,
        answer,
        settled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stand_in::StandInBook;

    /// Each host's probes, as the book keeps them.
    type Book = StandInBook<Mutex<HostProbes>>;

    fn pattern(url: &str) -> Option<Pattern> {
        pattern_of(&Url::parse(url).unwrap())
    }

    #[test]
    fn a_pattern_keeps_two_directory_levels_and_the_extension() {
        let p = pattern("https://a.example:8443/a/b/c/page.HTML?q=1").unwrap();
        assert_eq!(p.key, "https://a.example:8443/a/b/*.html");
        assert_eq!((p.dir.as_str(), p.ext.as_str()), ("/a/b/", ".html"));
        let p = pattern("http://a.example/docs/readme").unwrap();
        assert_eq!(p.key, "http://a.example/docs/*");
        assert_eq!(
            pattern("http://a.example/x.tar.gz").unwrap().key,
            "http://a.example/*.gz"
        );
        assert_eq!(pattern("http://a.example/.profile").unwrap().ext, "");
        assert_eq!(pattern("http://a.example/"), None);
        assert_eq!(pattern("http://a.example/index.html"), None);
        assert_eq!(pattern("http://a.example/Default.aspx"), None);
        assert!(pattern("http://a.example/docs/index.html").is_some());
        // A directory is probed in its parent, without an extension.
        assert_eq!(
            pattern("http://a.example/hello/").unwrap().key,
            "http://a.example/*"
        );
        assert_eq!(
            pattern("http://a.example/a/b/c/").unwrap().key,
            "http://a.example/a/b/*"
        );
        assert_eq!(
            pattern("http://a.example/blog/v1.2/").unwrap().key,
            "http://a.example/blog/*"
        );
        let host = host_pattern(&Url::parse("http://a.example/a/b/c.php?x").unwrap());
        assert_eq!(host.unwrap().key, "http://a.example/*");
    }

    #[test]
    fn a_probe_path_is_random_in_the_pattern() {
        let p = pattern("http://a.example/docs/page.php").unwrap();
        let (a, b) = (probe_path(&p), probe_path(&p));
        assert!(
            a.starts_with("/docs/") && a.ends_with(".php") && a.len() == 30,
            "{a}"
        );
        // What a wiki's title case or a lower-casing router would rewrite, it has not.
        assert!(a.as_bytes()[6].is_ascii_digit(), "{a}");
        assert_eq!(a, a.to_lowercase());
        assert_ne!(a, b);
    }

    #[test]
    fn a_probe_round_trips_through_its_stored_form() {
        let probe = Probe {
            path: "/x.html".into(),
            answer: Some(Answer {
                status: 200,
                final_url: "http://a.example/login?next={path}".into(),
                redirects: 2,
                body: Some(Fingerprint::from_bytes(&[1, 0, 0, 0, 0, 0, 0, 0])),
                bare: None,
                spread: 3,
                signals: Signals {
                    title: None,
                    noindex: true,
                },
            }),
            settled: true,
        };
        assert_eq!(from_stored(to_stored(&probe)), probe);
        // A probe asked once is stored so: the worker that loads it asks it again if needed.
        let answer = probe.answer.clone().map(|a| Answer { spread: 0, ..a });
        let once = Probe {
            answer,
            settled: false,
            ..probe.clone()
        };
        assert_eq!(to_stored(&once).spread, UNSETTLED);
        assert_eq!(from_stored(to_stored(&once)), once);
        let silent = Probe {
            path: "/y".into(),
            answer: None,
            settled: true,
        };
        assert_eq!(from_stored(to_stored(&silent)), silent);
        assert!(!silent.compares() && probe.compares());
    }

    #[tokio::test]
    async fn a_pattern_is_probed_once_however_many_checks_ask_at_once() {
        let probes = Arc::new(ProbeSource::default());
        let host = Arc::new(Mutex::new(HostProbes::default()));
        let pattern = pattern("http://a.example/docs/page.html").unwrap();
        let made = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let asks = (0..50).map(|_| {
            let (probes, pattern, made) = (probes.clone(), pattern.clone(), made.clone());
            let host = host.clone();
            tokio::spawn(async move {
                probes
                    .get(("a.example", &host), &pattern, async {
                        made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        Ok(Probe {
                            path: "/docs/x.html".into(),
                            answer: None,
                            settled: true,
                        })
                    })
                    .await
            })
        });
        for ask in asks.collect::<Vec<_>>() {
            assert!(ask.await.unwrap().is_ok());
        }
        assert_eq!(made.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_probe_asked_once_is_settled_once_and_then_served_settled() {
        let probes = Arc::new(ProbeSource::default());
        let host = Arc::new(Mutex::new(HostProbes::default()));
        let pattern = pattern("http://a.example/docs/page.html").unwrap();
        let once = |settled| Probe {
            path: "/docs/x.html".into(),
            answer: None,
            settled,
        };
        let first = probes.get(("a.example", &host), &pattern, async { Ok(once(false)) });
        let first = first.await.unwrap();
        let made = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let asks = (0..20).map(|_| {
            let (probes, pattern, first, made) =
                (probes.clone(), pattern.clone(), first.clone(), made.clone());
            let host = host.clone();
            tokio::spawn(async move {
                let second = async {
                    made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    Ok(once(true))
                };
                probes
                    .settle(("a.example", &host), &pattern, &first, second)
                    .await
            })
        });
        for ask in asks.collect::<Vec<_>>() {
            assert!(ask.await.unwrap().unwrap().settled);
        }
        assert_eq!(made.load(std::sync::atomic::Ordering::SeqCst), 1);
        // Later checks get the settled probe at once; a settled probe is not asked again.
        let later = probes.get(("a.example", &host), &pattern, async { Err(Duration::MAX) });
        let later = later.await.unwrap();
        assert!(later.settled);
        let again = probes.settle(("a.example", &host), &pattern, &later, async {
            Err(Duration::MAX)
        });
        assert!(again.await.is_ok());
    }

    #[tokio::test]
    async fn a_busy_host_is_not_cached_as_probed() {
        let probes = ProbeSource::default();
        let host = Mutex::new(HostProbes::default());
        let pattern = pattern("http://a.example/page").unwrap();
        let busy = probes.get(("a.example", &host), &pattern, async {
            Err(Duration::from_secs(3))
        });
        assert_eq!(busy.await, Err(Duration::from_secs(3)));
        let probe = Probe {
            path: "/z".into(),
            answer: None,
            settled: true,
        };
        let again = probes.get(("a.example", &host), &pattern, async { Ok(probe.clone()) });
        assert_eq!(*again.await.unwrap(), probe);
    }

    /// A fleet's store that holds nothing but the patterns other workers probed.
    struct Fleet(Vec<String>);

    impl ProbeStore for Fleet {
        fn load<'a>(&'a self, _: &'a str, _: &'a str) -> BoxFuture<'a, Option<StoredProbe>> {
            Box::pin(async { None })
        }
        fn save<'a>(&'a self, _: &'a str, _: &'a str, _: StoredProbe) -> BoxFuture<'a, ()> {
            Box::pin(async {})
        }
        fn patterns<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Vec<String>> {
            Box::pin(async { self.0.clone() })
        }
    }

    /// Asks `probes` for the probe of each of `urls`; how many were made.
    async fn ask((probes, book): (&ProbeSource, &Book), urls: &[String]) -> usize {
        let mut made = 0;
        for url in urls {
            let url = Url::parse(url).unwrap();
            let pattern = pattern_of(&url).unwrap();
            let host = url.host_str().unwrap();
            let known = book.of(host);
            let probe = probes.get((host, &known), &pattern, async {
                made += 1;
                Ok(Probe {
                    path: probe_path(&pattern),
                    answer: None,
                    settled: true,
                })
            });
            probe.await.unwrap();
        }
        made
    }

    #[tokio::test]
    async fn a_host_is_probed_in_its_root_and_at_most_the_cap_of_other_patterns() {
        let (probes, book) = (ProbeSource::default(), Book::default());
        let slugs: Vec<String> = (0..10)
            .map(|i| format!("http://blog.example/slug-{i}/post"))
            .collect();
        let root = "http://blog.example/missing".to_owned();
        let made = ask((&probes, &book), &[vec![root], slugs.clone()].concat()).await;
        assert_eq!(made, 1 + DIRECTORY_PROBES);
        // Past the cap, a pattern judges nothing, and is not asked again.
        let capped = pattern_of(&Url::parse(&slugs[9]).unwrap()).unwrap();
        // Were it made, the host would be busy.
        let known = book.of("blog.example");
        let probe = probes.get(("blog.example", &known), &capped, async {
            Err(Duration::MAX)
        });
        assert_eq!(probe.await.as_deref(), Ok(&Probe::unprobed()));
        // The patterns admitted are the first ones, another host has a cap of its own, and a
        // host's root is always asked.
        assert_eq!(ask((&probes, &book), &slugs[..DIRECTORY_PROBES]).await, 0);
        let other: Vec<String> = slugs.iter().map(|u| u.replace("blog", "wiki")).collect();
        assert_eq!(ask((&probes, &book), &other).await, DIRECTORY_PROBES);
        let port = "http://blog.example:8080/missing".to_owned();
        assert_eq!(
            ask((&probes, &book), &[port]).await,
            1,
            "another port's root"
        );
    }

    #[tokio::test]
    async fn the_cap_counts_the_patterns_the_fleet_probed() {
        let (probes, book) = (ProbeSource::default(), Book::default());
        let mut fleet = vec!["http://blog.example/*".to_owned()];
        fleet.extend((1..DIRECTORY_PROBES).map(|i| format!("http://blog.example/old-{i}/*")));
        probes.share_in(Arc::new(Fleet(fleet)));
        let slugs: Vec<String> = (0..5)
            .map(|i| format!("http://blog.example/slug-{i}/post"))
            .collect();
        // One left of the cap; the root's stored pattern is not counted.
        assert_eq!(ask((&probes, &book), &slugs).await, 1);
    }

    #[tokio::test]
    async fn a_capped_pattern_admitted_while_its_host_was_busy_is_asked_again() {
        let (probes, book) = (ProbeSource::default(), Book::default());
        let url = Url::parse("http://blog.example/slug/post").unwrap();
        let pattern = pattern_of(&url).unwrap();
        let known = book.of("blog.example");
        let busy = probes.get(("blog.example", &known), &pattern, async {
            Err(Duration::from_secs(1))
        });
        assert!(busy.await.is_err());
        let others: Vec<String> = (0..5)
            .map(|i| format!("http://blog.example/other-{i}/post"))
            .collect();
        assert_eq!(ask((&probes, &book), &others).await, DIRECTORY_PROBES - 1);
        assert_eq!(ask((&probes, &book), &[url.to_string()]).await, 1);
    }
}
