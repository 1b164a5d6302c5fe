//! What the servers of the corpus share: running as root or not, file modes, php-fpm, nginx's
//! main configuration.

use std::fs;
use std::path::{Path, PathBuf};

pub(super) fn is_root() -> bool {
    // SAFETY: a plain libc call.
    unsafe { libc::geteuid() == 0 }
}

pub(super) fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Debian's php-fpm binary (`php-fpm8.2` on bookworm).
pub(super) fn php_fpm() -> PathBuf {
    fs::read_dir("/usr/sbin")
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("php-fpm"))
        })
        .expect("php-fpm installed")
}

/// nginx's main configuration around `servers`: in the foreground, its pid, temporary files
/// and error log under `dir` and `logs`, an access log format of request, status and body
/// bytes sent; as `nobody` when run as root.
pub(super) fn nginx_main(dir: &Path, logs: &Path, servers: &str) -> String {
    let (dir, logs) = (dir.display(), logs.display());
    let user = if is_root() {
        "user nobody nogroup;"
    } else {
        ""
    };
    format!(
        "daemon off; worker_processes 1; pid {dir}/nginx.pid; {user}\n\
         error_log {logs}/nginx-error.log;\n\
         events {{ worker_connections 512; }}\n\
         http {{\n\
         include /etc/nginx/mime.types;\n\
         log_format plain '$request $status $body_bytes_sent';\n\
         client_body_temp_path {dir}/nginx-body; proxy_temp_path {dir}/nginx-proxy;\n\
         fastcgi_temp_path {dir}/nginx-fastcgi; uwsgi_temp_path {dir}/nginx-uwsgi;\n\
         scgi_temp_path {dir}/nginx-scgi;\n\
         {servers}}}\n"
    )
}
