//! The template data directory: `mariadb-install-db` runs once per process, and every
//! server starts on a copy of its result, which takes milliseconds instead of seconds.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use rand::distr::{Alphanumeric, SampleString};

use super::{binary, command, scratch};

/// The installed template and the password of its `crawler` user.
struct Template {
    dir: PathBuf,
    password: String,
}

/// The password of the `crawler` user, the same on every server of this process.
pub(super) fn password() -> &'static str {
    &template().password
}

/// A new server directory: a copy of the template as its data directory, an empty temp one.
pub(super) fn new_server_dir() -> PathBuf {
    static SERVERS: AtomicUsize = AtomicUsize::new(0);
    let n = SERVERS.fetch_add(1, Ordering::Relaxed);
    let dir = scratch::dir().join(format!("server-{n}"));
    fs::create_dir(&dir)
        .and_then(|()| copy_dir(&template().dir, &dir.join(command::DATA)))
        .and_then(|()| fs::create_dir(dir.join(command::TMP)))
        .unwrap_or_else(|e| panic!("cannot set up server directory {}: {e}", dir.display()));
    dir
}

fn template() -> &'static Template {
    static TEMPLATE: OnceLock<Template> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let template = Template {
            dir: scratch::dir().join("template"),
            password: Alphanumeric.sample_string(&mut rand::rng(), 24),
        };
        install(&template);
        template
    })
}

/// Runs `mariadb-install-db` into the template, creating the `crawler` user on the way.
fn install(template: &Template) {
    // A failed earlier attempt (another test reaches here after a panic) left debris.
    let _ = fs::remove_dir_all(&template.dir);
    let tmp = template.dir.with_extension("tmp");
    let _ = fs::create_dir(&tmp);
    let setup = template.dir.with_extension("sql");
    fs::write(&setup, setup_sql(&template.password))
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", setup.display()));
    let mut command = Command::new(binary::install_db());
    command
        .arg("--no-defaults")
        .arg(format!("--datadir={}", template.dir.display()))
        .arg(format!("--extra-file={}", setup.display()))
        // Passed on to the bootstrap mariadbd; see `command::TMP` for why not /tmp.
        .arg(format!("--tmpdir={}", tmp.display()))
        .args([
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
        ])
        .arg(command::INNODB_LOG_FILE_SIZE);
    if command::running_as_root() {
        command.arg("--user=root");
    }
    run_installer(&mut command, "mariadb-install-db", &template.dir);
}

/// Runs a data directory's installer (`mariadb-install-db`, `initdb`) to its end; panics with
/// its output when it fails.
pub(crate) fn run_installer(command: &mut Command, name: &str, dir: &Path) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", command.get_program()));
    if !output.status.success() {
        panic!(
            "{name} failed ({}) for {}:\n{}{}",
            output.status,
            dir.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
        );
    }
}

/// The `crawler` user that the tests log in as over TCP with a password, as a fleet would
/// (a root that authenticates by unix socket cannot). Bootstrap mode skips the grant
/// tables; `FLUSH PRIVILEGES` loads them so that `CREATE USER` works.
fn setup_sql(password: &str) -> String {
    let mut sql = String::from("FLUSH PRIVILEGES;\n");
    for host in ["%", "localhost"] {
        sql += &format!("CREATE USER 'crawler'@'{host}' IDENTIFIED BY '{password}';\n");
        sql += &format!("GRANT ALL ON *.* TO 'crawler'@'{host}' WITH GRANT OPTION;\n");
    }
    sql
}

pub(crate) fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
