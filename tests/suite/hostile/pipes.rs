//! A closed stdout or stderr (`crawler-seed big.txt 2>&1 | head -1`) never stops the work: what
//! cannot be written is dropped, the work is done, and the exit code is the usual one.

use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::time::Duration;

use crawler_queue::NewSite;
use crawler_tests::bins::{command, stderr};
use crawler_tests::site::{spawn_site, Page};
use crawler_tests::{on_every_backend, TestDb};

use super::lines::stored_urls;
use crate::e2e::{seed, spawn_worker, unfinished, url_file, wait, FAST};

/// The write end of a pipe whose read end is already closed: every write fails with EPIPE, as
/// once `| head -1` has exited.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills `fds` with two new descriptors, each owned exactly once below.
    unsafe {
        assert_eq!(libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC), 0);
        drop(OwnedFd::from_raw_fd(fds[0]));
        Stdio::from(OwnedFd::from_raw_fd(fds[1]))
    }
}

/// `cmd` with stdout and stderr closed, and logging at info so that there is something to log.
fn unheard(cmd: &mut Command) -> &mut Command {
    cmd.env("RUST_LOG", "info")
        .stdout(closed_pipe())
        .stderr(closed_pipe())
}

/// Runs `cmd` to its end, unheard; returns its exit code.
fn run_unheard(cmd: &mut Command) -> Option<i32> {
    unheard(cmd).status().expect("run a crawler binary").code()
}

on_every_backend!(
    async fn seed_adds_every_valid_line_with_stdout_and_stderr_closed(backend: Backend) {
        let db = backend.fresh().await;
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let mut valid = 0;
        for i in 0..5000 {
            if i % 7 == 3 {
                writeln!(file, "ftp://files.example/{i}").unwrap(); // rejected, on stderr
            } else {
                writeln!(file, "https://h{}.example/{i}", i % 13).unwrap();
                valid += 1;
            }
        }
        let code = run_unheard(command("crawler-seed", db.url.expose()).arg(file.path()));
        assert_eq!(code, Some(0));
        assert_eq!(stored_urls(&db).await.len(), valid);
    }
);

on_every_backend!(
    async fn a_draining_worker_finishes_with_stdout_and_stderr_closed(backend: Backend) {
        let site = spawn_site().await;
        let db = backend.fresh().await;
        let (file, _) = url_file(&site, 300, &[Page::Alive, Page::Dead]);
        seed(&db, file.path());
        let mut cmd = command("crawler-worker", db.url.expose());
        cmd.args(["--id", "unheard", "--drain"]).args(FAST);
        let mut worker = unheard(&mut cmd).spawn().unwrap();
        let status =
            tokio::task::spawn_blocking(move || wait(&mut worker, Duration::from_secs(120)))
                .await
                .unwrap();
        assert_eq!(status.code(), Some(0));
        assert_eq!(unfinished(&db), (0, 0));
    }
);

/// Seeds `n` sites and claims them all with a lease that expires at once.
async fn expired_claims(db: &TestDb, n: usize) {
    let queue = db.queue().await;
    let sites: Vec<_> = (0..n)
        .map(|i| NewSite {
            url: format!("https://h.example/{i}"),
            host: "h.example".into(),
        })
        .collect();
    queue.seed(&sites, false).await.unwrap();
    let batch = queue
        .claim("gone", n as u32, Duration::from_millis(1))
        .await;
    assert_eq!(batch.unwrap().sites.len(), n);
    tokio::time::sleep(Duration::from_millis(50)).await;
    queue.db().close().await;
}

on_every_backend!(
    async fn reap_gives_back_expired_claims_with_stdout_and_stderr_closed(backend: Backend) {
        let db = backend.fresh().await;
        expired_claims(&db, 10).await;
        assert_eq!(
            run_unheard(&mut command("crawler-reap", db.url.expose())),
            Some(0)
        );
        let counts = db.queue().await.reports().state_counts().await.unwrap();
        assert_eq!((counts.pending, counts.claimed), (10, 0));
    }
);

on_every_backend!(
    async fn report_ends_quietly_when_its_reader_has_gone(backend: Backend) {
        let site = spawn_site().await;
        let db = backend.fresh().await;
        let (file, _) = url_file(&site, 50, &[Page::Dead]);
        seed(&db, file.path());
        let mut worker = spawn_worker(&db, "w", &["--drain"]);
        tokio::task::spawn_blocking(move || wait(&mut worker, Duration::from_secs(60)))
            .await
            .unwrap();
        for args in [
            &["--dead"][..],
            &["--all", "--format", "json"][..],
            &["--dead", "--summary"][..],
            &["--summary", "--format", "csv"][..],
        ] {
            let mut cmd = command("crawler-report", db.url.expose());
            cmd.args(args);
            assert_eq!(run_unheard(&mut cmd), Some(0), "{args:?}");
        }
        // The same, with stderr open: nothing to say about a reader that went away.
        let out = command("crawler-report", db.url.expose())
            .arg("--dead")
            .stdout(closed_pipe())
            .output()
            .unwrap();
        assert!(
            out.status.success() && stderr(&out).is_empty(),
            "{}",
            stderr(&out)
        );
    }
);
