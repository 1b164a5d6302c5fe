//! Which files `--links-in` reads. A file named is read whatever its name. A folder is walked
//! (recursively, in name order), and a glob pattern (`'docs/**/*.md'`, quoted so the shell
//! leaves it) walks the folder it starts with and keeps what it matches (`*` within a folder,
//! `**` across folders); both read only the kinds of files known (HTML: `.html`, `.htm`,
//! `.xhtml`; Markdown: `.md`, `.markdown`, `.mdown`, `.mkd`, `.mkdn`; more with
//! `--links-in-ext`) and skip, as ripgrep does (its walker, the `ignore` crate), what
//! `.gitignore`, `.ignore` and `.git/info/exclude` ignore, in a git repository or not, and hidden
//! files (`--links-in-no-ignore`, `--links-in-hidden`). `.git` itself is never read, nor the
//! user's global gitignore (a CI machine has none: the same files are read everywhere).

use std::collections::HashSet;
use std::path::Path;
use std::str::FromStr;

use crate::error::Error;

/// How a file's links are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    Html,
    Markdown,
}

const MARKDOWN: &[&str] = &["md", "markdown", "mdown", "mkd", "mkdn"];
const HTML: &[&str] = &["html", "htm", "xhtml"];

/// `--links-in-ext EXT[=KIND]`: files ending in `.EXT` are read too, as `KIND` (Markdown unless
/// it says `html`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extension {
    name: String,
    kind: Kind,
}

impl FromStr for Extension {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (name, kind) = match text.split_once('=') {
            Some((name, kind)) => (name, clap::ValueEnum::from_str(kind, true).ok()),
            None => (text, Some(Kind::Markdown)),
        };
        let name = name.strip_prefix('.').unwrap_or(name);
        let plain = !name.is_empty() && !name.contains(['/', '\\', '*', '?', '[', '{']);
        match kind {
            Some(kind) if plain => Ok(Extension {
                name: name.to_ascii_lowercase(),
                kind,
            }),
            _ => Err(format!(
                "{text}: an extension, read as markdown (txt) or as a kind (njk=html, \
                 mdx=markdown)"
            )),
        }
    }
}

/// How folders and globs are walked.
#[derive(Clone, Debug, Default)]
pub struct Walking {
    /// Read hidden files and folders too (`--links-in-hidden`).
    pub hidden: bool,
    /// Read what ignore files ignore too (`--links-in-no-ignore`).
    pub no_ignore: bool,
    /// More extensions read (`--links-in-ext`).
    pub extensions: Vec<Extension>,
}

/// A file to read: its name as the reports show it (the path as given or walked, without a
/// leading `./`), and how to read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct File {
    pub name: String,
    pub kind: Kind,
}

/// What the sources name: the files to read, in order, each once, and the sources (or parts
/// of them) that could not be walked.
#[derive(Debug, Default)]
pub struct Files {
    pub files: Vec<File>,
    pub problems: Vec<(String, Error)>,
}

impl Walking {
    /// The files of `sources` (files, folders, glob patterns). Blocking: it reads folders.
    pub fn files(&self, sources: &[String]) -> Files {
        let mut out = Files::default();
        let mut seen = HashSet::new();
        for source in sources {
            let path = Path::new(source);
            let problems = out.problems.len();
            let files = match (path.is_dir(), path.exists() || !is_glob(source)) {
                (true, _) => self.walk(path, None, &mut out.problems),
                // A file, or one that will fail to open and be named then.
                (false, true) => vec![File {
                    name: shown(path),
                    kind: kind_of(path, &self.extensions).unwrap_or(Kind::Html),
                }],
                (false, false) => self.glob(source, &mut out.problems),
            };
            if files.is_empty() && out.problems.len() == problems {
                let error = Error::NoFiles {
                    path: source.clone(),
                };
                out.problems.push((source.clone(), error));
            }
            let new = files.into_iter().filter(|f| seen.insert(f.name.clone()));
            out.files.extend(new);
        }
        out
    }

    /// The files `pattern` matches, from the folder it starts with.
    fn glob(&self, pattern: &str, problems: &mut Vec<(String, Error)>) -> Vec<File> {
        let pattern = without_dot(pattern);
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build();
        let matcher = match glob {
            Ok(glob) => glob.compile_matcher(),
            Err(source) => {
                let pattern = pattern.to_owned();
                problems.push((pattern.clone(), Error::Glob { pattern, source }));
                return Vec::new();
            }
        };
        let base: Vec<&str> = pattern
            .split('/')
            .take_while(|part| !is_glob(part))
            .collect();
        let root = match base.join("/") {
            root if root.is_empty() => ".".to_owned(),
            root => root,
        };
        if let Err(source) = std::fs::metadata(&root) {
            let path = pattern.to_owned();
            problems.push((path.clone(), Error::Open { path, source }));
            return Vec::new();
        }
        self.walk(Path::new(&root), Some(&matcher), problems)
    }

    /// The files of the known kinds under `root` (that `matcher` matches, if any), in name
    /// order; what cannot be read of it goes to `problems`, and the rest is walked.
    fn walk(
        &self,
        root: &Path,
        matcher: Option<&globset::GlobMatcher>,
        problems: &mut Vec<(String, Error)>,
    ) -> Vec<File> {
        let mut files = Vec::new();
        let walk = ignore::WalkBuilder::new(root)
            .standard_filters(!self.no_ignore)
            .hidden(!self.hidden)
            .git_global(false)
            .require_git(false)
            .filter_entry(|entry| entry.file_name() != ".git")
            .sort_by_file_name(|a, b| a.cmp(b))
            .build();
        for entry in walk {
            let entry = match entry {
                Ok(entry) => entry,
                Err(error) => {
                    let (path, source) = unwrap_path(error);
                    let path = shown(path.as_deref().unwrap_or(root));
                    problems.push((path.clone(), Error::Walk { path, source }));
                    continue;
                }
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let name = shown(entry.path());
            let kind = kind_of(entry.path(), &self.extensions);
            match kind {
                Some(kind) if matcher.is_none_or(|m| m.is_match(&name)) => {
                    files.push(File { name, kind })
                }
                _ => {}
            }
        }
        files
    }
}

/// How a file is read, by its extension (any case); `None` if it is of no known kind.
fn kind_of(path: &Path, extensions: &[Extension]) -> Option<Kind> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let ext = ext.as_str();
    if MARKDOWN.contains(&ext) {
        return Some(Kind::Markdown);
    }
    if HTML.contains(&ext) {
        return Some(Kind::Html);
    }
    extensions.iter().find(|e| e.name == ext).map(|e| e.kind)
}

/// Whether `text` has glob syntax.
fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

/// `path` as the reports show it: without `.` components (`./docs/a.md` is `docs/a.md`).
fn shown(path: &Path) -> String {
    let here = std::path::Component::CurDir;
    let path: std::path::PathBuf = path.components().filter(|c| *c != here).collect();
    path.to_string_lossy().into_owned()
}

fn without_dot(mut text: &str) -> &str {
    while let Some(rest) = text.strip_prefix("./") {
        text = rest.trim_start_matches('/');
    }
    text
}

/// The path a walk's error is about, if it says, and the error without it (the report names
/// the path once).
fn unwrap_path(error: ignore::Error) -> (Option<std::path::PathBuf>, ignore::Error) {
    match error {
        ignore::Error::WithPath { path, err } => (Some(path), unwrap_path(*err).1),
        ignore::Error::WithDepth { err, .. } => unwrap_path(*err),
        error => (None, error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extension_is_read_as_markdown_unless_it_says_html() {
        let ext = |text: &str| text.parse::<Extension>().map(|e| (e.name, e.kind));
        assert_eq!(ext("txt"), Ok(("txt".into(), Kind::Markdown)));
        assert_eq!(ext(".NJK=html"), Ok(("njk".into(), Kind::Html)));
        assert_eq!(ext("mdx=Markdown"), Ok(("mdx".into(), Kind::Markdown)));
        for bad in ["", "=html", "njk=pdf", "*.txt", "a/b"] {
            assert!(ext(bad).unwrap_err().starts_with(bad), "{bad}");
        }
    }

    #[test]
    fn files_are_read_by_their_extension_in_any_case() {
        let extra = vec!["txt".parse::<Extension>().unwrap()];
        let kind = |name: &str| kind_of(Path::new(name), &extra);
        assert_eq!(kind("a/README.MD"), Some(Kind::Markdown));
        assert_eq!(kind("index.htm"), Some(Kind::Html));
        assert_eq!(kind("notes.txt"), Some(Kind::Markdown));
        assert_eq!(kind("logo.png"), None);
        assert_eq!(kind("Makefile"), None);
    }

    #[test]
    fn paths_are_shown_without_a_leading_dot() {
        assert_eq!(shown(Path::new("./docs/a.md")), "docs/a.md");
        assert_eq!(shown(Path::new(".//./a.md")), "a.md");
        assert_eq!(shown(Path::new("/repo/./docs/a.md")), "/repo/docs/a.md");
        assert_eq!(shown(Path::new("/abs/a.md")), "/abs/a.md");
        assert_eq!(shown(Path::new(".hidden/a.md")), ".hidden/a.md");
    }

    /// A tree with every kind of file a walk reads or skips, made under a fresh folder.
    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in [
            "README.md",
            "docs/guide.MD",
            "docs/api/index.html",
            "docs/api/logo.png",
            "docs/notes.txt",
            "docs/draft.md",
            "docs/local.md",
            "build/out.html",
            ".github/pr.md",
            ".git/info/exclude",
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        std::fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
        std::fs::write(dir.path().join("docs/.ignore"), "draft.md\n").unwrap();
        std::fs::write(dir.path().join(".git/info/exclude"), "local.md\n").unwrap();
        dir
    }

    fn names(walking: &Walking, root: &Path, sources: &[&str]) -> Vec<String> {
        let sources: Vec<String> = sources
            .iter()
            .map(|s| format!("{}/{s}", root.display()))
            .collect();
        let found = walking.files(&sources);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
        let prefix = format!("{}/", root.display());
        let shown = found.files.into_iter();
        shown.map(|f| f.name.replace(&prefix, "")).collect()
    }

    #[test]
    fn a_walk_skips_ignored_and_hidden_files_and_unknown_kinds() {
        let dir = tree();
        let root = dir.path();
        let plain = Walking::default();
        assert_eq!(
            names(&plain, root, &["."]),
            ["README.md", "docs/api/index.html", "docs/guide.MD"]
        );
        let all = Walking {
            hidden: true,
            no_ignore: true,
            extensions: vec!["txt".parse().unwrap()],
        };
        assert_eq!(
            names(&all, root, &["."]),
            [
                ".github/pr.md",
                "README.md",
                "build/out.html",
                "docs/api/index.html",
                "docs/draft.md",
                "docs/guide.MD",
                "docs/local.md",
                "docs/notes.txt",
            ]
        );
    }

    #[test]
    fn a_glob_walks_its_folder_and_a_file_named_is_read_whatever_it_is() {
        let dir = tree();
        let root = dir.path();
        let plain = Walking::default();
        // `*` stays within a folder, and a glob reads only the kinds known.
        assert_eq!(names(&plain, root, &["docs/*"]), ["docs/guide.MD"]);
        assert_eq!(
            names(&plain, root, &["**/*.html", "docs/notes.txt", "README.md"]),
            ["docs/api/index.html", "docs/notes.txt", "README.md"]
        );
        let found = plain.files(&[format!("{}/docs/*.pdf", root.display())]);
        assert!(found.files.is_empty());
        let problem = found.problems[0].1.to_string();
        assert!(problem.starts_with("no file to read in "), "{problem}");
    }
}
