//! Debian's WordPress (6.1, theme Twenty Twenty-Three) in the real-server corpus: a blog with
//! "Post name" permalinks on nginx and php-fpm, its database on a private `mariadbd`
//! (`crate::mariadb`), installed with WordPress's own installer (`wp_install`, through PHP's
//! CLI) and filled with posts, pages and categories (`wordpress/install.php`).
//!
//! Debian's `/usr/share/wordpress/wp-config.php` reads `/etc/wordpress/config-HOST.php`; a
//! test must not write `/etc`, so each blog gets a document root of its own: WordPress's
//! top-level scripts copied (PHP resolves symlinks, so `wp-load.php` must live there to find
//! this `wp-config.php`), `wp-admin` and `wp-includes` linked, and a `wp-content` with
//! Debian's themes linked and the configuration's must-use plugin. What the admin would put in
//! `config-HOST.php` is that `wp-config.php`.
//!
//! A missing post answers 404 (`wordpress-404`), 200 with the theme's "page not found"
//! (`wordpress-200`, a mu-plugin calling `status_header(200)`: the "custom 404 page"
//! misconfiguration), or 301 to the home page (`wordpress-home`, as the "redirect 404s to the
//! homepage" plugins do).

use std::fs;
use std::path::Path;
use std::process::Command;

use super::config::{Config, Missing, Server};
use super::system::{chmod, is_root, nginx_main, php_fpm};
use crate::mariadb::MariaDb;
use crate::soft404_pages::{words, Label};

/// Real pages, as a user links them: posts, pages, archives, a feed, the login page, an
/// upload, a search, and links WordPress itself redirects to a post (`/?p=1`, and a slug
/// changed after publishing, which WordPress keeps as `_wp_old_slug`).
const REAL: &[&str] = &[
    "/",
    "/hello-world/",
    "/copper-river-report/",
    "/lantern-harbor-opening/",
    "/installation-guide/",
    "/deployment-notes/",
    "/sample-page/",
    "/about/",
    "/about/team/",
    "/contact/",
    "/category/news/",
    "/category/empty-category/",
    "/tag/acme/",
    "/2024/03/",
    "/author/admin/",
    "/feed/",
    "/?p=1",
    "/?s=copper",
    "/spring-sale-2024/",
    "/wp-login.php",
    "/wp-content/uploads/2024/03/notes.txt",
];

/// Mistyped or truncated slugs that WordPress's `redirect_guess_404_permalink()` answers with a
/// 301 to the post whose slug starts with them (before any 404 handling, in every
/// configuration). Labelled real: the server chose one page for this URL, the link leads a
/// reader to a real post, and missing paths at large (the probe) still answer "not found";
/// whether it is the post the link meant (`/deploy/` → `/deployment-notes/`) no HTTP check
/// can tell.
const GUESSED: &[&str] = &["/hello/", "/installation/", "/copper-river/", "/deploy/"];

/// Missing: 404 from WordPress, unless the configuration answers otherwise.
const MISSING: &[&str] = &[
    "/missing-post/",
    "/old-news/",
    "/copper-rivers/",
    "/2024/03/copper-river-report/",
    "/about/history/",
    "/?p=999999",
    "/?page_id=999999",
    "/2019/01/",
    "/page/99/",
    "/category/events/",
    "/tag/nothing/",
    "/wp-content/uploads/2024/03/missing.pdf",
];

/// Missing, and 200 in every configuration, WordPress's own doing: an author who does not
/// exist gets the archive of every post (the unknown `author_name` is dropped from the
/// query), and the comment feed of a missing post is an empty feed (`handle_404()` never
/// 404s a feed).
const OWN_SOFT: &[&str] = &["/author/nobody/", "/missing-post/feed/"];

/// Soft 404s of the blog that `--soft-404` does not find, by configuration (`*`: all) and
/// path, and why: [`OWN_SOFT`] (a probe at the root answers as the configuration says, not
/// as these do, and neither looks missing), and on `wordpress-home` a missing `?p=` or
/// `?page_id=` at the root, redirected home as a canonicalising redirect that drops a query
/// would be (`docs/soft404.md`). On `wordpress-200` the theme's "page not found" says it is
/// missing, and the root's probe finds them.
pub const KNOWN_MISSES: &[(&str, &str)] = &[
    ("*", "/author/nobody/"),
    ("*", "/missing-post/feed/"),
    ("wordpress-home", "/?p=999999"),
    ("wordpress-home", "/?page_id=999999"),
];

/// The blog's URLs, each with its label under the configuration's "not found".
pub(super) fn listed(missing: Missing) -> Vec<(&'static str, Label)> {
    let missing_label = match missing {
        Missing::Honest => Label::Hard404,
        _ => Label::Soft404,
    };
    let real = REAL.iter().chain(GUESSED).map(|p| (*p, Label::Real));
    let missing = MISSING.iter().map(|p| (*p, missing_label));
    let own = OWN_SOFT.iter().map(|p| (*p, Label::Soft404));
    real.chain(missing).chain(own).collect()
}

/// The path that answers once the blog is installed and served.
pub(super) const READY_PATH: &str = "/hello-world/";

const INSTALL_PHP: &str = include_str!("wordpress/install.php");
const NOT_FOUND_200_PHP: &str = include_str!("wordpress/not-found-200.php");
const REDIRECT_HOME_PHP: &str = include_str!("wordpress/redirect-home.php");

const WORDPRESS: &str = "/usr/share/wordpress";

/// Installs a blog on its own database of the corpus's private MariaDB server (started with
/// the first blog), under the corpus's directory `corpus`: the commands that serve it with
/// php-fpm and nginx on `addr`, for the corpus to start.
pub(super) fn start(
    config: &Config,
    addr: &str,
    corpus: &Path,
    mariadb: &mut Option<MariaDb>,
) -> [Command; 2] {
    let dir = corpus.join(config.name);
    let root = dir.join("root");
    write_root(&root, config);
    let database = create_database(mariadb.get_or_insert_with(MariaDb::start));
    fs::write(root.join("wp-config.php"), wp_config(&database, addr)).unwrap();
    let site = dir.join("site.json");
    fs::write(&site, site_json().to_string()).unwrap();
    let install = dir.join("install.php");
    fs::write(&install, INSTALL_PHP).unwrap();
    let out = Command::new("php")
        .arg(&install)
        .arg(&root)
        .arg(&site)
        .output()
        .expect("php");
    assert!(
        out.status.success(),
        "installing WordPress for {}: {}{}",
        config.name,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let socket = dir.join("fpm.sock");
    let fpm = dir.join("fpm.conf");
    fs::write(&fpm, fpm_conf(&dir, &socket)).unwrap();
    let mut php = Command::new(php_fpm());
    php.arg("-y").arg(&fpm);
    if is_root() {
        php.arg("-R");
    }
    let logs = corpus.join("logs");
    let nginx = dir.join("nginx.conf");
    fs::write(
        &nginx,
        nginx_conf(&dir, &root, &logs, config.name, addr, &socket),
    )
    .unwrap();
    let mut server = Command::new(Server::Nginx.binary());
    server
        .arg("-c")
        .arg(&nginx)
        .arg("-e")
        .arg(logs.join("nginx-error.log"));
    [php, server]
}

/// The blog's document root: Debian's WordPress, the top-level scripts copied and the rest
/// linked, and a `wp-content` of its own (themes linked, the mu-plugin, one upload).
fn write_root(root: &Path, config: &Config) {
    let content = root.join("wp-content");
    let uploads = content.join("uploads/2024/03");
    let mu_plugins = content.join("mu-plugins");
    for dir in [&uploads, &mu_plugins, &content.join("plugins")] {
        fs::create_dir_all(dir).unwrap();
    }
    for entry in fs::read_dir(WORDPRESS).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap();
        if path.extension().is_some_and(|e| e == "php") && name != "wp-config.php" {
            fs::copy(&path, root.join(name)).unwrap();
        }
    }
    for linked in ["wp-admin", "wp-includes", "wp-content/themes"] {
        std::os::unix::fs::symlink(Path::new(WORDPRESS).join(linked), root.join(linked)).unwrap();
    }
    fs::write(
        uploads.join("notes.txt"),
        format!("{}\n", words("notes", 60)),
    )
    .unwrap();
    let plugin = match config.missing {
        Missing::Honest => None,
        Missing::NotFound200 => Some(NOT_FOUND_200_PHP),
        Missing::Home => Some(REDIRECT_HOME_PHP),
        _ => panic!("no WordPress configuration {config:?}"),
    };
    if let Some(plugin) = plugin {
        fs::write(mu_plugins.join(format!("{}.php", config.name)), plugin).unwrap();
    }
    // php-fpm's workers run as `nobody` when the corpus runs as root (the links are Debian's
    // own files, left as they are).
    for dir in [root, &content, &mu_plugins, &content.join("plugins")]
        .into_iter()
        .chain(uploads.ancestors().take(3))
    {
        chmod(dir, 0o755);
    }
}

/// What an admin writes in `/etc/wordpress/config-HOST.php`: the database (a private
/// server's, reached over TCP on 127.0.0.1) and the site's address; no cron run on page views
/// and no request off the machine.
fn wp_config(database: &str, addr: &str) -> String {
    let url = url::Url::parse(database).unwrap();
    format!(
        "<?php\n\
         // Written by tests/support/soft404_real/wordpress.rs.\n\
         define('DB_NAME', '{name}');\n\
         define('DB_USER', '{user}');\n\
         define('DB_PASSWORD', '{password}');\n\
         define('DB_HOST', '{host}:{port}');\n\
         define('DB_CHARSET', 'utf8mb4');\n\
         define('WP_HOME', 'http://{addr}');\n\
         define('WP_SITEURL', 'http://{addr}');\n\
         define('DISABLE_WP_CRON', true);\n\
         define('AUTOMATIC_UPDATER_DISABLED', true);\n\
         define('WP_HTTP_BLOCK_EXTERNAL', true);\n\
         $table_prefix = 'wp_';\n\
         if (!defined('ABSPATH')) {{ define('ABSPATH', __DIR__ . '/'); }}\n\
         require_once ABSPATH . 'wp-settings.php';\n",
        name = url.path().trim_start_matches('/'),
        user = url.username(),
        password = url.password().unwrap_or_default(),
        host = url.host_str().unwrap(),
        port = url.port().unwrap(),
    )
}

/// A fresh database on `server`, from a thread of its own: the corpus starts from a test's
/// runtime, where blocking on another future would panic.
fn create_database(server: &MariaDb) -> String {
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(server.create_database())
        })
        .join()
        .unwrap()
    })
}

/// The blog's content: a category with five posts (one of them renamed after publishing), an
/// empty category, and pages with a child (WordPress adds "Hello world!" and "Sample Page").
fn site_json() -> serde_json::Value {
    let text = |title: &str| {
        format!(
            "<!-- wp:paragraph --><p>{title}: {}</p><!-- /wp:paragraph -->\
             <!-- wp:paragraph --><p>{}</p><!-- /wp:paragraph -->",
            words(title, 60),
            words(&format!("{title}2"), 40)
        )
    };
    let post = |title: &str, slug: &str, date: &str| {
        serde_json::json!({
            "title": title, "slug": slug, "date": date, "text": text(title),
            "category": "News", "tags": ["acme"],
        })
    };
    let mut sale = post("Spring sale", "spring-sale-2024", "2024-05-05 10:00:00");
    sale["renamed_to"] = "spring-sale".into();
    let page = |title: &str, parent: &str| serde_json::json!({"title": title, "parent": parent, "text": text(title)});
    serde_json::json!({
        "categories": ["News", "Empty category"],
        "posts": [
            post("Copper River report", "copper-river-report", "2024-03-15 10:00:00"),
            post("Lantern Harbor opening", "lantern-harbor-opening", "2024-03-20 10:00:00"),
            post("Installation guide", "installation-guide", "2024-04-02 10:00:00"),
            post("Deployment notes", "deployment-notes", "2024-04-10 10:00:00"),
            sale,
        ],
        "pages": [page("About", ""), page("Team", "About"), page("Contact", "")],
    })
}

fn fpm_conf(dir: &Path, socket: &Path) -> String {
    let user = if is_root() {
        "user = nobody\ngroup = nogroup\n"
    } else {
        ""
    };
    format!(
        "[global]\npid = {dir}/fpm.pid\nerror_log = {dir}/fpm.log\ndaemonize = no\n\
         [wordpress]\nlisten = {socket}\nlisten.mode = 0666\n{user}pm = static\n\
         pm.max_children = 2\n",
        dir = dir.display(),
        socket = socket.display()
    )
}

/// nginx in front of a blog, as WordPress's nginx guide has it: a file if there is one, else
/// `index.php`. `HTTP_HOST` gets the port back: Debian's `fastcgi_params` now pass `$host`,
/// without it, and WordPress on a port other than 80 then redirects every page to itself
/// (`redirect_canonical()` compares the address asked with the site's, port included).
fn nginx_conf(
    dir: &Path,
    root: &Path,
    logs: &Path,
    name: &str,
    addr: &str,
    socket: &Path,
) -> String {
    let (root, logs_shown, socket) = (root.display(), logs.display(), socket.display());
    let server = format!(
        "server {{ listen {addr}; root {root}; index index.php;\n\
           access_log {logs_shown}/{name}.log plain;\n\
           location / {{ try_files $uri $uri/ /index.php?$args; }}\n\
           location ~ \\.php$ {{ try_files $uri =404; include /etc/nginx/fastcgi_params;\n\
             fastcgi_param HTTP_HOST $host:$server_port;\n\
             fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n\
             fastcgi_pass unix:{socket}; }}\n\
         }}\n"
    );
    nginx_main(dir, logs, &server)
}
