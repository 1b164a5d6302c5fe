//! A labelled soft-404 corpus: many hosts on loopback (one address each, one port), each of a
//! [`Kind`] that says how it answers a path it does not have, and a list of its URLs, each
//! labelled real, soft 404 or hard 404. The server counts, per host, every request and the
//! probes (a last segment of 20 letters and digits, as the crawler makes them) per pattern.
//! And a blog whose links redirect into many directories ([`spawn_guessing_blog`]), which
//! only the per-host cap on directory probes keeps from costing a probe each.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::Write;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::bench::{bind_hosts, host};
use crate::soft404_pages::{
    host_pages, layout, not_found, real_page, search_page, words, HostPages, SPA_SHELL,
};
pub use crate::soft404_pages::{Kind, Label};

/// A running corpus; it stops when the runtime does.
pub struct Corpus {
    pub port: u16,
    /// Every URL listed, with its label and its host's kind.
    pub urls: Vec<(String, Label, Kind)>,
    pub hosts: usize,
    counts: Arc<Counts>,
}

#[derive(Default)]
struct Counts {
    requests: Mutex<HashMap<IpAddr, u64>>,
    /// Probes by (host, directory and extension).
    probes: Mutex<HashMap<(IpAddr, String), u64>>,
}

struct Host {
    index: usize,
    pages: HostPages,
    counts: Arc<Counts>,
    ids: AtomicU64,
}

/// Starts `per_kind` hosts of each of `kinds`, each with `n` pages of each pattern.
pub async fn spawn_corpus(kinds: &[Kind], per_kind: usize, n: usize) -> Corpus {
    let hosts = kinds.len() * per_kind;
    let listeners = bind_hosts(hosts).await;
    let port = listeners[0].local_addr().unwrap().port();
    let counts = Arc::new(Counts::default());
    let mut urls = Vec::new();
    for (index, listener) in listeners.into_iter().enumerate() {
        let kind = kinds[index / per_kind];
        let pages = host_pages(index, kind, n);
        for (path, label) in &pages.listed {
            urls.push((format!("http://{}:{port}{path}", host(index)), *label, kind));
        }
        let host = Arc::new(Host {
            index,
            pages,
            counts: counts.clone(),
            ids: AtomicU64::new(0x5eed),
        });
        tokio::spawn(serve(listener, host));
    }
    Corpus {
        port,
        urls,
        hosts,
        counts,
    }
}

impl Corpus {
    /// Writes the list of URLs to `path`.
    pub fn write_list(&self, path: &std::path::Path) {
        let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
        for (url, _, _) in &self.urls {
            writeln!(file, "{url}").unwrap();
        }
        file.flush().unwrap();
    }

    /// Requests every host has seen, in all.
    pub fn requests(&self) -> u64 {
        self.counts.requests.lock().unwrap().values().sum()
    }

    /// Requests seen, by host address.
    pub fn requests_by_host(&self) -> HashMap<IpAddr, u64> {
        self.counts.requests.lock().unwrap().clone()
    }

    /// Probes seen, by (host address, pattern).
    pub fn probes(&self) -> HashMap<(IpAddr, String), u64> {
        self.counts.probes.lock().unwrap().clone()
    }
}

/// A blog on one host whose list holds `n` links its server redirects to a post, each in a
/// directory of its own (`/guess-N/post` 301 to `/posts/post-N/`, as WordPress guesses a
/// mistyped slug), and `n` missing posts (`/gone-N/`); a missing path answers 200 "page not
/// found". Each redirected link looks missing (it was sent elsewhere) and the root's probe
/// does not explain it (the probe was not moved), so without a cap each costs its
/// directory's probe, asked twice (the host answers with a page). The guesses are real, the
/// missing posts soft 404s that the root's probe finds.
pub async fn spawn_guessing_blog(n: usize) -> Corpus {
    let listener = bind_hosts(1).await.remove(0);
    let port = listener.local_addr().unwrap().port();
    let counts = Arc::new(Counts::default());
    let kind = Kind::Template("en");
    let urls = (0..n)
        .flat_map(|i| {
            [
                (format!("/guess-{i}/post"), Label::Real),
                (format!("/gone-{i}/"), Label::Soft404),
            ]
        })
        .map(|(path, label)| (format!("http://{}:{port}{path}", host(0)), label, kind))
        .collect();
    let blog = Arc::new(Blog {
        counts: counts.clone(),
        ids: AtomicU64::new(1),
    });
    tokio::spawn(serve(listener, blog));
    Corpus {
        port,
        urls,
        hosts: 1,
        counts,
    }
}

/// The blog of [`spawn_guessing_blog`].
struct Blog {
    counts: Arc<Counts>,
    ids: AtomicU64,
}

impl Respond for Blog {
    fn respond(&self, request: &Request<Incoming>) -> Response<Full<Bytes>> {
        let path = request.uri().path();
        self.counts.count(0, path);
        let post = |n: &str| {
            let text = format!("<h1>Post {n}</h1><p>{}</p>", words(&format!("post{n}"), 80));
            reply(200, None, layout(0, &format!("Post {n}"), &text))
        };
        let guess = path
            .strip_prefix("/guess-")
            .and_then(|rest| rest.strip_suffix("/post"));
        let posted = path
            .strip_prefix("/posts/post-")
            .and_then(|rest| rest.strip_suffix('/'));
        match (guess, posted) {
            (Some(n), _) => reply(301, Some(format!("/posts/post-{n}/")), String::new()),
            (_, Some(n)) => post(n),
            _ => {
                let id = self.ids.fetch_add(7919, Ordering::Relaxed);
                reply(200, None, not_found(0, "en", path, id))
            }
        }
    }
}

/// A test server's answer to a request.
trait Respond: Send + Sync + 'static {
    fn respond(&self, request: &Request<Incoming>) -> Response<Full<Bytes>>;
}

async fn serve(listener: TcpListener, host: Arc<impl Respond>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let host = host.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |r| {
                let host = host.clone();
                async move { Ok::<_, Infallible>(host.respond(&r)) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

impl Respond for Host {
    fn respond(&self, request: &Request<Incoming>) -> Response<Full<Bytes>> {
        let path = request.uri().path();
        self.counts.count(self.index, path);
        let html = |status: u16, body: String| reply(status, None, self.noise(body));
        let redirect = |to: String| reply(302, Some(to), String::new());
        match (self.pages.kind, path) {
            (Kind::Spa, _) => html(200, SPA_SHELL.to_owned()),
            (Kind::RedirectHome, "/index.html") => reply(301, Some("/".into()), String::new()),
            (Kind::RedirectLogin, "/login") => html(
                200,
                layout(self.index, "Sign in", "<form>user password sign in</form>"),
            ),
            (Kind::Search, "/search") => {
                let query = request.uri().query().unwrap_or("").trim_start_matches("q=");
                html(200, search_page(self.index, query))
            }
            (Kind::Chain, "/error") => redirect("/notfound.html".into()),
            (Kind::Chain, "/notfound.html") => html(200, not_found(self.index, "en", "", 0)),
            (Kind::HomeForAll, "/") => html(200, real_page(self.index, "/")),
            (_, path) if self.pages.real.contains(path) => html(200, real_page(self.index, path)),
            (Kind::Honest, _) => html(404, not_found(self.index, "en", path, 0)),
            (Kind::Template(lang), _) => html(200, self.not_found(lang, path)),
            (Kind::Search | Kind::Noisy, _) => html(200, self.not_found("en", path)),
            (Kind::RedirectHome, _) => redirect("/".into()),
            (Kind::RedirectLogin, _) => redirect(format!("/login?next={}", encode(path))),
            (Kind::Chain, _) => redirect(format!("/error?code=404&from={}", encode(path))),
            (Kind::HomeForAll, _) => html(200, real_page(self.index, "/")),
        }
    }
}

impl Host {
    /// On a `Noisy` host, `html` with a list of words that changes with every request.
    fn noise(&self, html: String) -> String {
        if self.pages.kind != Kind::Noisy {
            return html;
        }
        let seed = self.ids.fetch_add(1, Ordering::Relaxed);
        let popular = words(&format!("popular{seed}"), 18);
        html.replace(
            "</main>",
            &format!("</main><aside>Popular now: {popular}</aside>"),
        )
    }

    /// The not-found template, with a request id that changes every time.
    fn not_found(&self, lang: &str, path: &str) -> String {
        let id = self.ids.fetch_add(7919, Ordering::Relaxed);
        not_found(self.index, lang, path, id)
    }
}

impl Counts {
    /// Counts a request of host `index` for `path`, and the probe it is, if it is one.
    fn count(&self, index: usize, path: &str) {
        let ip: IpAddr = host(index).parse().unwrap();
        *self.requests.lock().unwrap().entry(ip).or_default() += 1;
        let (dir, last) = path.rsplit_once('/').unwrap_or(("", path));
        let (stem, ext) = last.split_once('.').unwrap_or((last, ""));
        let is_probe = stem.len() == 20
            && stem
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if is_probe {
            let pattern = format!("{dir}/*.{ext}");
            *self
                .probes
                .lock()
                .unwrap()
                .entry((ip, pattern))
                .or_default() += 1;
        }
    }
}

fn encode(path: &str) -> String {
    url::form_urlencoded::byte_serialize(path.as_bytes()).collect()
}

fn reply(status: u16, location: Option<String>, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::builder()
        .status(status)
        .header("content-type", "text/html; charset=utf-8");
    if let Some(location) = location {
        response = response.header("location", location);
    }
    response.body(Full::new(Bytes::from(body))).unwrap()
}
