//! The crawler's binaries, built once per test process and run as a user would.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// Set to a directory of crawler binaries built elsewhere (another commit's `target/release`),
/// a bench runs those instead of building its own: the same harness measures a before and an
/// after in one run.
pub const BINS_VAR: &str = "CRAWLER_BENCH_BINS";

/// The path of binary `name` (crawler-seed, crawler-worker, …), built on first use. `cargo
/// test` builds only the binaries of packages with integration tests, so the suite builds the
/// rest itself, into the same target directory and profile as the test binary; or those of
/// [`BINS_VAR`], when set.
pub fn bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        if let Some(dir) = std::env::var_os(BINS_VAR) {
            return PathBuf::from(dir);
        }
        let exe = std::env::current_exe().expect("the test binary's path");
        let profile_dir = exe
            .parent()
            .and_then(|deps| deps.parent())
            .expect("target/PROFILE/deps")
            .to_path_buf();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build.args([
            "build",
            "--quiet",
            "-p",
            "crawler-worker",
            "-p",
            "crawler-coordinator",
            "--bins",
        ]);
        if profile_dir.ends_with("release") {
            build.arg("--release");
        }
        let target_dir = profile_dir.parent().expect("target dir");
        // Cargo runs a test or bench with its package's `CARGO_*` variables set. Passed on,
        // they would reach build scripts that watch them (ring's watches
        // `CARGO_MANIFEST_DIR`), so this build and the next `cargo test` or `cargo bench`
        // would each find the other's artifacts stale and rebuild the worker's whole TLS
        // stack every time.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if name.starts_with("CARGO_") && name != "CARGO_HOME" {
                build.env_remove(&*name);
            }
        }
        let status = build
            .env("CARGO_TARGET_DIR", target_dir)
            .status()
            .expect("run cargo build");
        assert!(
            status.success(),
            "cargo build of the crawler binaries failed"
        );
        profile_dir
    });
    dir.join(name)
}

/// A command for binary `name` against `database_url`, quiet unless `TEST_LOG` is set.
pub fn command(name: &str, database_url: &str) -> Command {
    let mut cmd = Command::new(bin(name));
    cmd.env("DATABASE_URL", database_url)
        .env(
            "RUST_LOG",
            std::env::var("TEST_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdin(Stdio::null());
    cmd
}

/// Runs `cmd` to its end, capturing its output.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run a crawler binary")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
