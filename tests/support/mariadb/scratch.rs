//! The process's scratch directory, `$TMPDIR/crawler-mariadb-<uid>/run-<random>/`, holding
//! the template and the servers' data directories.
//!
//! An exit hook kills the servers still running and removes the directory. A process killed
//! before its hook leaves the directory behind, so each process first sweeps those of dead
//! processes: next to each directory is `run-<random>.lock`, `flock`ed by its owner for the
//! owner's whole life, so a lock that can be taken belongs to a dead process.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::spawner;

/// The process's directory and the lock that marks it as alive.
struct Scratch {
    dir: PathBuf,
    /// Held open, and so locked, until the process exits.
    _lock: File,
}

/// Set once, on first use; a static so the exit hook can find it.
static SCRATCH: OnceLock<Scratch> = OnceLock::new();

/// The process's scratch directory, created on first use.
pub(crate) fn dir() -> &'static Path {
    &scratch().dir
}

fn scratch() -> &'static Scratch {
    SCRATCH.get_or_init(|| {
        // SAFETY: getuid has no preconditions.
        let base =
            std::env::temp_dir().join(format!("crawler-mariadb-{}", unsafe { libc::getuid() }));
        let scratch = create(&base).unwrap_or_else(|e| {
            panic!(
                "cannot create a scratch directory in {}: {e}",
                base.display()
            )
        });
        // SAFETY: registers a plain function that takes no arguments.
        unsafe { libc::atexit(at_exit) };
        scratch
    })
}

fn create(base: &Path) -> std::io::Result<Scratch> {
    fs::create_dir_all(base)?;
    sweep(base);
    let (lock, lock_path) = tempfile::Builder::new()
        .prefix("run-")
        .suffix(".lock")
        .tempfile_in(base)?
        .keep()?;
    if !try_lock(&lock) {
        return Err(std::io::Error::other("a fresh lock file is already locked"));
    }
    let dir = lock_path.with_extension("");
    fs::create_dir(&dir)?;
    Ok(Scratch { dir, _lock: lock })
}

/// Removes the directories whose owner died without its exit hook.
fn sweep(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for lock_path in entries.flatten().map(|entry| entry.path()) {
        if lock_path.extension() != Some(OsStr::new("lock")) {
            continue;
        }
        if File::open(&lock_path).is_ok_and(|lock| try_lock(&lock)) {
            let _ = fs::remove_dir_all(lock_path.with_extension(""));
            let _ = fs::remove_file(&lock_path);
        }
    }
}

fn try_lock(file: &File) -> bool {
    // SAFETY: flock on a descriptor that `file` keeps open.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Kills the servers still running and removes the scratch directory, at a normal exit.
extern "C" fn at_exit() {
    spawner::kill_all();
    if let Some(scratch) = SCRATCH.get() {
        let _ = fs::remove_dir_all(&scratch.dir);
        let _ = fs::remove_file(scratch.dir.with_extension("lock"));
    }
}
