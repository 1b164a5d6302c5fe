//! A real browser for the dashboard's tests: headless Chromium driven through chromedriver,
//! both on loopback, started so that nothing it does can leave 127.0.0.0/8.
//!
//! Every request not for loopback goes to a proxy (a local listener this module runs) that
//! records it and refuses it, and every host name but `localhost` resolves to nothing, so a
//! browser calling home is caught rather than trusted not to: a test asserts the proxy saw
//! nothing. The flags that quiet the browser's own traffic (background networking, component
//! updates, sync…) are there so that it has none to be caught.

use std::net::{SocketAddr, TcpListener as StdListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Debian's chromium package: `/usr/bin/chromium` is a wrapper script that adds its own flags,
/// Google API keys from /etc/chromium.d and a default search engine that is preconnected at
/// start (seen here as requests to start.duckduckgo.com); the browser itself is this.
pub const CHROMIUM: &str = "/usr/lib/chromium/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// A local proxy that records the first line of every request and answers 403.
pub struct Proxy {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    pub async fn spawn() -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let log = log.clone();
                tokio::spawn(async move {
                    let mut head = vec![0; 4096];
                    let n = stream.read(&mut head).await.unwrap_or(0);
                    let text = String::from_utf8_lossy(&head[..n]);
                    let line = text.lines().next().unwrap_or("(nothing)").to_owned();
                    log.lock().unwrap().push(line);
                    let _ = stream
                        .write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                });
            }
        });
        Proxy { addr, seen }
    }

    /// The request lines seen so far (`GET http://… HTTP/1.1`, `CONNECT host:443 HTTP/1.1`).
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// chromedriver, in its own process group so that the browsers it starts die with it.
pub struct Driver {
    child: Child,
    pub port: u16,
    _profile: tempfile::TempDir,
    profile: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        // SAFETY: a signal to the process group this test started.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// Fails, naming the Debian package to install, when the browser or its driver is missing.
pub fn require_browser() {
    for (path, package) in [
        ("/usr/bin/chromium", "chromium"),
        (CHROMIUM, "chromium"),
        (CHROMEDRIVER, "chromium-driver"),
    ] {
        assert!(
            Path::new(path).exists(),
            "the dashboard's browser test needs Debian's {package}: {}",
            crawler_tests::not_installed(path, package)
        );
    }
}

impl Driver {
    /// Starts chromedriver on a free port of 127.0.0.1 and waits until it listens.
    pub fn spawn() -> Driver {
        require_browser();
        let port = closed_port().port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start chromedriver");
        let profile = tempfile::tempdir().unwrap();
        let driver = Driver {
            child,
            port,
            profile: profile.path().display().to_string(),
            _profile: profile,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        driver
    }

    /// A headless Chromium whose every request off loopback goes to `proxy`.
    pub async fn browser(&self, proxy: &Proxy) -> Client {
        self.browser_resolving(proxy, &[]).await
    }

    /// [`Driver::browser`], in which each of `names` resolves to 127.0.0.1 and is asked
    /// directly: a site of another name served on loopback (an attacker's page, or the
    /// dashboard reached by a name that was made to point at it).
    pub async fn browser_resolving(&self, proxy: &Proxy, names: &[&str]) -> Client {
        let closed = closed_port();
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": CHROMIUM,
                "args": chromium_args(&self.profile, proxy.addr, closed, names),
                // Debian's default search engine is preconnected to at start (seen as
                // CONNECT start.duckduckgo.com, whatever the prediction and search
                // preferences): the default engine is one on the closed port.
                "prefs": {
                    "default_search_provider_data.template_url_data": {
                        "keyword": "closed",
                        "short_name": "closed",
                        "url": format!("http://{closed}/?q={{searchTerms}}"),
                    },
                    "net.network_prediction_options": 2,
                    "search.suggest_enabled": false,
                },
            }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .expect("a Chromium session through chromedriver")
    }
}

/// A port of 127.0.0.1 nothing listens on (taken, then let go).
fn closed_port() -> SocketAddr {
    StdListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
}

/// Headless, a throwaway profile, everything off loopback to `proxy`, every name but
/// localhost and `names` (127.0.0.1) unresolvable, and the browser's own background traffic
/// turned off. A name is first tried over HTTPS otherwise (HttpsUpgrades).
///
/// Found by running Chromium 156 against the recording proxy: with only the usual flags it
/// still asked update.googleapis.com (an on-demand component, the optimization guide's model
/// manifest, which `--disable-component-update` does not stop), clients2.google.com (network
/// time), optimizationguide-pa.googleapis.com, and accounts.google.com (four CONNECTs, whatever
/// the sign-in preferences). No switch turns the updater or the accounts lookup off, so their
/// servers are moved to `closed`, a port of 127.0.0.1 where nothing listens: they fail there,
/// inside loopback, and nothing reaches the proxy.
fn chromium_args(
    profile: &str,
    proxy: SocketAddr,
    closed: SocketAddr,
    names: &[&str],
) -> Vec<String> {
    let mut args: Vec<String> = [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--disable-client-side-phishing-detection",
        "--disable-domain-reliability",
        "--metrics-recording-only",
        "--no-pings",
        "--password-store=basic",
        "--use-mock-keychain",
        "--disable-field-trial-config",
        "--disable-search-engine-choice-screen",
        "--disable-features=Translate,OptimizationHints,OptimizationGuideModelDownloading,\
         OptimizationHintsFetching,OptimizationTargetPrediction,NetworkTimeServiceQuerying,\
         MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,\
         CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,\
         PreconnectToSearch,HttpsUpgrades",
    ]
    .map(String::from)
    .into();
    // The first rule that maps a name wins: `names` before the rest.
    let mapped: Vec<String> = names
        .iter()
        .map(|n| format!("MAP {n} 127.0.0.1, "))
        .collect();
    args.push(format!(
        "--host-resolver-rules={}MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
        mapped.concat()
    ));
    let bypassed: Vec<String> = names.iter().map(|n| format!(";{n}")).collect();
    args.push(format!(
        "--proxy-bypass-list=127.0.0.1;localhost{}",
        bypassed.concat()
    ));
    args.push(format!("--proxy-server=http://{proxy}"));
    args.push(format!("--user-data-dir={profile}"));
    args.push(format!("--component-updater=url-source=http://{closed}/"));
    args.push(format!("--gaia-url=http://{closed}/"));
    args
}
