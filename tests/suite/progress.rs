//! What a worker tells while it works: on a terminal, a progress bar and colour, and a clean
//! terminal after Ctrl-C; in a pipe, neither, but a summary line with the rate; JSON lines with
//! `--log-format json`; nothing below a warning with `-q`; and a count of verdicts that counts
//! each site once, however many times it was retried.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crawler_tests::bins::{command, run, stderr};
use crawler_tests::site::{spawn_site, Page};
use crawler_tests::terminal::{spawn_in_terminal, COLUMNS, ROWS};
use crawler_tests::{on_every_backend, Backend, TestDb};

use crate::e2e::{seed, url_file, wait, FAST};

/// A worker over a database with `n` slow pages (300 ms each) seeded: 4 at a time, the crawl
/// lasts `n` × 75 ms, long enough to watch.
async fn slow_crawl(n: usize) -> (TestDb, Command) {
    let site = spawn_site().await;
    let db = Backend::Sqlite.fresh().await;
    let (file, _) = url_file(&site, n, &[Page::Slow, Page::Dead]);
    seed(&db, file.path());
    let mut worker = command("crawler-worker", db.url.expose());
    worker
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .env("TERM", "xterm-256color")
        .stdout(Stdio::null())
        .args(FAST)
        .args(["--concurrency", "4"]);
    (db, worker)
}

/// Whether `output` holds an SGR sequence that sets a colour or an attribute (`ESC [ 32 m`),
/// as opposed to the cursor movements and line clearing a progress bar draws with.
fn has_colour(output: &[u8]) -> bool {
    let text = String::from_utf8_lossy(output);
    text.split('\x1b').skip(1).any(|seq| {
        let Some(params) = seq.strip_prefix('[') else {
            return false;
        };
        let end = params.find(|c: char| !c.is_ascii_digit() && c != ';');
        end.is_some_and(|end| end > 0 && params[end..].starts_with('m'))
    })
}

/// Whether a line of `text` is a progress bar: `… [=====>   ] 12/40 30% · 16/s, ETA 2s, …`.
fn has_bar(text: &str) -> bool {
    text.lines()
        .any(|l| l.contains("% · ") && l.contains("/s, ETA "))
}

fn interrupt(pid: u32) {
    // SAFETY: kill sends a signal; the pid is our own child's, not yet waited for.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_terminal_a_bar_and_colour_show_and_ctrl_c_leaves_the_terminal_clean() {
    let (_db, worker) = slow_crawl(400).await;
    let terminal = spawn_in_terminal(worker);
    assert!(
        terminal.wait_for("/s, ETA ", Duration::from_secs(60)),
        "no progress bar: {}",
        String::from_utf8_lossy(&terminal.output())
    );
    interrupt(terminal.child.id());
    let (status, output) = terminal.finish(Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    let raw = String::from_utf8_lossy(&output);
    assert!(has_bar(&raw), "{raw}");
    assert!(raw.contains("% · "), "the bar shows the percentage: {raw}");
    assert!(has_colour(&output), "log lines in colour: {raw:?}");

    let mut screen = vt100::Parser::new(ROWS, COLUMNS, 0);
    screen.process(&output);
    let screen = screen.screen();
    let shown = screen.contents();
    assert!(!has_bar(&shown), "the bar is cleared at the end:\n{shown}");
    let last = shown.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
    assert!(
        last.contains("worker stopped: "),
        "the last line is the summary:\n{shown}"
    );
    assert!(!screen.hide_cursor(), "the cursor is visible");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_color_turns_the_colour_off_on_a_terminal_and_leaves_the_bar() {
    let (_db, mut worker) = slow_crawl(60).await;
    worker.env("NO_COLOR", "1").arg("--drain");
    let (status, output) = spawn_in_terminal(worker).finish(Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
    let raw = String::from_utf8_lossy(&output);
    assert!(has_bar(&raw), "{raw}");
    assert!(raw.contains("worker stopped: 60 checked"), "{raw}");
    assert!(!has_colour(&output), "{raw:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_terminal_quiet_and_json_logs_draw_no_bar() {
    let (_db, mut quiet) = slow_crawl(40).await;
    quiet.args(["--drain", "-q"]);
    let (status, output) = spawn_in_terminal(quiet).finish(Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
    assert_eq!(String::from_utf8_lossy(&output), "", "-q: nothing at all");

    let (_db, mut json) = slow_crawl(40).await;
    json.args(["--drain", "--log-format", "json"]);
    let (status, output) = spawn_in_terminal(json).finish(Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
    let text = String::from_utf8_lossy(&output);
    assert!(!text.contains('\x1b'), "no bar, no colour: {text:?}");
    for line in text.lines() {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "{line:?}"
        );
    }
    assert!(text.contains("worker stopped: 40 checked"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_pipe_no_bar_and_no_colour_show_but_a_summary_line_with_the_rate() {
    let (_db, mut worker) = slow_crawl(400).await;
    let mut child = worker.stderr(Stdio::piped()).spawn().unwrap();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let reader = {
        let (pipe, lines) = (child.stderr.take().unwrap(), lines.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                lines.lock().unwrap().push(line.unwrap());
            }
        })
    };
    let started = Instant::now();
    let summary = |lines: &[String]| lines.iter().any(|l| l.contains("/s over the last 10 s"));
    while !summary(&lines.lock().unwrap()) {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("no summary line: {:?}", lines.lock().unwrap());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    interrupt(child.id());
    assert!(wait(&mut child, Duration::from_secs(30)).success());
    reader.join().unwrap();
    let lines = lines.lock().unwrap();
    let text = lines.join("\n");
    let line = lines
        .iter()
        .find(|l| summary(std::slice::from_ref(l)))
        .unwrap();
    assert!(
        line.contains(" INFO ") && line.contains(" checked (alive "),
        "{line}"
    );
    assert!(
        !text.contains('\x1b'),
        "no escape sequence at all: {text:?}"
    );
    assert!(!has_bar(&text), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_log_format_json_every_log_line_is_a_json_object() {
    let (_db, mut worker) = slow_crawl(8).await;
    let out = run(worker.args(["--drain", "--log-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let messages: Vec<String> = stderr(&out)
        .lines()
        .map(|line| {
            let v: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            assert!(
                v["level"].is_string() && v["timestamp"].is_string(),
                "{line}"
            );
            v["message"].as_str().unwrap_or_default().to_owned()
        })
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("worker stopped: 8 checked")),
        "{messages:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_silences_the_info_lines_and_rust_log_still_wins() {
    let (db, _) = slow_crawl(4).await;
    let worker = |args: &[&str], rust_log: Option<&str>| {
        let mut cmd = command("crawler-worker", db.url.expose());
        cmd.env_remove("RUST_LOG")
            .args(FAST)
            .arg("--drain")
            .args(args);
        if let Some(level) = rust_log {
            cmd.env("RUST_LOG", level);
        }
        let out = run(&mut cmd);
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out)
    };
    assert!(
        worker(&[], None).contains("worker started"),
        "info by default"
    );
    assert_eq!(worker(&["-q"], None), "", "nothing but warnings and errors");
    assert!(worker(&["--quiet"], Some("info")).contains("worker stopped: "));
}

on_every_backend!(
    async fn the_count_of_verdicts_is_the_sites_however_often_they_were_retried(backend: Backend) {
        let site = spawn_site().await;
        let db = backend.fresh().await;
        let (file, _) = url_file(&site, 30, &[Page::Error, Page::Alive, Page::Dead]);
        seed(&db, file.path());
        let out = run(command("crawler-worker", db.url.expose())
            .env_remove("RUST_LOG")
            .args(FAST)
            .args(["--drain", "--attempts", "2", "--retry-delay", "100ms"]));
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stderr(&out);
        let last = text.lines().rfind(|l| l.contains("worker stopped: "));
        let last = last.unwrap_or_else(|| panic!("no final line: {text}"));
        // Ten sites answer 500 twice: two checks, one verdict each.
        assert!(
            last.contains(
                "worker stopped: 30 checked (alive 10, dead 10, blocked 0, unreachable 0, \
                 error 10), 10 retrying, "
            ),
            "{last}"
        );
    }
);
