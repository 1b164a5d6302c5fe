//! The formats a report is written in (`--format`).

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Sites: one a line, URL, then status code or error kind, then verdict. Hosts: aligned
    /// columns under a header.
    Text,
    Csv,
    /// One array of objects.
    Json,
    /// One object per line.
    Ndjson,
    /// Sites: a table (URL, verdict, status, reason, found on, archived copy), to paste into
    /// an issue or a pull request; the summary: a short list. Hosts and pages: a table of the
    /// CSV columns.
    Markdown,
    /// JUnit XML for CI test reporters: a test case per site (classname its host), failing
    /// when it is not alive. Sites only.
    Junit,
    /// GitHub Actions workflow commands: an annotation per failing link and place in a file
    /// (`::error file=…,line=…,col=…`), an error if --fail-on counts it (by default dead links
    /// and missing fragments), else a warning. Sites only.
    Github,
    /// SARIF 2.1.0 for code scanning (GitHub's upload-sarif): a rule per kind of failure, a
    /// result per failing link and place, with its line and column in a file. Sites only.
    Sarif,
}
