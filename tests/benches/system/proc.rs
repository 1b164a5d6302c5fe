//! Child processes: run one to its end and take its wall time, peak memory and CPU time from
//! `wait4`; read the CPU time of others from /proc; keep the server child in a guard.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::bench::{field, ROLE};

/// This bench re-executed in `role`, dying with the bench.
pub fn self_command(role: &str) -> Command {
    let exe = std::env::current_exe().expect("own path");
    let mut command = Command::new(exe);
    command.env(ROLE, role);
    command
}

/// Makes the kernel kill the child when the thread that spawns it (here, always the main
/// thread) ends, so no child outlives a killed bench.
fn tie_to_parent(command: &mut Command) {
    // SAFETY: prctl is async-signal-safe and touches only the child.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

/// A child that runs for the whole bench (the HTTP server), killed when dropped.
pub struct Guard {
    child: Child,
}

impl Guard {
    pub fn spawn_self(role: &str) -> Guard {
        let mut command = self_command(role);
        command.stdin(Stdio::null()).stdout(Stdio::piped());
        tie_to_parent(&mut command);
        Guard {
            child: command.spawn().expect("re-exec the bench"),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the child's `READY <port>` line.
    pub fn ready_port(&mut self) -> u16 {
        let stdout = self.child.stdout.take().expect("stdout is piped");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the server says READY");
        line.trim()
            .strip_prefix("READY ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the server said {line:?}, not READY <port>"))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A started child whose output goes to files of the scratch directory.
pub struct Running {
    pid: libc::pid_t,
    started: Instant,
    name: String,
    out: PathBuf,
    err: PathBuf,
}

/// What a child cost, from `wait4`.
pub struct Measured {
    pub wall: Duration,
    /// Peak resident memory (`ru_maxrss`), KiB.
    pub peak_kb: u64,
    /// User + system CPU time, seconds.
    pub cpu: f64,
    pub stdout: String,
}

impl Measured {
    pub fn peak_mb(&self) -> f64 {
        self.peak_kb as f64 / 1024.0
    }
}

impl Running {
    pub fn start(mut command: Command, dir: &Path, name: &str) -> Running {
        let out = dir.join(format!("{name}.out"));
        let err = dir.join(format!("{name}.err"));
        command
            .stdin(Stdio::null())
            .stdout(File::create(&out).expect("create a log file"))
            .stderr(File::create(&err).expect("create a log file"));
        tie_to_parent(&mut command);
        let started = Instant::now();
        // Reaped by `wait4` in `reap`, which also gives its peak memory and CPU time.
        #[allow(clippy::zombie_processes)]
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Running {
            pid: child.id() as libc::pid_t,
            started,
            name: name.to_owned(),
            out,
            err,
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// Waits for the child's end (killing it after `limit`); panics with the end of its
    /// stderr unless it exited 0.
    pub fn finish(self, limit: Duration) -> Measured {
        self.finish_sampling(limit, limit, |_| {})
    }

    /// As [`Running::finish`], calling `sample(elapsed)` every `every` while the child runs.
    pub fn finish_sampling(
        self,
        limit: Duration,
        every: Duration,
        sample: impl FnMut(Duration),
    ) -> Measured {
        let (status, usage, wall) = self.reap(limit, every, sample);
        let exited_ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        if !exited_ok || wall > limit {
            let stderr = std::fs::read_to_string(&self.err).unwrap_or_default();
            let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            panic!(
                "{} failed (wait status {status:#x}, {wall:.1?}, limit {limit:?}); its stderr ends:\n{}",
                self.name,
                tail.join("\n")
            );
        }
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Measured {
            wall,
            peak_kb: usage.ru_maxrss as u64,
            cpu: secs(usage.ru_utime) + secs(usage.ru_stime),
            stdout: std::fs::read_to_string(&self.out).unwrap_or_default(),
        }
    }

    /// Polls `wait4` every 2 ms (at most 2 ms added to the wall time).
    fn reap(
        &self,
        limit: Duration,
        every: Duration,
        mut sample: impl FnMut(Duration),
    ) -> (i32, libc::rusage, Duration) {
        let mut killed = false;
        let mut next_sample = every;
        loop {
            let mut status = 0;
            // SAFETY: wait4 fills the status and the struct it is given; the pid is our
            // child, reaped only here.
            let (done, usage) = unsafe {
                let mut usage = std::mem::zeroed::<libc::rusage>();
                let r = libc::wait4(self.pid, &mut status, libc::WNOHANG, &mut usage);
                (r == self.pid, usage)
            };
            let wall = self.started.elapsed();
            if done {
                return (status, usage, wall);
            }
            if wall >= next_sample {
                sample(wall);
                next_sample += every;
            }
            if wall > limit && !killed {
                // SAFETY: our child, not yet reaped, so the pid is still ours.
                unsafe { libc::kill(self.pid, libc::SIGKILL) };
                killed = true;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// The resident memory (VmRSS) of a live process, KiB (0 if it is gone).
pub fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    field(&status, "VmRSS:").map_or(0, |kb| kb as u64)
}

/// Open file descriptors of a live process (sockets included; 0 if it is gone).
pub fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |dir| dir.count())
}

/// User + system CPU seconds a live process has used so far (0 if it is gone).
pub fn cpu_of(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which may hold spaces: state is field 3, utime 14.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / clock_ticks()
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 }
}
