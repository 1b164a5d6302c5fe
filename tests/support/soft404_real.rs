//! A soft-404 corpus of real server software: Debian's nginx, Apache, lighttpd and Caddy,
//! serving one static documentation site, each configured as admins configure a "not found"
//! (an SPA fallback, a 200 "not found" page, a redirect home or to a login page, or an honest
//! 404), and Debian's MediaWiki (nginx, php-fpm, SQLite) with short URLs, answering a missing
//! article 200 (`$wgSend404Code = false`) or 404, and Debian's WordPress (nginx, php-fpm, a
//! private MariaDB server; see `wordpress.rs`), answering a missing post 404, 200 or with a
//! redirect home. Labels come from the configuration: a URL whose file (or article, or post)
//! exists is real; one that does not is a soft 404, or a hard 404 where the configuration
//! answers 404 (WordPress's own exceptions are labelled in `wordpress.rs`). Every server
//! listens on
//! its own loopback address (127.0.3.N, one port for all) and logs each request, which is how
//! requests and probes are counted.

use std::collections::HashMap;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::mariadb::MariaDb;
use crate::soft404_pages::{words, Label};

mod config;
mod system;
mod wordpress;

pub use config::{Config, Missing, Server, ALL};
use system::{chmod, is_root, nginx_main, php_fpm};
pub use wordpress::KNOWN_MISSES as WORDPRESS_KNOWN_MISSES;

/// A wiki's articles (their text is made up).
const ARTICLES: &[&str] = &[
    "Widgets",
    "Gadgets",
    "Copper_River",
    "Lantern_Harbor",
    "Installation_guide",
    "Deployment_notes",
];

/// A wiki's URLs listed that are real: articles (one spelled in lower case, which the wiki
/// redirects to its title), its main page and a special page (`noindex`, as missing articles).
const WIKI_REAL: &[&str] = &[
    "/wiki/Main_Page",
    "/wiki/Widgets",
    "/wiki/Gadgets",
    "/wiki/Copper_River",
    "/wiki/Lantern_Harbor",
    "/wiki/Installation_guide",
    "/wiki/Deployment_notes",
    "/wiki/widgets",
    "/wiki/Special:RecentChanges",
    "/wiki/Special:AllPages",
];

/// A wiki's URLs listed that are missing articles.
const WIKI_MISSING: &[&str] = &[
    "/wiki/Missing_article",
    "/wiki/missing_article",
    "/wiki/Old_news",
    "/wiki/Copper_Rivers",
    "/wiki/Deployment",
    "/wiki/Templating",
    "/wiki/Installation",
    "/wiki/Talk:Widgets",
    "/wiki/Acme_Corporation_history",
    "/wiki/gadgets_and_widgets",
];

/// The site's files with real content, by path (directories get an `index.html`).
const PAGES: &[&str] = &[
    "/about.html",
    "/contact.html",
    "/docs/index.html",
    "/docs/guide.html",
    "/docs/deployment-guide.html",
    "/docs/faq.html",
    "/docs/api/v1.html",
    "/docs/api/v2.html",
    "/blog/index.html",
    "/blog/2024/launch.html",
    "/blog/2024/roadmap.html",
    "/login/index.html",
];

/// URLs listed that are real, beyond [`PAGES`] (as a user links them).
const REAL_LISTED: &[&str] = &[
    "/",
    "/index.html",
    "/docs/",
    "/docs/guide.html",
    "/docs/deployment-guide.html",
    "/docs/faq.html",
    "/docs/api/v1.html",
    "/docs/api/v2.html",
    "/blog/",
    "/blog/2024/launch.html",
    "/blog/2024/roadmap.html",
    "/about.html",
    "/contact.html",
    "/assets/app.js",
];

/// Listed paths that have no file: words of the app shell's menu among them.
const MISSING_LISTED: &[&str] = &[
    "/deployment.html",
    "/templating.html",
    "/installation.html",
    "/configuration",
    "/docs/old-guide.html",
    "/docs/deployment.html",
    "/docs/Installation_Guide.html",
    "/docs/api/v3.html",
    "/blog/2019/hello-world.html",
    "/blog/2024/draft-post.html",
    "/about-us",
    "/team.html",
    "/assets/app.old.js",
];

/// The shell's menu: ordinary words that missing pages are named after.
const MENU: &str = "Installation Deployment Templating Configuration Reference Blog About";

/// A running corpus: its servers stop when it is dropped.
pub struct RealCorpus {
    /// Every URL listed, with its label and its configuration's name.
    pub urls: Vec<(String, Label, &'static str)>,
    /// The configurations, each with its address.
    pub hosts: Vec<(Config, String)>,
    children: Vec<Child>,
    /// WordPress's database server, started with the first blog.
    mariadb: Option<MariaDb>,
    dir: tempfile::TempDir,
}

/// Requests one configuration's server logged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Requests {
    pub all: u64,
    /// Requests for a crawler's probe (a last segment of 20 lower-case letters and digits).
    pub probes: u64,
    /// Bytes of response bodies the server sent (none for a HEAD): what a GET in place of a
    /// HEAD costs. A checker reads a body up to a limit and drops the connection past it, so
    /// a server may send more than was read ([`Requests::read`]).
    pub bytes: u64,
    /// [`Requests::bytes`] with each response counted up to [`READ_LIMIT`] at most: what the
    /// checker read, at most, with `--soft-404`.
    pub read: u64,
}

/// The most of one body the checker reads with `--soft-404` (the worker's `BODY_KEPT`).
pub const READ_LIMIT: u64 = 64 * 1024;

/// The servers of `configs` whose binary is missing here (the suite's, nginx and Caddy, are
/// installed by `scripts/test`; the benchmark's others by `apt-get install apache2 lighttpd
/// mediawiki wordpress wordpress-theme-twentytwentythree php-fpm php-sqlite3`).
pub fn missing_servers(configs: &[Config]) -> Vec<Server> {
    let mut missing: Vec<Server> = configs
        .iter()
        .map(|c| c.server)
        .filter(|s| !Path::new(s.binary()).exists())
        .collect();
    missing.dedup();
    missing
}

impl RealCorpus {
    /// Writes the site and every server's configuration, starts the servers and waits until
    /// each answers.
    pub fn spawn(configs: &[Config]) -> RealCorpus {
        if let Some(server) = missing_servers(configs).first() {
            panic!(
                "{}",
                crate::installed::not_installed(server.binary(), server.package())
            );
        }
        let dir = tempfile::Builder::new()
            .prefix("soft404-real")
            .tempdir()
            .unwrap();
        write_site(&dir.path().join("site"));
        let logs = dir.path().join("logs");
        fs::create_dir_all(&logs).unwrap();
        // The servers drop to `nobody` when run as root: they must read the site and write
        // their logs.
        for path in [dir.path(), &logs] {
            chmod(path, 0o777);
        }
        let port = free_port();
        let hosts: Vec<(Config, String)> = configs
            .iter()
            .enumerate()
            .map(|(i, c)| (*c, format!("127.0.3.{}:{port}", i + 1)))
            .collect();
        let mut corpus = RealCorpus {
            urls: Vec::new(),
            hosts,
            children: Vec::new(),
            mariadb: None,
            dir,
        };
        for server in [
            Server::Nginx,
            Server::Apache,
            Server::Lighttpd,
            Server::Caddy,
            Server::MediaWiki,
            Server::WordPress,
        ] {
            corpus.start(server);
        }
        for (config, addr) in &corpus.hosts {
            wait_until_listening(addr);
            match config.server {
                Server::MediaWiki => wait_until_answering(addr, "/wiki/Main_Page"),
                Server::WordPress => wait_until_answering(addr, wordpress::READY_PATH),
                _ => {}
            }
            for (path, label) in listed(config) {
                corpus
                    .urls
                    .push((format!("http://{addr}{path}"), label, config.name));
            }
        }
        corpus
    }

    /// Writes the list of URLs to `path`.
    pub fn write_list(&self, path: &Path) {
        let list: String = self.urls.iter().map(|(u, _, _)| format!("{u}\n")).collect();
        fs::write(path, list).unwrap();
    }

    /// What each configuration's server has logged so far, by name.
    pub fn requests(&self) -> HashMap<&'static str, Requests> {
        // lighttpd flushes its log within a few seconds.
        std::thread::sleep(Duration::from_secs(5));
        self.hosts
            .iter()
            .map(|(config, _)| {
                let text = fs::read_to_string(self.log(config.name)).unwrap_or_default();
                let mut requests = Requests::default();
                for line in text.lines() {
                    let Some(path) = logged_path(line) else {
                        continue;
                    };
                    let bytes = logged_bytes(line);
                    requests.all += 1;
                    requests.probes += u64::from(is_probe(&path));
                    requests.bytes += bytes;
                    requests.read += bytes.min(READ_LIMIT);
                }
                (config.name, requests)
            })
            .collect()
    }

    /// The probes each configuration's server has logged so far (their paths, in order), by
    /// name: which patterns a host got probed in.
    pub fn probes(&self) -> HashMap<&'static str, Vec<String>> {
        std::thread::sleep(Duration::from_secs(5));
        self.hosts
            .iter()
            .map(|(config, _)| {
                let text = fs::read_to_string(self.log(config.name)).unwrap_or_default();
                let probes = text
                    .lines()
                    .filter_map(logged_path)
                    .filter(|path| is_probe(path))
                    .collect();
                (config.name, probes)
            })
            .collect()
    }

    fn log(&self, name: &str) -> PathBuf {
        self.dir.path().join("logs").join(format!("{name}.log"))
    }

    fn start(&mut self, server: Server) {
        let hosts: Vec<(Config, String)> = self
            .hosts
            .iter()
            .filter(|(c, _)| c.server == server)
            .cloned()
            .collect();
        if hosts.is_empty() {
            return;
        }
        let root = self.dir.path().to_owned();
        let site = root.join("site");
        let logs = root.join("logs");
        match server {
            Server::Nginx => {
                let conf = root.join("nginx.conf");
                fs::write(&conf, nginx_conf(&root, &site, &logs, &hosts)).unwrap();
                let mut cmd = Command::new(server.binary());
                cmd.arg("-c")
                    .arg(&conf)
                    .arg("-e")
                    .arg(logs.join("nginx-error.log"));
                self.spawn_child(cmd);
            }
            Server::Apache => {
                let conf = root.join("apache.conf");
                fs::write(&conf, apache_conf(&root, &site, &logs, &hosts)).unwrap();
                let mut cmd = Command::new(server.binary());
                cmd.arg("-f").arg(&conf).arg("-DFOREGROUND");
                self.spawn_child(cmd);
            }
            Server::Lighttpd => {
                for (config, addr) in &hosts {
                    let conf = root.join(format!("{}.conf", config.name));
                    fs::write(&conf, lighttpd_conf(&root, &site, &logs, config, addr)).unwrap();
                    let mut cmd = Command::new(server.binary());
                    cmd.arg("-D").arg("-f").arg(&conf);
                    self.spawn_child(cmd);
                }
            }
            Server::Caddy => {
                let conf = root.join("Caddyfile");
                fs::write(&conf, caddyfile(&root, &site, &logs, &hosts)).unwrap();
                let mut cmd = Command::new(server.binary());
                cmd.args(["run", "--adapter", "caddyfile", "--config"])
                    .arg(&conf)
                    .env("HOME", &root)
                    .env("XDG_DATA_HOME", root.join("caddy-data"))
                    .env("XDG_CONFIG_HOME", root.join("caddy-config"));
                self.spawn_child(cmd);
            }
            Server::MediaWiki => {
                for (config, addr) in &hosts {
                    self.start_wiki(config, addr);
                }
            }
            Server::WordPress => {
                for (config, addr) in &hosts {
                    let commands =
                        wordpress::start(config, addr, self.dir.path(), &mut self.mariadb);
                    for cmd in commands {
                        self.spawn_child(cmd);
                    }
                }
            }
        }
    }

    /// Installs a wiki on SQLite with a few articles, and serves it with php-fpm and nginx.
    fn start_wiki(&mut self, config: &Config, addr: &str) {
        let dir = self.dir.path().join(config.name);
        let data = dir.join("data");
        fs::create_dir_all(&data).unwrap();
        let settings = dir.join("LocalSettings.php");
        let php = |args: &[&str]| {
            let out = Command::new("php")
                .current_dir("/usr/share/mediawiki")
                .env("MW_CONFIG_FILE", &settings)
                .args(args)
                .output()
                .expect("php");
            assert!(
                out.status.success(),
                "php {args:?}: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        };
        let server = format!("http://{addr}");
        php(&[
            "maintenance/install.php",
            "--dbtype=sqlite",
            &format!("--dbpath={}", data.display()),
            "--dbname=wiki",
            &format!("--server={server}"),
            "--scriptpath=",
            &format!("--confpath={}", dir.display()),
            "--pass=correct-horse-battery-9",
            "Acme Wiki",
            "Admin",
        ]);
        let send_404 = config.missing == Missing::Wiki404;
        let mut local = fs::read_to_string(&settings).unwrap();
        local.push_str(&format!(
            "\n$wgArticlePath = \"/wiki/$1\";\n$wgUsePathInfo = true;\n\
             $wgSend404Code = {send_404};\n$wgMainCacheType = CACHE_NONE;\n"
        ));
        fs::write(&settings, local).unwrap();
        let conf = settings.display().to_string();
        for article in ARTICLES {
            let text = format!(
                "The article {article} covers {}. See [[Widgets]] and [[Main Page]].",
                words(article, 80)
            );
            let file = dir.join("article.txt");
            fs::write(&file, text).unwrap();
            let out = Command::new("php")
                .current_dir("/usr/share/mediawiki")
                .args(["maintenance/edit.php", "--conf", &conf, article])
                .stdin(fs::File::open(&file).unwrap())
                .output()
                .expect("php");
            assert!(out.status.success(), "edit {article}");
        }
        chmod_tree_writable(&dir);
        let socket = dir.join("fpm.sock");
        let user = if is_root() {
            "user = nobody\ngroup = nogroup\n"
        } else {
            ""
        };
        let fpm = dir.join("fpm.conf");
        fs::write(
            &fpm,
            format!(
                "[global]\npid = {dir}/fpm.pid\nerror_log = {dir}/fpm.log\ndaemonize = no\n\
                 [wiki]\nlisten = {socket}\nlisten.mode = 0666\n{user}pm = static\n\
                 pm.max_children = 4\nclear_env = no\nenv[MW_CONFIG_FILE] = {conf}\n",
                dir = dir.display(),
                socket = socket.display()
            ),
        )
        .unwrap();
        let mut cmd = Command::new(php_fpm());
        cmd.arg("-y").arg(&fpm);
        if is_root() {
            cmd.arg("-R");
        }
        self.spawn_child(cmd);
        let logs = self.dir.path().join("logs");
        let nginx = dir.join("nginx.conf");
        fs::write(
            &nginx,
            wiki_nginx_conf(&dir, &logs, config.name, addr, &socket),
        )
        .unwrap();
        let mut cmd = Command::new(Server::Nginx.binary());
        cmd.arg("-c")
            .arg(&nginx)
            .arg("-e")
            .arg(logs.join("nginx-error.log"));
        self.spawn_child(cmd);
    }

    fn spawn_child(&mut self, mut cmd: Command) {
        let out = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("servers.out"))
            .unwrap();
        // Its own process group: a server's workers (dropped to `nobody`) go with it.
        let child = cmd
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        self.children.push(child);
    }
}

impl Drop for RealCorpus {
    /// Asks every server to stop (a master stops its workers), then kills what is left of
    /// each one's process group.
    fn drop(&mut self) {
        for child in &self.children {
            // SAFETY: plain libc calls on the ids of processes this corpus started.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        for child in &mut self.children {
            while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            // SAFETY: as above; the group is the one `spawn_child` made for this child.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
        }
    }
}

/// A configuration's URLs, each with its label.
fn listed(config: &Config) -> Vec<(&'static str, Label)> {
    let (real, missing) = match config.server {
        Server::WordPress => return wordpress::listed(config.missing),
        Server::MediaWiki => (WIKI_REAL, WIKI_MISSING),
        _ => (REAL_LISTED, MISSING_LISTED),
    };
    let label = match config.missing {
        Missing::Honest | Missing::Wiki404 => Label::Hard404,
        _ => Label::Soft404,
    };
    let real = real.iter().map(|p| (*p, Label::Real));
    real.chain(missing.iter().map(|p| (*p, label))).collect()
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.3.1:0").expect("bind 127.0.3.1");
    listener.local_addr().unwrap().port()
}

fn wait_until_listening(addr: &str) {
    let started = Instant::now();
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no server on {addr}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until `addr` answers `path` with a 200 (php-fpm starts after nginx listens).
fn wait_until_answering(addr: &str, path: &str) {
    use std::io::{Read, Write};
    let started = Instant::now();
    loop {
        let status = std::net::TcpStream::connect(addr).ok().and_then(|mut s| {
            write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
            let mut head = [0u8; 12];
            s.read_exact(&mut head).ok()?;
            Some(String::from_utf8_lossy(&head[9..12]).into_owned())
        });
        if status.as_deref() == Some("200") {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{addr}{path}: {status:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The path a log line's request asked: the second word of a request line (`GET /a HTTP/1.1`),
/// or the `uri` of a Caddy JSON line.
fn logged_path(line: &str) -> Option<String> {
    if let Some(at) = line.find("\"uri\":\"") {
        let rest = &line[at + 7..];
        return Some(rest[..rest.find('"')?].to_owned());
    }
    line.split_whitespace().nth(1).map(str::to_owned)
}

/// The body bytes a log line says were sent: the `size` of a Caddy JSON line, else the last
/// word (nginx's `$body_bytes_sent`, Apache's `%B`, lighttpd's `%b`, which may be `-`).
fn logged_bytes(line: &str) -> u64 {
    if let Some(at) = line.find("\"size\":") {
        let rest = &line[at + 7..];
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        return rest[..end].parse().unwrap_or(0);
    }
    let last = line.split_whitespace().last().unwrap_or_default();
    last.parse().unwrap_or(0)
}

fn is_probe(path: &str) -> bool {
    let path = path.split('?').next().unwrap_or_default();
    let last = path.rsplit('/').next().unwrap_or_default();
    let stem = last.split('.').next().unwrap_or_default();
    stem.len() == 20
        && stem
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// The site: a documentation app whose `/index.html` is the shell, its pages in one heavy
/// layout, a "not found" page and a login page.
fn write_site(site: &Path) {
    let nav = format!("<nav>{MENU}</nav>");
    let footer = format!("<footer>{}</footer>", words("footer", 40));
    let layout = |title: &str, main: &str| {
        format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title} - Acme Docs</title>\
             <link rel=\"stylesheet\" href=\"/assets/style.css\"></head><body>{nav}\
             <aside>{}</aside><main>{main}</main>{footer}</body></html>",
            words("sidebar", 50)
        )
    };
    let shell = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Acme Docs</title>\
         <script defer src=\"/assets/app.js\"></script></head><body>{nav}<div id=\"app\">\
         <p>Loading the Acme documentation: installation, deployment, templating and \
         configuration, with a reference for every option.</p></div>\
         <noscript>You need to enable JavaScript to read the documentation.</noscript>\
         {footer}</body></html>"
    );
    let mut files: Vec<(String, String)> = vec![
        ("/index.html".into(), shell),
        (
            "/notfound.html".into(),
            layout(
                "Page not found",
                "<h1>Page not found</h1><p>Sorry, we could not find that page. \
                 Try the search or go back to the home page.</p>",
            ),
        ),
        (
            "/assets/app.js".into(),
            format!("// {}\nconsole.log('acme');\n", words("script", 30)),
        ),
        ("/assets/style.css".into(), "body { margin: 0 }\n".into()),
    ];
    for page in PAGES {
        let main = if page.contains("contact") {
            "<h1>Contact</h1><p>Call us at 555 0100</p>".to_owned()
        } else if page.starts_with("/login") {
            "<h1>Sign in</h1><form>user name password sign in</form>".to_owned()
        } else {
            format!("<h1>{}</h1><p>{}</p>", words(page, 3), words(page, 90))
        };
        files.push((page.to_string(), layout(&words(page, 2), &main)));
    }
    for (path, body) in files {
        let file = site.join(path.trim_start_matches('/'));
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(&file, body).unwrap();
    }
    chmod_tree(site);
}

fn chmod_tree_writable(path: &Path) {
    chmod(path, if path.is_dir() { 0o777 } else { 0o666 });
    if path.is_dir() {
        for entry in fs::read_dir(path).unwrap() {
            chmod_tree_writable(&entry.unwrap().path());
        }
    }
}

/// nginx in front of a wiki: short URLs `/wiki/Title`, anything else to `index.php` as well
/// (as MediaWiki's manual configures it).
fn wiki_nginx_conf(dir: &Path, logs: &Path, name: &str, addr: &str, socket: &Path) -> String {
    let (logs_shown, socket) = (logs.display(), socket.display());
    let server = format!(
        "server {{ listen {addr}; root /usr/share/mediawiki; access_log {logs_shown}/{name}.log plain;\n\
           location / {{ try_files $uri $uri/ @rewrite; }}\n\
           location /wiki/ {{ rewrite ^/wiki/(.*)$ /index.php?title=$1&$args last; }}\n\
           location @rewrite {{ rewrite ^/(.*)$ /index.php?title=$1&$args last; }}\n\
           location ~ \\.php$ {{ include /etc/nginx/fastcgi_params;\n\
             fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n\
             fastcgi_pass unix:{socket}; }}\n\
         }}\n"
    );
    nginx_main(dir, logs, &server)
}

fn chmod_tree(path: &Path) {
    chmod(path, if path.is_dir() { 0o755 } else { 0o644 });
    if path.is_dir() {
        for entry in fs::read_dir(path).unwrap() {
            chmod_tree(&entry.unwrap().path());
        }
    }
}

fn nginx_conf(root: &Path, site: &Path, logs: &Path, hosts: &[(Config, String)]) -> String {
    let (site, logs_shown) = (site.display(), logs.display());
    let servers: String = hosts
        .iter()
        .map(|(config, addr)| {
            let missing = match config.missing {
                Missing::Honest => "",
                Missing::Spa => "location / { try_files $uri $uri/ /index.html; }",
                Missing::NotFound200 => "error_page 404 =200 /notfound.html;",
                Missing::Home => "error_page 404 = @home; location @home { return 302 /; }",
                Missing::Login => {
                    "error_page 404 = @login; \
                     location @login { return 302 /login/?next=$request_uri; }"
                }
                Missing::Wiki200 | Missing::Wiki404 => panic!("a wiki is not static"),
            };
            format!(
                "server {{ listen {addr}; root {site}; \
                 access_log {logs_shown}/{}.log plain; {missing} }}\n",
                config.name
            )
        })
        .collect();
    nginx_main(root, logs, &servers)
}

fn apache_conf(root: &Path, site: &Path, logs: &Path, hosts: &[(Config, String)]) -> String {
    let (root, site, logs) = (root.display(), site.display(), logs.display());
    let modules: String = [
        ("mpm_event", "mod_mpm_event"),
        ("authz_core", "mod_authz_core"),
        ("dir", "mod_dir"),
        ("mime", "mod_mime"),
        ("rewrite", "mod_rewrite"),
        ("alias", "mod_alias"),
    ]
    .iter()
    .map(|(name, file)| format!("LoadModule {name}_module /usr/lib/apache2/modules/{file}.so\n"))
    .collect();
    let user = if is_root() {
        "User nobody\nGroup nogroup\n"
    } else {
        ""
    };
    let mut conf = format!(
        "ServerRoot /etc/apache2\nPidFile {root}/apache.pid\nErrorLog {logs}/apache-error.log\n\
         Mutex file:{root} default\n{modules}TypesConfig /etc/mime.types\n{user}\
         ServerName localhost\nLogFormat \"%r %>s %B\" plain\nDirectoryIndex index.html\n\
         <Directory {site}>\n  Require all granted\n  AllowOverride None\n</Directory>\n"
    );
    for (config, addr) in hosts {
        let missing = match config.missing {
            Missing::Honest => "ErrorDocument 404 /notfound.html".to_owned(),
            Missing::Spa => "FallbackResource /index.html".to_owned(),
            Missing::NotFound200 => "RewriteEngine On\n\
                 RewriteCond %{DOCUMENT_ROOT}%{REQUEST_URI} !-f\n\
                 RewriteCond %{DOCUMENT_ROOT}%{REQUEST_URI} !-d\n\
                 RewriteRule ^ /notfound.html [L]"
                .to_owned(),
            Missing::Home => format!("ErrorDocument 404 http://{addr}/"),
            Missing::Login => format!("ErrorDocument 404 http://{addr}/login/"),
            Missing::Wiki200 | Missing::Wiki404 => panic!("no apache configuration {config:?}"),
        };
        conf.push_str(&format!(
            "Listen {addr}\n<VirtualHost {addr}>\n  ServerName {addr}\n  DocumentRoot {site}\n  \
             CustomLog {logs}/{}.log plain\n  {missing}\n</VirtualHost>\n",
            config.name
        ));
    }
    conf
}

fn lighttpd_conf(root: &Path, site: &Path, logs: &Path, config: &Config, addr: &str) -> String {
    let (root, site, logs) = (root.display(), site.display(), logs.display());
    let (ip, port) = addr.rsplit_once(':').unwrap();
    let user = if is_root() {
        "server.username = \"nobody\"\nserver.groupname = \"nogroup\"\n"
    } else {
        ""
    };
    let missing = match config.missing {
        Missing::Honest => "",
        Missing::Spa => "server.error-handler-404 = \"/index.html\"",
        Missing::NotFound200 => "server.error-handler-404 = \"/notfound.html\"",
        _ => panic!("no lighttpd configuration {config:?}"),
    };
    let name = config.name;
    format!(
        "server.modules = (\"mod_accesslog\")\nserver.bind = \"{ip}\"\nserver.port = {port}\n\
         server.document-root = \"{site}\"\n{user}server.pid-file = \"{root}/{name}.pid\"\n\
         server.errorlog = \"{logs}/{name}-error.log\"\nindex-file.names = (\"index.html\")\n\
         mimetype.assign = (\".html\" => \"text/html\", \".js\" => \"text/javascript\", \
         \".css\" => \"text/css\")\n\
         accesslog.filename = \"{logs}/{name}.log\"\naccesslog.format = \"%r %s %b\"\n{missing}\n"
    )
}

fn caddyfile(root: &Path, site: &Path, logs: &Path, hosts: &[(Config, String)]) -> String {
    let (root, site, logs) = (root.display(), site.display(), logs.display());
    let mut conf = format!(
        "{{\n\tadmin off\n\tauto_https off\n\tstorage file_system {root}/caddy-storage\n}}\n"
    );
    for (config, addr) in hosts {
        let ip = addr.rsplit_once(':').unwrap().0;
        let missing = match config.missing {
            Missing::Honest => "",
            // With `{path}/`, a directory's index is served, not the shell.
            Missing::Spa => "try_files {path} {path}/ /index.html",
            Missing::NotFound200 | Missing::Wiki200 | Missing::Wiki404 => {
                panic!("no caddy configuration {config:?}")
            }
            Missing::Home => "handle_errors {\n\t\tredir * / 302\n\t}",
            Missing::Login => "handle_errors {\n\t\tredir * /login/?next={uri} 302\n\t}",
        };
        conf.push_str(&format!(
            "http://{addr} {{\n\tbind {ip}\n\troot * {site}\n\t{missing}\n\tfile_server\n\
             \tlog {{\n\t\toutput file {logs}/{}.log\n\t}}\n}}\n",
            config.name
        ));
    }
    conf
}

/// Flags of a corpus crawl: politeness limits raised (as the end-to-end tests), one attempt.
const FLAGS: &[&str] = &[
    "--drain",
    "--host-rate",
    "100000",
    "--host-concurrency",
    "16",
    "--concurrency",
    "64",
    "--timeout",
    // WordPress renders a page in 0.1-0.3 s on an idle core, with two php-fpm workers a blog.
    "30s",
    "--attempts",
    "1",
];

/// Seeds `list` into a fresh SQLite queue and drains it with one worker (with `--soft-404`
/// when `soft`): every site as checked.
pub async fn crawl(list: &Path, soft: bool) -> Vec<crawler_queue::Checked> {
    use crate::bins::{command, run, stderr};
    let db = crate::backend::Backend::Sqlite.fresh().await;
    let url = db.url.expose();
    let seeded = run(command("crawler-seed", url).arg(list));
    assert!(seeded.status.success(), "crawler-seed: {}", stderr(&seeded));
    let mut worker = command("crawler-worker", url);
    worker.args(FLAGS);
    if soft {
        worker.arg("--soft-404");
    }
    let out = tokio::task::spawn_blocking(move || run(&mut worker))
        .await
        .unwrap();
    assert!(out.status.success(), "crawler-worker: {}", stderr(&out));
    let queue = db.queue().await;
    let mut sites = Vec::new();
    for verdict in crawler_queue::Verdict::ALL {
        let mut after = crawler_queue::After::START;
        loop {
            let page = queue
                .reports()
                .checked_page(verdict, Default::default(), after, 10_000)
                .await
                .unwrap();
            let Some(last) = page.last() else { break };
            after = crawler_queue::After::site(last, crawler_queue::Only::All);
            sites.extend(page);
        }
    }
    sites
}
