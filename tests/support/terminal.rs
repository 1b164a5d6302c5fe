//! A pseudo-terminal to run a binary in, as a person at a terminal would: its stdout and
//! stderr are the terminal (a TTY, of a known size), and what it writes there is read back,
//! escape sequences and all.

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The terminal's size: wide enough for a whole progress bar line, tall enough to keep every
/// line a short run logs on screen.
pub const ROWS: u16 = 60;
pub const COLUMNS: u16 = 200;

/// A binary running in a terminal of its own.
pub struct Terminal {
    pub child: Child,
    /// Everything written to the terminal so far.
    output: Arc<Mutex<Vec<u8>>>,
    /// Set once the terminal is closed (the binary and everything it started exited).
    closed: Arc<AtomicBool>,
}

/// Starts `cmd` with its stdout and stderr on a new pseudo-terminal (stdin stays as `cmd` has
/// it). The `Command` is dropped here, so that the binary holds the terminal's only ends.
pub fn spawn_in_terminal(mut cmd: Command) -> Terminal {
    let (master, slave) = open_pty();
    let slave2 = slave.try_clone().expect("duplicate the terminal");
    let child = cmd
        .stdout(Stdio::from(slave))
        .stderr(Stdio::from(slave2))
        .spawn()
        .expect("start a binary in a terminal");
    drop(cmd);
    let output = Arc::new(Mutex::new(Vec::new()));
    let closed = Arc::new(AtomicBool::new(false));
    let (out, done) = (output.clone(), closed.clone());
    std::thread::spawn(move || {
        let mut master = master;
        let mut buf = [0; 4096];
        // Linux answers EIO once no process holds the terminal any more.
        while let Ok(n @ 1..) = master.read(&mut buf) {
            out.lock().unwrap().extend_from_slice(&buf[..n]);
        }
        done.store(true, Ordering::SeqCst);
    });
    Terminal {
        child,
        output,
        closed,
    }
}

impl Terminal {
    /// What was written to the terminal so far.
    pub fn output(&self) -> Vec<u8> {
        self.output.lock().unwrap().clone()
    }

    /// Waits until the terminal shows `text` (anywhere in what was written), at most `limit`.
    pub fn wait_for(&self, text: &str, limit: Duration) -> bool {
        let started = Instant::now();
        while started.elapsed() < limit {
            if String::from_utf8_lossy(&self.output()).contains(text) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// Waits for the binary to exit (killing it after `limit`), then for the terminal to
    /// close, and returns how it exited and everything it wrote.
    pub fn finish(mut self, limit: Duration) -> (ExitStatus, Vec<u8>) {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                panic!("a process ran longer than {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        // A process started meanwhile by another test may hold a copy of the terminal for a
        // moment (inherited between `openpty` and `FD_CLOEXEC`): do not wait for it forever.
        let started = Instant::now();
        while !self.closed.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        (status, self.output())
    }
}

/// A test that failed half-way leaves no binary behind.
impl Drop for Terminal {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A new pseudo-terminal of [`ROWS`] × [`COLUMNS`]: the side to read, the side for the binary.
fn open_pty() -> (File, OwnedFd) {
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize {
        ws_row: ROWS,
        ws_col: COLUMNS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two new descriptors into the locals, and reads only `size`.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    for fd in [master, slave] {
        // SAFETY: fcntl on a descriptor this function owns. Other tests' processes, started
        // from other threads, must not inherit the terminal: it would not close.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: both descriptors are new, open, and owned here alone.
    unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}
