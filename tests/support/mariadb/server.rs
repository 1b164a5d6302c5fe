//! One private `mariadbd` process: start, stop, restart and kill.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use super::ready::{self, Readiness, READY_TIMEOUT};
use super::{binary, command, spawner, template};

/// How long a server may take to exit after SIGTERM.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// A fresh port can still be taken by someone else before the server binds it.
const PORT_ATTEMPTS: usize = 5;

/// A private server, killed and its directory removed on drop.
pub(crate) struct Server {
    /// Holds the data and temp directories, the socket, the pid file and the error log.
    dir: PathBuf,
    port: u16,
    /// `None` while stopped.
    child: Option<Child>,
    /// What this server adds to the throwaway command line, at every launch.
    launch: Launch,
}

/// What a server adds to the throwaway command line (`command::mariadbd`): a Galera node's
/// `wsrep` flags, and the environment its state transfer script is found in. Empty for a
/// plain server.
#[derive(Clone, Debug, Default)]
pub(crate) struct Launch {
    /// Flags after the throwaway ones (later flags win).
    pub(crate) flags: Vec<String>,
    /// Environment variables set for the server, on top of the test process's.
    pub(crate) env: Vec<(String, OsString)>,
}

/// Why a launch did not give a ready server.
enum Failure {
    PortTaken,
    Other(String),
}

impl Server {
    /// Starts a server on a copy of the template, retrying on a port taken meanwhile, with
    /// `launch` added to its command line (and to every restart).
    pub(crate) fn start_with(launch: Launch) -> Server {
        let dir = template::new_server_dir();
        let mut server = Server {
            dir,
            port: 0,
            child: None,
            launch,
        };
        for _ in 0..PORT_ATTEMPTS {
            server.port = free_port();
            match server.launch() {
                Ok(()) => return server,
                Err(Failure::PortTaken) => continue,
                Err(Failure::Other(why)) => server.fail(&why),
            }
        }
        server.fail(&format!("found no free port in {PORT_ATTEMPTS} attempts"))
    }

    /// `mysql://crawler:PASSWORD@127.0.0.1:PORT/DATABASE`.
    pub(super) fn url(&self, database: &str) -> String {
        let (password, port) = (template::password(), self.port);
        format!("mysql://crawler:{password}@127.0.0.1:{port}/{database}")
    }

    /// The running server's process id; `None` while stopped.
    pub(super) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Sends `signal` to the running server.
    pub(super) fn signal(&self, signal: i32) {
        let child = self.child.as_ref().expect("the server is running");
        // SAFETY: signals our own child, which has not been reaped yet.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    }

    /// Stops the server with SIGTERM, waiting for it to exit; the data stays.
    pub(super) fn stop(&mut self) {
        let Some(child) = self.child.take() else {
            return;
        };
        if let Err(why) = spawner::stop(child, libc::SIGTERM, "SIGTERM", STOP_TIMEOUT) {
            self.fail(&why);
        }
    }

    /// Starts the server again, stopping it first if needed, on the same port and data.
    pub(super) fn restart(&mut self) {
        self.stop();
        match self.launch() {
            Ok(()) => {}
            Err(Failure::PortTaken) => self.fail("cannot restart: its port is taken"),
            Err(Failure::Other(why)) => self.fail(&why),
        }
    }

    /// Spawns `mariadbd` and waits until it accepts a login, or says why it did not.
    fn launch(&mut self) -> Result<(), Failure> {
        let log = command::error_log(&self.dir);
        let log_before = fs::metadata(&log).map_or(0, |meta| meta.len());
        let mut command = command::mariadbd(&self.dir, self.port);
        command
            .args(&self.launch.flags)
            .envs(self.launch.env.iter().map(|(k, v)| (k, v)));
        let child =
            spawner::spawn(command).map_err(|e| Failure::Other(format!("cannot be run: {e}")))?;
        let url = self.url("");
        match ready::wait(self.child.insert(child), &url) {
            Readiness::Ready => Ok(()),
            Readiness::Exited(status) => {
                // Already reaped: this only lets go of the child.
                self.kill();
                let log = fs::read(&log).unwrap_or_default();
                let this_run = log.get(log_before as usize..).unwrap_or_default();
                if String::from_utf8_lossy(this_run).contains("Address already in use") {
                    return Err(Failure::PortTaken);
                }
                Err(Failure::Other(format!("exited during startup ({status})")))
            }
            Readiness::TimedOut => Err(Failure::Other(format!(
                "accepted no login within {READY_TIMEOUT:?}"
            ))),
        }
    }

    /// Kills the server and panics with `why` and the end of its error log.
    fn fail(&mut self, why: &str) -> ! {
        self.kill();
        let log = command::error_log(&self.dir);
        panic!(
            "private mariadbd ({}) on port {} {why}; the end of {}:\n{}",
            binary::mariadbd().display(),
            self.port,
            log.display(),
            tail(&log, 30)
        )
    }

    /// Kills the server with SIGKILL, as a crash would, and reaps it; the data stays.
    pub(super) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            spawner::forget(child.id());
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A port that was free a moment ago; the server may still lose it to someone else.
pub(crate) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("cannot bind 127.0.0.1:0");
    let address = listener
        .local_addr()
        .expect("a bound listener has an address");
    address.port()
}

pub(crate) fn tail(path: &Path, lines: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_else(|e| format!("(cannot read it: {e})"));
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
