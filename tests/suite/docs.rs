//! The documentation stays true: every relative link and every repository path written in
//! `README.md` and `docs/*.md` exists, the README stays short, and every `--flag` a code block
//! gives one of the five binaries is one that binary's `--help` lists. Each failure names the
//! file, the line and what is missing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crawler_tests::bins::{command, run, stdout};

/// Issue 26: the README is a map; the rest lives in docs/.
const README_MAX_LINES: usize = 250;

/// A path in backticks is checked when it starts with one of these.
const TOP_DIRS: [&str; 7] = [
    "crates/",
    "tests/",
    "docs/",
    "migrations/",
    "examples/",
    "docker/",
    ".ci/",
];

const BINARIES: [&str; 5] = [
    "crawler-seed",
    "crawler-worker",
    "crawler-reap",
    "crawler-report",
    "crawler-dashboard",
];

/// A Markdown page of the repository.
struct Page {
    /// The path from the repository's root, as a failure names it.
    name: String,
    text: String,
}

impl Page {
    fn read(repo: &Path, name: &str) -> Page {
        let text = std::fs::read_to_string(repo.join(name))
            .unwrap_or_else(|e| panic!("cannot read {name}: {e}"));
        Page {
            name: name.to_owned(),
            text,
        }
    }

    /// The directory its relative links start from.
    fn dir(&self) -> &Path {
        Path::new(&self.name).parent().unwrap_or(Path::new(""))
    }

    /// Its lines, numbered from 1, each with whether it is inside a fenced code block (the
    /// fences themselves count as inside).
    fn lines(&self) -> Vec<(usize, &str, bool)> {
        let mut fenced = false;
        let mut lines = Vec::new();
        for (i, line) in self.text.lines().enumerate() {
            let fence =
                line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
            if fence {
                fenced = !fenced;
            }
            lines.push((i + 1, line, fenced || fence));
        }
        lines
    }

    /// Its text outside fenced code blocks, a code line left empty so that line numbers hold.
    fn prose(&self) -> String {
        let kept: Vec<&str> = self
            .lines()
            .into_iter()
            .map(|(_, line, code)| if code { "" } else { line })
            .collect();
        kept.join("\n")
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the repository")
        .to_path_buf()
}

/// README.md and every docs/*.md, in name order.
fn pages(repo: &Path) -> Vec<Page> {
    let mut names = vec!["README.md".to_owned()];
    let mut docs: Vec<String> = std::fs::read_dir(repo.join("docs"))
        .expect("read docs/")
        .map(|entry| entry.expect("a docs/ entry").file_name())
        .filter_map(|name| name.into_string().ok())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    names.extend(docs);
    names.iter().map(|name| Page::read(repo, name)).collect()
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// The targets of Markdown links `[text](target)` in `prose`, with their lines.
fn links(prose: &str) -> Vec<(usize, &str)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = prose[from..].find("](") {
        let start = from + at + 2;
        let Some(len) = prose[start..].find(')') else {
            break;
        };
        let target = prose[start..start + len].split_whitespace().next();
        if let Some(target) = target {
            found.push((line_of(prose, start), target));
        }
        from = start + len;
    }
    found
}

/// The inline code spans of `prose`, with the line each starts on; a span may run over a
/// line break.
fn code_spans(prose: &str) -> Vec<(usize, &str)> {
    let ticks: Vec<usize> = prose.match_indices('`').map(|(i, _)| i).collect();
    ticks
        .chunks_exact(2)
        .map(|pair| (line_of(prose, pair[0]), &prose[pair[0] + 1..pair[1]]))
        .collect()
}

/// `a/{b,c}/d` as `a/b/d` and `a/c/d`; a path without braces as itself.
fn expand_braces(path: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (path.find('{'), path.find('}')) else {
        return vec![path.to_owned()];
    };
    let (head, tail) = (&path[..open], &path[close + 1..]);
    path[open + 1..close]
        .split(',')
        .flat_map(|choice| expand_braces(&format!("{head}{choice}{tail}")))
        .collect()
}

/// The repository path a code span names, if it is one: no spaces, starting with a known
/// top-level directory; a `:LINE` after it is dropped, and a glob is checked up to its
/// directory.
fn repository_path(span: &str) -> Option<&str> {
    if span.contains(char::is_whitespace) || !TOP_DIRS.iter().any(|dir| span.starts_with(dir)) {
        return None;
    }
    let path = span.split(':').next().unwrap_or(span);
    Some(match path.find('*') {
        Some(star) => &path[..=path[..star].rfind('/').unwrap_or(0)],
        None => path,
    })
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of the headings of a Markdown text.
fn anchors(page: &Page) -> BTreeSet<String> {
    page.lines()
        .into_iter()
        .filter(|(_, line, code)| !code && line.starts_with('#'))
        .map(|(_, line, _)| slug(line.trim_start_matches('#')))
        .collect()
}

/// What is wrong with a relative link `target` of `page`: a file that is not there, or an
/// anchor that no heading of the Markdown file makes.
fn broken_link(repo: &Path, page: &Page, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        repo.join(&page.name)
    } else {
        repo.join(page.dir()).join(path)
    };
    if !file.exists() {
        return Some(format!(
            "link to `{target}`: {} does not exist",
            file.display()
        ));
    }
    let anchor = anchor.filter(|_| file.extension().is_some_and(|e| e == "md"))?;
    let name = file.strip_prefix(repo).ok()?.to_str()?.to_owned();
    let linked = Page::read(repo, &name);
    (!anchors(&linked).contains(anchor))
        .then(|| format!("link to `{target}`: {name} has no heading with the anchor #{anchor}"))
}

#[test]
fn every_link_and_repository_path_in_the_docs_exists() {
    let repo = repo();
    let mut problems = Vec::new();
    for page in pages(&repo) {
        let prose = page.prose();
        for (line, target) in links(&prose) {
            if let Some(problem) = broken_link(&repo, &page, target) {
                problems.push(format!("{}:{line}: {problem}", page.name));
            }
        }
        for (line, span) in code_spans(&prose) {
            let Some(path) = repository_path(span) else {
                continue;
            };
            for path in expand_braces(path) {
                if !repo.join(&path).exists() {
                    problems.push(format!("{}:{line}: `{path}` does not exist", page.name));
                }
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn readme_is_at_most_250_lines() {
    let readme = Page::read(&repo(), "README.md");
    let lines = readme.text.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md:{lines}: the README has {lines} lines, more than {README_MAX_LINES}: move \
         the detail to docs/"
    );
}

/// The binary a code line runs at byte `at`, if a word of it starts there: not part of a longer
/// name, and not a package name (`-p crawler-worker`).
fn binary_at(line: &str, at: usize) -> Option<&'static str> {
    let before = line[..at].chars().next_back();
    if before.is_some_and(|c| !(c.is_whitespace() || c == '/' || c == '"' || c == '(')) {
        return None;
    }
    let previous = line[..at].split_whitespace().next_back();
    if matches!(previous, Some("-p" | "--package" | "--bin")) {
        return None;
    }
    BINARIES.into_iter().find(|bin| {
        line[at..]
            .strip_prefix(bin)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
    })
}

/// The long options given to each binary a shell line runs: `(binary, --flag)`, in order. A
/// command's words end at a pipe, a redirection, `;`, `&`, a comment, or the next binary.
fn flags_in(line: &str) -> Vec<(&'static str, String)> {
    let mut found = Vec::new();
    for (at, _) in line.match_indices("crawler-") {
        let Some(bin) = binary_at(line, at) else {
            continue;
        };
        for word in line[at + bin.len()..].split_whitespace() {
            let ends = word.starts_with(['|', ';', '&', '#', '>', '<'])
                || word.contains('>')
                || BINARIES.contains(&word);
            if ends {
                break;
            }
            if let Some(name) = word.strip_prefix("--") {
                let name: String = name
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                if !name.is_empty() {
                    found.push((bin, format!("--{name}")));
                }
            }
        }
    }
    found
}

/// The long options `bin --help` lists.
fn help_flags(bin: &str) -> BTreeSet<String> {
    let output = run(command(bin, "sqlite://unused.db").arg("--help"));
    assert!(output.status.success(), "{bin} --help failed");
    let help = stdout(&output);
    help.match_indices("--")
        .map(|(at, _)| {
            let name: String = help[at + 2..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            format!("--{name}")
        })
        .filter(|flag| flag.len() > 2)
        .collect()
}

#[test]
fn every_flag_in_the_docs_code_blocks_is_one_the_binary_accepts() {
    let repo = repo();
    let mut known: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut checked = 0;
    for page in pages(&repo) {
        for (number, line, code) in page.lines() {
            if !code {
                continue;
            }
            for (bin, flag) in flags_in(line) {
                checked += 1;
                let flags = known.entry(bin).or_insert_with(|| help_flags(bin));
                if !flags.contains(&flag) {
                    problems.push(format!(
                        "{}:{number}: `{bin} {flag}`: {bin} --help has no {flag}",
                        page.name
                    ));
                }
            }
        }
    }
    assert!(
        checked > 10,
        "only {checked} flags found: is the parser broken?"
    );
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn flags_are_read_per_command_and_package_names_are_not_commands() {
    let line = "crawler-seed a.txt --recheck | crawler-report --dead --format=csv > x # --no";
    assert_eq!(
        flags_in(line),
        [
            ("crawler-seed", "--recheck".to_owned()),
            ("crawler-report", "--dead".to_owned()),
            ("crawler-report", "--format".to_owned()),
        ]
    );
    assert!(flags_in("cargo bench -p crawler-worker --bench check").is_empty());
    assert!(flags_in("target/release/crawler-worker --drain")
        .contains(&("crawler-worker", "--drain".to_owned())));
}

#[test]
fn paths_links_and_anchors_are_read_as_github_shows_them() {
    assert_eq!(
        expand_braces("migrations/{mysql,postgres}/"),
        ["migrations/mysql/", "migrations/postgres/"]
    );
    assert_eq!(
        repository_path("tests/suite/faults.rs:12"),
        Some("tests/suite/faults.rs")
    );
    assert_eq!(repository_path("docs/*.md"), Some("docs/"));
    assert_eq!(repository_path("crawler-report --dead"), None);
    assert_eq!(repository_path("/docs/x.html"), None);
    assert_eq!(slug(" Retries, and the tail"), "retries-and-the-tail");
    let prose = "see [a](docs/a.md#x) and\n`crates/queue/\nsrc/sql.rs` [b](b.md)";
    assert_eq!(links(prose), [(1, "docs/a.md#x"), (3, "b.md")]);
    assert_eq!(code_spans(prose), [(2, "crates/queue/\nsrc/sql.rs")]);
}
