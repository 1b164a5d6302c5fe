//! `docker-compose.yml` and `Dockerfile`, checked without a container engine (none runs where
//! the tests run): every service runs a binary the image holds, with options and variables
//! that binary reads; no password has a default; MariaDB allows the connections the fleet
//! opens; the dependency layer's stub sources satisfy Cargo. `docker compose` or `docker-compose`
//! validates the file too (it needs no daemon for that; CI installs Debian's `docker-compose`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crawler_tests::bins::{bin, run, stderr, stdout};
use serde_yaml::Value;

use crate::pipelines::env_vars;

/// The workspace's root, where docker-compose.yml and the Dockerfile are.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn read(name: &str) -> String {
    std::fs::read_to_string(root().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The compose file, its anchors and merge keys resolved as compose resolves them.
fn compose() -> Value {
    let mut file: Value = serde_yaml::from_str(&read("docker-compose.yml")).unwrap();
    file.apply_merge().unwrap();
    file
}

/// The services built from this repository's image, by name.
fn crawler_services(compose: &Value) -> BTreeMap<String, &Value> {
    let services = compose["services"].as_mapping().expect("services");
    services
        .iter()
        .filter(|(_, s)| s.get("build").is_some())
        .map(|(name, s)| (name.as_str().unwrap().to_owned(), s))
        .collect()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_sequence()
        .map(|seq| seq.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

/// What a service runs: its entrypoint then its command (a tool's arguments come at `run`).
fn argv(service: &Value) -> Vec<String> {
    let mut argv = strings(&service["entrypoint"]);
    argv.extend(strings(&service["command"]));
    argv
}

/// Every binary the workspace builds, with its package, as Cargo sees the manifests.
fn workspace_binaries() -> BTreeMap<String, String> {
    let out = run(Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
        ])
        .current_dir(root()));
    assert!(out.status.success(), "{}", stderr(&out));
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut bins = BTreeMap::new();
    for package in metadata["packages"].as_array().unwrap() {
        for target in package["targets"].as_array().unwrap() {
            if target["kind"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k == "bin")
            {
                let package = package["name"].as_str().unwrap().to_owned();
                bins.insert(target["name"].as_str().unwrap().to_owned(), package);
            }
        }
    }
    bins
}

/// The packages whose binaries the Dockerfile's last `cargo build` builds.
fn image_packages(dockerfile: &str) -> BTreeSet<String> {
    let build = dockerfile
        .lines()
        .rfind(|l| l.contains("cargo build --release --locked"))
        .expect("a cargo build in the Dockerfile");
    assert!(
        build.contains("--bins"),
        "every binary of the packages: {build}"
    );
    let words: Vec<&str> = build.split_whitespace().collect();
    words
        .windows(2)
        .filter(|w| w[0] == "-p")
        .map(|w| w[1].to_owned())
        .collect()
}

#[test]
fn every_service_runs_a_binary_of_the_image_with_options_and_variables_it_reads() {
    let compose = compose();
    let binaries = workspace_binaries();
    let packages = image_packages(&read("Dockerfile"));
    let services = crawler_services(&compose);
    assert!(
        ["db", "worker", "reaper", "dashboard", "seed", "report"]
            .iter()
            .all(|s| compose["services"].get(s).is_some()),
        "{services:?}"
    );
    for (name, service) in services {
        let argv = argv(service);
        let binary = argv
            .first()
            .unwrap_or_else(|| panic!("{name} runs nothing"));
        let package = binaries
            .get(binary)
            .unwrap_or_else(|| panic!("{name}: {binary} is not built"));
        assert!(
            packages.contains(package),
            "{name}: the image does not build {package}"
        );
        assert!(
            binary.starts_with("crawler-"),
            "the image installs crawler-*: {binary}"
        );
        let help = stdout(&run(Command::new(bin(binary)).arg("--help")));
        for option in argv.iter().filter(|a| a.starts_with("--")) {
            let option = option.split('=').next().unwrap();
            assert!(
                help.contains(&format!("{option} ")),
                "{name}: {binary} has no {option}"
            );
        }
        let reads = env_vars(binary);
        let set = service["environment"].as_mapping().expect("an environment");
        for key in set.keys().map(|k| k.as_str().unwrap()) {
            assert!(
                reads.contains(key),
                "{name}: {binary} does not read {key}: {reads:?}"
            );
        }
    }
}

/// The `${NAME…}` references in `text`, each as written between the braces.
fn references(text: &str) -> Vec<&str> {
    text.split("${")
        .skip(1)
        .map(|rest| rest.split('}').next().unwrap())
        .collect()
}

#[test]
fn no_password_has_a_default_and_each_comes_from_the_environment() {
    let text = read("docker-compose.yml");
    let passwords: Vec<&str> = references(&text)
        .into_iter()
        .filter(|r| r.contains("PASSWORD") || r.contains("TOKEN"))
        .collect();
    assert!(passwords.len() >= 4, "{passwords:?}");
    assert!(
        passwords
            .iter()
            .any(|r| r.starts_with("CRAWLER_DASHBOARD_TOKEN:?")),
        "{passwords:?}"
    );
    for reference in passwords {
        let (name, rest) = reference.split_at(reference.find(':').unwrap_or(reference.len()));
        assert!(
            rest.starts_with(":?"),
            "{name} must be required, not defaulted: {reference}"
        );
        assert!(
            read(".env.example").contains(&format!("\n{name}=\n")),
            "{name} documented"
        );
    }
    let compose = compose();
    let db = &compose["services"]["db"]["environment"];
    for key in ["MARIADB_PASSWORD", "MARIADB_ROOT_PASSWORD"] {
        assert!(
            db[key]
                .as_str()
                .unwrap()
                .starts_with(&format!("${{{key}:?")),
            "{key}"
        );
    }
    for (name, service) in crawler_services(&compose) {
        let url = service["environment"]["DATABASE_URL"].as_str().unwrap();
        assert!(
            url.starts_with("mysql://crawler:${MARIADB_PASSWORD:?"),
            "{name}: {url}"
        );
    }
    let ignored = read(".gitignore") + &read(".dockerignore");
    assert_eq!(
        ignored.lines().filter(|l| *l == ".env").count(),
        2,
        "{ignored}"
    );
}

/// Connections of a worker: `POOL_SIZE` in crates/worker/src/run.rs.
fn worker_pool() -> u64 {
    let run_rs = std::fs::read_to_string(root().join("crates/worker/src/run.rs")).unwrap();
    let line = run_rs
        .lines()
        .find(|l| l.starts_with("const POOL_SIZE: u32 = "))
        .expect("POOL_SIZE in run.rs");
    line.trim_end_matches(';')
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The workers the compose file's comments promise room for (`--scale worker=16`).
const WORKERS_WITH_ROOM: u64 = 16;
/// The other services' pools (their `cli::with_queue`): crawler-reap 2, crawler-seed 4, two
/// crawler-report 2 each, crawler-dashboard 4.
const OTHERS: u64 = 2 + 4 + 2 * 2 + 4;

#[test]
fn mariadb_allows_the_connections_of_the_default_fleet_and_of_sixteen_workers() {
    let compose = compose();
    let db = &compose["services"]["db"];
    assert_eq!(db["image"].as_str(), Some("mariadb:11.4"));
    let max: u64 = strings(&db["command"])
        .iter()
        .find_map(|a| a.strip_prefix("--max-connections="))
        .expect("--max-connections")
        .parse()
        .unwrap();
    let replicas = compose["services"]["worker"]["deploy"]["replicas"]
        .as_u64()
        .unwrap();
    assert!(
        max >= worker_pool() * replicas + OTHERS,
        "{max} for {replicas} workers"
    );
    assert!(
        max >= worker_pool() * WORKERS_WITH_ROOM + OTHERS,
        "{max} for 16 workers"
    );
    let healthcheck = strings(&db["healthcheck"]["test"]).join(" ");
    assert_eq!(
        healthcheck,
        "CMD healthcheck.sh --connect --innodb_initialized"
    );
    for (name, service) in crawler_services(&compose) {
        let condition = &service["depends_on"]["db"]["condition"];
        assert_eq!(condition.as_str(), Some("service_healthy"), "{name}");
    }
    let published = strings(&compose["services"]["dashboard"]["ports"]);
    assert!(
        published.iter().all(|p| p.starts_with("127.0.0.1:")),
        "{published:?}"
    );
}

#[test]
fn the_image_installs_every_binary_of_its_packages_as_a_user_other_than_root() {
    let dockerfile = read("Dockerfile");
    let stages: Vec<&str> = dockerfile.split("\nFROM ").collect();
    let (build, last) = (stages[stages.len() - 2], stages[stages.len() - 1]);
    assert!(
        build.contains("-name 'crawler-*' -exec cp {} /out/"),
        "{build}"
    );
    assert!(last.starts_with("debian:bookworm-slim"), "{last}");
    assert!(
        last.contains("COPY --from=build /out/ /usr/local/bin/"),
        "{last}"
    );
    assert!(last.contains("ca-certificates"), "{last}");
    let user = last
        .lines()
        .find_map(|l| l.strip_prefix("USER "))
        .expect("USER");
    assert!(
        !["root", "0"].contains(&user.split(':').next().unwrap()),
        "{user}"
    );
    assert!(
        build.contains("CARGO_PROFILE_RELEASE_STRIP=symbols"),
        "stripped"
    );
}

#[test]
fn the_stub_sources_of_the_dependency_layer_satisfy_cargo() {
    let dir = tempfile::tempdir().unwrap();
    let dockerfile = read("Dockerfile");
    // What the Dockerfile copies before building the dependencies.
    let copied: Vec<&str> = dockerfile
        .lines()
        .take_while(|l| !l.starts_with("RUN stub-sources.sh"))
        .filter_map(|l| l.strip_prefix("COPY "))
        .flat_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words[..words.len() - 1].to_vec()
        })
        .collect();
    for file in &copied {
        let to = dir.path().join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root().join(file), &to).unwrap();
    }
    let stub = run(Command::new("sh")
        .arg(root().join("docker/stub-sources.sh"))
        .current_dir(dir.path()));
    assert!(stub.status.success(), "{}", stderr(&stub));
    // Every manifest of the workspace was copied, Cargo finds every target (a missing one
    // fails the manifest), and the lock agrees with the manifests, as `cargo build --locked`
    // will need. Offline, for this machine's platform, whose crates the build has fetched.
    let fetch = run(Command::new(env!("CARGO"))
        .args(["fetch", "--offline", "--locked", "--target", &host()])
        .current_dir(dir.path()));
    assert!(fetch.status.success(), "{}", stderr(&fetch));
}

/// The host's target triple, as rustc names it.
fn host() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = stdout(&run(Command::new(rustc).arg("-vV")));
    let host = version.lines().find_map(|l| l.strip_prefix("host: "));
    host.expect("rustc -vV names the host").to_owned()
}

/// `docker compose`, or the older `docker-compose`, if either is installed.
fn compose_command() -> Option<Vec<&'static str>> {
    let works = |argv: &[&str]| {
        Command::new(argv[0])
            .args(&argv[1..])
            .arg("version")
            .output()
            .is_ok_and(|out| out.status.success())
    };
    [vec!["docker", "compose"], vec!["docker-compose"]]
        .into_iter()
        .find(|argv| works(argv))
}

#[test]
fn docker_compose_accepts_the_file_and_refuses_it_without_the_passwords_and_the_token() {
    let compose = compose_command().unwrap_or_else(|| {
        panic!(
            "{} (it needs no daemon to check a file)",
            crawler_tests::not_installed(
                "neither `docker compose` nor `docker-compose`",
                "docker-compose"
            )
        )
    });
    // A copy in a directory of its own, so that no .env of the developer's is read.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("docker-compose.yml"),
        dir.path().join("docker-compose.yml"),
    )
    .unwrap();
    let config = |passwords: bool| {
        let mut cmd = Command::new(compose[0]);
        cmd.args(&compose[1..])
            .args(["config", "--quiet"])
            .current_dir(dir.path())
            .env_remove("MARIADB_PASSWORD")
            .env_remove("MARIADB_ROOT_PASSWORD")
            .env_remove("CRAWLER_DASHBOARD_TOKEN");
        if passwords {
            cmd.env("MARIADB_PASSWORD", "p1")
                .env("MARIADB_ROOT_PASSWORD", "p2")
                .env("CRAWLER_DASHBOARD_TOKEN", "t0123456789abcdef");
        }
        run(&mut cmd)
    };
    let valid = config(true);
    assert!(valid.status.success(), "{}", stderr(&valid));
    let refused = config(false);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("set MARIADB_PASSWORD in .env"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn the_demo_override_keeps_the_compose_file_and_swaps_only_local_images_and_timings() {
    let tool = compose_command().expect("docker compose or docker-compose");
    let mut cmd = Command::new(tool[0]);
    cmd.args(&tool[1..])
        .args(["-f", "docker-compose.yml"])
        .args(["-f", "examples/fleet-demo/docker-compose.local.yml"])
        .args(["config"])
        .current_dir(root())
        .env("MARIADB_PASSWORD", "p1")
        .env("MARIADB_ROOT_PASSWORD", "p2")
        .env("CRAWLER_DASHBOARD_TOKEN", "t0123456789abcdef");
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let merged: Value = serde_yaml::from_slice(&out.stdout).unwrap();
    let services = &merged["services"];
    assert_eq!(
        services["db"]["image"].as_str(),
        Some("crawler-local/mariadb:10.11")
    );
    assert!(services["site"].is_mapping());
    // What the file alone runs is still there: the token, the services' commands.
    for name in ["worker", "reaper", "dashboard"] {
        assert_eq!(services[name]["image"].as_str(), Some("crawler"), "{name}");
        assert_eq!(argv(&services[name]), argv(&compose()["services"][name]));
    }
    assert!(services["dashboard"]["environment"]["CRAWLER_DASHBOARD_TOKEN"].is_string());
}
