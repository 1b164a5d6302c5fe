//! The one thread that forks every server, so that no server outlives the test process.
//!
//! Each server is started with `PR_SET_PDEATHSIG = SIGKILL`, which the kernel sends when
//! the *thread* that forked it exits, not the process. Test threads exit after every test,
//! so servers are forked from one dedicated thread that lives as long as the process; even a
//! `kill -9` of the test process then takes its servers down with it. The servers still
//! running at a normal exit are killed by [`kill_all`] from the exit hook instead.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::{mpsc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// A command for the spawner thread, and where to send the started child.
struct Request {
    command: Command,
    reply: mpsc::Sender<io::Result<Child>>,
}

/// The process ids of the servers started and not yet reaped, for [`kill_all`].
static LIVE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Starts `command` from the spawner thread, tied to the life of this process.
pub(crate) fn spawn(command: Command) -> io::Result<Child> {
    let (reply, answer) = mpsc::channel();
    let request = Request { command, reply };
    spawner()
        .send(request)
        .expect("the spawner thread never exits");
    answer
        .recv()
        .expect("the spawner thread answers every request")
}

/// Forgets `pid` before its owner reaps it, so [`kill_all`] never signals a reused pid.
pub(crate) fn forget(pid: u32) {
    live().retain(|&live| live != pid);
}

/// Stops a server this process spawned: forgets it, sends `signal`, and waits up to `timeout`
/// for it to exit. After that it is killed, and the error says so (for the caller's failure
/// message, with its log).
pub(crate) fn stop(
    mut child: Child,
    signal: libc::c_int,
    name: &str,
    timeout: Duration,
) -> Result<(), String> {
    forget(child.id());
    // SAFETY: signals our own child, which has not been reaped yet.
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    let deadline = Instant::now() + timeout;
    while matches!(child.try_wait(), Ok(None)) {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("did not exit within {timeout:?} of {name}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Kills and reaps every server still running; for the exit hook, so it never blocks on the lock.
pub(super) fn kill_all() {
    let mut live = match LIVE.try_lock() {
        Ok(live) => live,
        Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return,
    };
    for pid in live.drain(..) {
        let pid = pid as libc::pid_t;
        // SAFETY: plain system calls on a child of this process that nobody else reaps any more.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
}

fn live() -> MutexGuard<'static, Vec<u32>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The spawner thread's inbox. The sender lives in a static, so the thread never exits.
fn spawner() -> &'static mpsc::Sender<Request> {
    static SPAWNER: OnceLock<mpsc::Sender<Request>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (sender, requests) = mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("mariadb-spawner".into())
            .spawn(move || {
                for Request { mut command, reply } in requests {
                    let _ = reply.send(spawn_tied(&mut command));
                }
            })
            .expect("cannot start the mariadb spawner thread");
        sender
    })
}

/// Runs on the spawner thread: forks `command` with the parent-death signal set.
fn spawn_tied(command: &mut Command) -> io::Result<Child> {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe functions.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before prctl, and then no signal would ever come.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
    let child = command.spawn()?;
    live().push(child.id());
    Ok(child)
}
