//! `crawler.toml`: what a crawl sets, in a file a CI job or a fleet keeps beside its list.
//!
//! The file is found with `--config FILE` (or `CRAWLER_CONFIG`), else `crawler.toml` in the
//! working directory, if there is one. Its keys are the binaries' long options, kebab-case
//! (`host-rate = 5`; `host_rate` too): at the top those every binary shares (`database-url`,
//! `log-format`, `include`, `exclude`, `dead-after`), and in a table per binary the others
//! (`[seed]`, `[worker]`, `[reap]`, `[report]`, `[dashboard]`). A value is a string, a number,
//! a boolean (a flag: `true` gives it, `false` leaves it out) or an array (a repeatable option);
//! `${NAME}` in a string is the environment variable `NAME`, so a secret stays out of the file.
//!
//! The file's options go before the command line's, so the command line wins; an option whose
//! environment variable is set is left to the variable (the command line, then the
//! environment, then the file, then the default). An unknown key, section or variable is an
//! error that names it and the file's line.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The file looked for in the working directory without `--config`.
pub const DEFAULT_FILE: &str = "crawler.toml";

/// The option that names the file.
pub const CONFIG: &str = "config";

/// Keys every binary takes at the top of the file (each where the binary has the option).
const SHARED: &[&str] = &[
    "database-url",
    "log-format",
    "include",
    "exclude",
    "dead-after",
];

/// The tables of the binaries.
const SECTIONS: &[&str] = &["seed", "worker", "reap", "report", "dashboard"];

/// `command` with `--config FILE` (`CRAWLER_CONFIG`), which [`with_config`] reads before clap
/// parses, so that `--help` and the man pages list it.
pub fn with_arg(command: clap::Command) -> clap::Command {
    command.arg(
        clap::Arg::new(CONFIG)
            .long(CONFIG)
            .env("CRAWLER_CONFIG")
            .value_name("FILE")
            .help(
                "Options from this TOML file: the shared ones at the top, the others under \
                 [seed], [worker], [reap], [report] or [dashboard]; ${VAR} is an environment \
                 variable. The command line and environment variables win over it. Default: \
                 crawler.toml in the working directory, if there is one",
            ),
    )
}

/// What is wrong with a config file: `FILE:LINE: what`, or `FILE: what`.
#[derive(Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `args` (the program first) with the options of the config file put after the program,
/// for `command`; `args` as they are when there is no file. `env` reads a variable.
pub fn with_config(
    command: &clap::Command,
    args: Vec<OsString>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<OsString>, ConfigError> {
    let path = match named_file(&args).or_else(|| env("CRAWLER_CONFIG").map(PathBuf::from)) {
        Some(path) => path,
        None if Path::new(DEFAULT_FILE).is_file() => PathBuf::from(DEFAULT_FILE),
        None => return Ok(args),
    };
    let name = path.display().to_string();
    let text = std::fs::read_to_string(&path)
        .map_err(|e| ConfigError(format!("cannot read the config file {name}: {e}")))?;
    let section = command
        .get_name()
        .strip_prefix("crawler-")
        .unwrap_or(command.get_name());
    let options = options_of(command, section, &name, &text, &env)?;
    let mut out = Vec::with_capacity(args.len() + options.len());
    let mut args = args.into_iter();
    out.extend(args.next());
    out.extend(options.into_iter().map(OsString::from));
    out.extend(args);
    Ok(out)
}

/// The `--config FILE` or `--config=FILE` of `args`, if any.
fn named_file(args: &[OsString]) -> Option<PathBuf> {
    let flag = format!("--{CONFIG}");
    let mut args = args.iter().skip(1);
    while let Some(arg) = args.next() {
        let arg = arg.to_string_lossy();
        if arg == flag {
            return args.next().map(PathBuf::from);
        }
        if let Some(value) = arg.strip_prefix(&format!("{flag}=")) {
            return Some(PathBuf::from(value));
        }
        if arg == "--" {
            return None;
        }
    }
    None
}

/// The command-line options the file `name` (holding `text`) gives the binary of `command`,
/// whose table is `section`.
fn options_of(
    command: &clap::Command,
    section: &str,
    name: &str,
    text: &str,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Vec<String>, ConfigError> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError(format!("{name}: not TOML: {}", e.message())))?;
    let at = |table: Option<&str>, key: &str| line_of(text, table, key);
    let mut options = Vec::new();
    for (key, value) in &table {
        if let toml::Value::Table(inner) = value {
            if !SECTIONS.contains(&key.as_str()) {
                let line = at(None, key);
                return Err(ConfigError(format!(
                    "{name}:{line}: unknown section [{key}] (known: {})",
                    SECTIONS.join(", ")
                )));
            }
            if key == section {
                for (key, value) in inner {
                    let line = at(Some(section), key);
                    let place = Place { name, line, key };
                    options.extend(option(command, &place, value, env)?);
                }
            }
            continue;
        }
        let line = at(None, key);
        let long = key.replace('_', "-");
        if !SHARED.contains(&long.as_str()) {
            return Err(ConfigError(format!(
                "{name}:{line}: unknown key {key:?} at the top (there: {}; the others go in \
                 their binary's table, such as [worker])",
                SHARED.join(", ")
            )));
        }
        if long_arg(command, &long).is_some() {
            let place = Place { name, line, key };
            options.extend(option(command, &place, value, env)?);
        }
    }
    Ok(options)
}

/// Where a key is, for its errors.
struct Place<'a> {
    name: &'a str,
    line: usize,
    key: &'a str,
}

impl Place<'_> {
    fn error(&self, what: &str) -> ConfigError {
        ConfigError(format!(
            "{}:{}: {:?}: {what}",
            self.name, self.line, self.key
        ))
    }
}

fn long_arg<'c>(command: &'c clap::Command, long: &str) -> Option<&'c clap::Arg> {
    let reserved = [CONFIG, "help", "version", "generate"];
    command
        .get_arguments()
        .find(|a| a.get_long() == Some(long) && !reserved.contains(&long))
}

/// The command-line words of one key.
fn option(
    command: &clap::Command,
    place: &Place,
    value: &toml::Value,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Vec<String>, ConfigError> {
    let long = place.key.replace('_', "-");
    let Some(arg) = long_arg(command, &long) else {
        return Err(place.error(&format!(
            "unknown key: {} has no --{long}",
            command.get_name()
        )));
    };
    if arg
        .get_env()
        .is_some_and(|var| env(&var.to_string_lossy()).is_some())
    {
        return Ok(Vec::new());
    }
    let flag = format!("--{long}");
    let takes_value = arg.get_action().takes_values();
    let values = match value {
        toml::Value::Array(items) => items.iter().collect(),
        single => vec![single],
    };
    let mut words = Vec::new();
    for value in values {
        match (value, takes_value) {
            (toml::Value::Boolean(true), false) => words.push(flag.clone()),
            (toml::Value::Boolean(false), false) => {}
            (toml::Value::Boolean(_), true) => {
                return Err(place.error("takes a value, not true or false"))
            }
            (_, false) => return Err(place.error("is a flag: true or false")),
            (toml::Value::String(text), true) => {
                words.push(flag.clone());
                words.push(expand(text, place, env)?);
            }
            (toml::Value::Integer(n), true) => words.extend([flag.clone(), n.to_string()]),
            (toml::Value::Float(x), true) => words.extend([flag.clone(), x.to_string()]),
            (_, true) => {
                return Err(place.error("a string, a number, a boolean or an array of them"))
            }
        }
    }
    Ok(words)
}

/// `text` with each `${NAME}` replaced by the environment variable `NAME`.
fn expand(
    text: &str,
    place: &Place,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<String, ConfigError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| place.error("a ${ without its }"))?;
        let var = &after[..end];
        let value = env(var)
            .ok_or_else(|| place.error(&format!("the environment variable {var} is not set")))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The line (from 1) of `key` in `table` (none: the top) of `text`, or 1 when not found.
fn line_of(text: &str, table: Option<&str>, key: &str) -> usize {
    let mut current: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if table.is_none() && name.trim() == key {
                return i + 1;
            }
            current = Some(name.trim().to_owned());
            continue;
        }
        let name = line
            .split('=')
            .next()
            .unwrap_or_default()
            .trim()
            .trim_matches('"');
        if name == key && current.as_deref() == table && line.contains('=') {
            return i + 1;
        }
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction, Command};

    fn worker() -> Command {
        Command::new("crawler-worker")
            .arg(
                Arg::new("database_url")
                    .long("database-url")
                    .env("DATABASE_URL"),
            )
            .arg(Arg::new("host_rate").long("host-rate"))
            .arg(Arg::new("drain").long("drain").action(ArgAction::SetTrue))
            .arg(
                Arg::new("host_header")
                    .long("host-header")
                    .action(ArgAction::Append),
            )
    }

    fn options(text: &str, env: &[(&str, &str)]) -> Result<Vec<String>, ConfigError> {
        let env = |name: &str| {
            env.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        };
        options_of(&worker(), "worker", "crawler.toml", text, &env)
    }

    /// In key order (a TOML table's): options do not depend on their order.
    #[test]
    fn keys_become_options_of_their_binary() {
        let text = "database-url = \"sqlite://a.db\"\n\
                    [seed]\nfragments = true\n\
                    [worker]\nhost_rate = 5\ndrain = true\n\
                    host-header = [\"api.example=Authorization: Bearer ${TOKEN}\"]\n";
        assert_eq!(
            options(text, &[("TOKEN", "s3cret")]).unwrap(),
            [
                "--database-url",
                "sqlite://a.db",
                "--drain",
                "--host-header",
                "api.example=Authorization: Bearer s3cret",
                "--host-rate",
                "5"
            ]
        );
    }

    #[test]
    fn a_set_environment_variable_wins_over_the_file() {
        let text = "database-url = \"sqlite://a.db\"\n";
        assert!(options(text, &[("DATABASE_URL", "x")]).unwrap().is_empty());
    }

    #[test]
    fn unknown_keys_sections_and_variables_are_named_with_their_line() {
        let cases = [
            (
                "[worker]\ndrain = true\nhost-rat = 5\n",
                "crawler.toml:3: \"host-rat\": unknown key: crawler-worker has no --host-rat",
            ),
            (
                "\n[wroker]\ndrain = true\n",
                "crawler.toml:2: unknown section [wroker]",
            ),
            (
                "host-rate = 5\n",
                "crawler.toml:1: unknown key \"host-rate\" at the top",
            ),
            (
                "[worker]\n\nhost-rate = \"${NOPE}\"\n",
                "crawler.toml:3: \"host-rate\": the environment variable NOPE is not set",
            ),
            (
                "[worker]\ndrain = 1\n",
                "crawler.toml:2: \"drain\": is a flag",
            ),
        ];
        for (text, expected) in cases {
            let error = options(text, &[]).unwrap_err().0;
            assert!(error.starts_with(expected), "{text:?}: {error}");
        }
        assert!(options("[worker", &[])
            .unwrap_err()
            .0
            .starts_with("crawler.toml: not TOML"));
    }

    #[test]
    fn the_file_is_named_by_config_or_found_in_the_working_directory() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            named_file(&args(&["w", "--drain", "--config", "c.toml"])),
            Some("c.toml".into())
        );
        assert_eq!(
            named_file(&args(&["w", "--config=c.toml"])),
            Some("c.toml".into())
        );
        assert_eq!(named_file(&args(&["w", "--", "--config", "x"])), None);
        let dir = std::env::temp_dir().join(format!("crawler-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(&file, "[worker]\ndrain = true\n").unwrap();
        let with = with_config(
            &worker(),
            args(&["w", "--config", file.to_str().unwrap(), "--host-rate", "2"]),
            |_| None,
        )
        .unwrap();
        let with: Vec<String> = with
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(with[..2], ["w", "--drain"]);
        assert_eq!(with.last().unwrap(), "2");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
