//! `crawler.toml` end to end: the binaries take options from it (`--config FILE`, or the file
//! in the working directory), expand `${VAR}`, let the command line and the environment win,
//! and refuse an unknown key naming the file's line (exit 2).

use std::process::Command;

use crawler_tests::bins::{bin, run, stderr, stdout};

fn binary(name: &str, dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(bin(name));
    cmd.current_dir(dir)
        .env_remove("DATABASE_URL")
        .env_remove("CRAWLER_CONFIG")
        .env("RUST_LOG", "warn");
    cmd
}

#[test]
fn a_config_file_sets_options_and_names_an_unknown_key_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/c.db", dir.path().display());
    std::fs::write(dir.path().join("list.txt"), "https://a.example/p#s1\n").unwrap();
    // In the working directory: the seed keeps fragments (a [seed] option), and the database
    // comes from an environment variable named in the file.
    let config = "database-url = \"${CRAWL_DB}\"\n\n[seed]\nfragments = true\n\
                  [worker]\nhost-rate = 5\n";
    std::fs::write(dir.path().join("crawler.toml"), config).unwrap();
    let seeded = run(binary("crawler-seed", dir.path())
        .env("CRAWL_DB", &db)
        .arg("list.txt"));
    assert!(seeded.status.success(), "{}", stderr(&seeded));
    assert!(
        stdout(&seeded).starts_with("added 1,"),
        "{}",
        stdout(&seeded)
    );
    let listed = run(binary("crawler-report", dir.path())
        .env("CRAWL_DB", &db)
        .args(["--summary", "--format", "csv"]));
    assert!(listed.status.success(), "{}", stderr(&listed));
    // The command line wins: --no-fragments after the file's --fragments.
    let again = run(binary("crawler-seed", dir.path())
        .env("CRAWL_DB", &db)
        .args(["--no-fragments", "list.txt"]));
    assert!(stdout(&again).starts_with("added 1,"), "{}", stdout(&again));

    // --config names another file; a misspelt key is an error naming its line.
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[worker]\ndrain = true\nhost-rat = 5\n").unwrap();
    let refused = run(binary("crawler-worker", dir.path())
        .arg("--config")
        .arg(&bad));
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains(&format!("{}:3: \"host-rat\": unknown key", bad.display())),
        "{said}"
    );
    // A variable the file names and the environment lacks is an error too, before connecting.
    let unset = run(binary("crawler-report", dir.path()).arg("--summary"));
    assert_eq!(unset.status.code(), Some(2), "{}", stderr(&unset));
    assert!(
        stderr(&unset).contains(
            "crawler.toml:1: \"database-url\": the environment variable CRAWL_DB is not set"
        ),
        "{}",
        stderr(&unset)
    );
}
