//! A private nginx (Debian's `nginx-light`) serving one directory on a free port of 127.0.0.1,
//! logging every request, which is how a test counts what the crawler asked. One process
//! (`master_process off`), killed when dropped; its files live in a temporary directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binary the package installs.
pub const NGINX: &str = "/usr/sbin/nginx";

pub struct Nginx {
    child: Child,
    /// `http://127.0.0.1:PORT`, no trailing slash.
    origin: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Nginx {
    /// Serves `root`; panics (naming the package) when nginx is not installed.
    pub fn serve(root: &Path) -> Nginx {
        assert!(
            Path::new(NGINX).exists(),
            "{}",
            crate::installed::not_installed(NGINX, "nginx-light")
        );
        let dir = tempfile::Builder::new().prefix("nginx").tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let tmp = dir.path().display();
        let log = dir.path().join("access.log");
        let conf = dir.path().join("nginx.conf");
        // As root, nginx's workers would drop to `nobody`, who may not read the test's files.
        std::fs::write(
            &conf,
            format!(
                "daemon off; master_process off; worker_processes 1; user root;\n\
                 error_log {tmp}/error.log; pid {tmp}/nginx.pid;\n\
                 events {{ worker_connections 1024; }}\n\
                 http {{ include /etc/nginx/mime.types; log_format plain '$request $status';\n\
                   access_log {} plain;\n\
                   client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy;\n\
                   fastcgi_temp_path {tmp}/fastcgi; uwsgi_temp_path {tmp}/uwsgi;\n\
                   scgi_temp_path {tmp}/scgi;\n\
                   server {{ listen 127.0.0.1:{port}; root {}; }} }}\n",
                log.display(),
                root.display()
            ),
        )
        .unwrap();
        let child = Command::new(NGINX)
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(dir.path())
            .stderr(Stdio::null())
            .spawn()
            .expect("run nginx");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "nginx did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Nginx {
            child,
            origin: format!("http://127.0.0.1:{port}"),
            log,
            _dir: dir,
        }
    }

    /// The URL of `path` (starting with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Requests so far, `METHOD /path` → how many times.
    pub fn requests(&self) -> HashMap<String, usize> {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let mut counts = HashMap::new();
        for line in log.lines() {
            let mut words = line.split(' ');
            if let (Some(method), Some(path)) = (words.next(), words.next()) {
                *counts.entry(format!("{method} {path}")).or_default() += 1;
            }
        }
        counts
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
