//! The command line of a throwaway `mariadbd`, and where it keeps its files.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::binary;

/// Passed to both `mariadb-install-db` and `mariadbd`, so the server needs no redo log
/// resize; smaller than the 96 MiB default so copying the template stays cheap.
pub(super) const INNODB_LOG_FILE_SIZE: &str = "--innodb-log-file-size=16M";

/// A server directory's data directory, a copy of the template.
pub(super) const DATA: &str = "data";

/// A server directory's temp directory. Never the shared /tmp: a starting mariadbd deletes
/// every `#sql*` file in its tmpdir, the temporary tables of any other server included.
pub(super) const TMP: &str = "tmp";

/// Flags for a throwaway server: fast rather than durable, and the character set a
/// packaged server (Debian's `50-server.cnf`) uses rather than the compiled-in latin1.
const THROWAWAY_FLAGS: &[&str] = &[
    "--bind-address=127.0.0.1",
    "--skip-name-resolve",
    "--skip-log-bin",
    "--innodb-flush-log-at-trx-commit=2",
    "--innodb-buffer-pool-size=256M",
    // Native AIO needs io_setup slots, which a machine running many servers runs out of.
    "--innodb-use-native-aio=0",
    "--max-connections=500",
    "--character-set-server=utf8mb4",
    "--collation-server=utf8mb4_general_ci",
];

/// `mariadbd` on the server directory `dir` (see [`DATA`], [`TMP`]), listening on `port`
/// and on a socket in `dir`.
pub(super) fn mariadbd(dir: &Path, port: u16) -> Command {
    let socket = dir.join("mariadbd.sock");
    // sun_path holds 108 bytes including the terminating zero.
    assert!(
        socket.as_os_str().len() < 108,
        "socket path {} is too long for a unix socket: set TMPDIR to a shorter directory",
        socket.display()
    );
    let mut command = Command::new(binary::mariadbd());
    // --no-defaults must come first: no my.cnf of the machine applies.
    command
        .arg("--no-defaults")
        .arg(format!("--datadir={}", dir.join(DATA).display()))
        .arg(format!("--tmpdir={}", dir.join(TMP).display()))
        .arg(format!("--socket={}", socket.display()))
        .arg(format!("--port={port}"))
        .arg(format!("--pid-file={}", dir.join("mariadbd.pid").display()))
        .arg(format!("--log-error={}", error_log(dir).display()))
        .args(THROWAWAY_FLAGS)
        .arg(INNODB_LOG_FILE_SIZE)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // What it says before it opens --log-error (a bad flag, say) lands in the log too.
        .stderr(append_to(&error_log(dir)));
    if running_as_root() {
        // mariadbd refuses to run as root unless told to.
        command.arg("--user=root");
    }
    // Benchmarks size the server for heavy writes (a larger redo log and buffer pool): later
    // flags win. Tests keep the small, quick-to-copy defaults above.
    if let Ok(extra) = std::env::var(EXTRA_FLAGS_VAR) {
        command.args(extra.split_whitespace());
    }
    command
}

/// Extra `mariadbd` flags for private servers, whitespace-separated.
pub const EXTRA_FLAGS_VAR: &str = "CRAWLER_TEST_MARIADB_FLAGS";

/// The server's error log, kept across restarts.
pub(super) fn error_log(dir: &Path) -> PathBuf {
    dir.join("error.log")
}

pub(super) fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `path` opened for appending (a server's log), or nowhere if it cannot be.
pub(crate) fn append_to(path: &Path) -> Stdio {
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_or_else(|_| Stdio::null(), Stdio::from)
}
