//! Finding the MariaDB programs, also where `PATH` does not look.

use std::path::{Path, PathBuf};

/// Where Debian and source builds put the server, searched after `PATH`
/// because a non-root `PATH` often lacks the sbin directories.
const EXTRA_DIRS: &[&str] = &["/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin"];

/// The server binary; panics with the package to install when it is missing.
pub(super) fn mariadbd() -> PathBuf {
    find(&["mariadbd", "mysqld"]).unwrap_or_else(|| missing("mariadbd"))
}

/// The script that creates a data directory's system tables.
pub(super) fn install_db() -> PathBuf {
    find(&["mariadb-install-db", "mysql_install_db"])
        .unwrap_or_else(|| missing("mariadb-install-db"))
}

fn missing(program: &str) -> ! {
    panic!(
        "{} (looked in PATH, /usr/sbin, /usr/local/sbin); the tests start their own private \
         server with it",
        crate::installed::not_installed(program, "mariadb-server-core")
    )
}

/// The first of `names` that is an executable file in `PATH` or [`EXTRA_DIRS`].
fn find(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path)
        .chain(EXTRA_DIRS.iter().map(PathBuf::from))
        .collect();
    names
        .iter()
        .flat_map(|name| dirs.iter().map(move |dir| dir.join(name)))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
