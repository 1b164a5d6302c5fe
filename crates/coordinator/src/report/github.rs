//! `--format github`: GitHub Actions workflow commands, which GitHub shows as annotations on a
//! pull request's lines. A failing link found in a file (`--links-in`) is one command per place,
//! `::error file=F,line=L,col=C,title=T::MESSAGE`; a failing link of a list or a crawl, found in
//! no file, is one plain `::error::MESSAGE`. What `--fail-on` counts is an `error`, any other
//! failing verdict a `warning` (with no `--fail-on`, dead links and missing fragments are the
//! errors). Escaped as the Actions toolkit escapes (`toCommandValue`, `escapeData`,
//! `escapeProperty`): `%`, CR and LF in the message, and `:` and `,` too in a property.
//!
//! Also the model both annotation formats (this and `sarif`) share: a failing link
//! ([`Finding`]), its kind of failure ([`Problem`]), and whether it fails the run ([`Level`]).

use std::borrow::Cow;
use std::io::Write;

use crawler_queue::referrers::InFile;
use crawler_queue::{Only, Verdict};

use super::fail_on::FailOn;

/// A link that failed, as a site row of the report holds it.
pub(super) struct Finding<'a> {
    pub url: &'a str,
    pub verdict: Verdict,
    pub status: Option<u16>,
    /// Why, in a few words (`HTTP 404`, `dns`, what a soft 404 matched); may be empty.
    pub reason: String,
    /// A link to a section its page, alive, does not have.
    pub missing_fragment: bool,
    /// Alive through a permanent redirect: the link should name where it went.
    pub moved: bool,
    /// Dead, and confirmed dead by `crawler-worker --confirm`.
    pub confirmed: bool,
    /// Where it was found: places in files (`FILE:LINE:COL`), pages, sitemaps.
    pub found_on: &'a [Cow<'a, str>],
    /// How many places it was found at, kept in `found_on` or not.
    pub found_count: i32,
}

/// What is wrong with a link: a rule of its own in SARIF, a title in GitHub.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Problem {
    Dead,
    MissingFragment,
    Blocked,
    Unreachable,
    Error,
    Moved,
}

/// Whether a finding fails the run (`--fail-on` counts it) or only warns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Level {
    Error,
    Warning,
}

impl Problem {
    /// Every kind, in the order of SARIF's rules.
    pub const ALL: [Problem; 6] = [
        Problem::Dead,
        Problem::MissingFragment,
        Problem::Blocked,
        Problem::Unreachable,
        Problem::Error,
        Problem::Moved,
    ];

    /// Its name in SARIF (`ruleId`).
    pub fn id(self) -> &'static str {
        match self {
            Problem::Dead => "dead",
            Problem::MissingFragment => "missing-fragment",
            Problem::Blocked => "blocked",
            Problem::Unreachable => "unreachable",
            Problem::Error => "error",
            Problem::Moved => "moved",
        }
    }

    /// A title, for an annotation or a rule.
    pub fn title(self) -> &'static str {
        match self {
            Problem::Dead => "Dead link",
            Problem::MissingFragment => "Missing fragment",
            Problem::Blocked => "Blocked link",
            Problem::Unreachable => "Unreachable link",
            Problem::Error => "Link error",
            Problem::Moved => "Moved link",
        }
    }
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
        }
    }
}

/// What fails the run when no `--fail-on` says: what the README's CI job fails on.
const FAILING_BY_DEFAULT: [FailOn; 2] = [FailOn::Dead, FailOn::MissingFragment];

impl Finding<'_> {
    /// What is wrong with it; `None` for a link that is fine (alive, its section there) or was
    /// left out (`excluded`).
    pub fn problem(&self) -> Option<Problem> {
        match self.verdict {
            Verdict::Alive if self.missing_fragment => Some(Problem::MissingFragment),
            Verdict::Alive if self.moved => Some(Problem::Moved),
            Verdict::Alive | Verdict::Excluded => None,
            Verdict::Dead => Some(Problem::Dead),
            Verdict::Blocked => Some(Problem::Blocked),
            Verdict::Unreachable => Some(Problem::Unreachable),
            Verdict::Error => Some(Problem::Error),
        }
    }

    /// An error if one of `fail_on` counts it (as `--fail-on` does for the exit code), else a
    /// warning; with no `fail_on`, dead links and missing fragments are errors.
    pub fn level(&self, fail_on: &[FailOn]) -> Level {
        let fail_on = match fail_on.is_empty() {
            true => &FAILING_BY_DEFAULT[..],
            false => fail_on,
        };
        let counted = |f: &FailOn| {
            f.verdicts().contains(&self.verdict)
                && match f.only() {
                    Only::All => true,
                    Only::Confirmed => self.confirmed,
                    Only::MissingFragments => self.missing_fragment,
                    Only::Moved => self.moved,
                }
        };
        match fail_on.iter().any(counted) {
            true => Level::Error,
            false => Level::Warning,
        }
    }

    /// The URL and what is wrong with it: `URL: dead (HTTP 404)`, `URL: fragment missing`.
    pub fn message(&self) -> String {
        let mut message = match self.missing_fragment {
            true => format!("{}: fragment missing (its page is alive)", self.url),
            false => format!("{}: {}", self.url, self.verdict),
        };
        if !self.missing_fragment && !self.reason.is_empty() {
            message += &format!(" ({})", self.reason);
        }
        if self.confirmed {
            message += ", confirmed";
        }
        message
    }

    /// The places in files it was found at, in the order found.
    pub fn places(&self) -> impl Iterator<Item = InFile<'_>> {
        self.found_on.iter().filter_map(|r| InFile::parse(r))
    }

    /// Where it was found when that is no file: `found on PAGE (and N more)`.
    pub fn elsewhere(&self) -> Option<String> {
        let first = self.found_on.first()?;
        Some(match self.found_count {
            n if n > 1 => format!("found on {first} (and {} more)", n - 1),
            _ => format!("found on {first}"),
        })
    }
}

/// Writes `finding`'s workflow commands: one per place in a file, or one plain command if it
/// was found in none. Returns how many.
pub(super) fn write(
    out: &mut impl Write,
    finding: &Finding<'_>,
    fail_on: &[FailOn],
) -> std::io::Result<u64> {
    let Some(problem) = finding.problem() else {
        return Ok(0);
    };
    let level = finding.level(fail_on).as_str();
    let message = escape_data(&finding.message());
    let mut written = 0;
    for place in finding.places() {
        write!(out, "::{level} file={}", escape_property(place.file))?;
        write!(out, ",line={}", place.line)?;
        if let Some(col) = place.col {
            write!(out, ",col={col}")?;
        }
        let title = escape_property(problem.title());
        writeln!(out, ",title={title}::{message}")?;
        written += 1;
    }
    if written == 0 {
        let message = match finding.elsewhere() {
            Some(found) => format!("{message}, {}", escape_data(&found)),
            None => message,
        };
        writeln!(out, "::{level}::{message}")?;
        written = 1;
    }
    Ok(written)
}

/// A command's message, escaped: `%`, CR and LF.
pub(super) fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A command's property value, escaped: as a message, and `:` and `,`.
pub(super) fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A dead link found at `found_on`.
    pub(crate) fn dead<'a>(found_on: &'a [Cow<'a, str>]) -> Finding<'a> {
        Finding {
            url: "https://a.example/x?a=1%20b",
            verdict: Verdict::Dead,
            status: Some(404),
            reason: "HTTP 404".into(),
            missing_fragment: false,
            moved: false,
            confirmed: false,
            found_on,
            found_count: found_on.len() as i32,
        }
    }

    fn written(finding: &Finding<'_>, fail_on: &[FailOn]) -> String {
        let mut out = Vec::new();
        write(&mut out, finding, fail_on).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_link_in_files_is_a_command_per_place_escaped() {
        let found_on = [
            Cow::from("docs/a,b:c.md:3:14"),
            Cow::from("https://a.example/page"),
            Cow::from("README.md:7"),
        ];
        assert_eq!(
            written(&dead(&found_on), &[]),
            "::error file=docs/a%2Cb%3Ac.md,line=3,col=14,title=Dead link::\
             https://a.example/x?a=1%2520b: dead (HTTP 404)\n\
             ::error file=README.md,line=7,title=Dead link::\
             https://a.example/x?a=1%2520b: dead (HTTP 404)\n"
        );
    }

    #[test]
    fn a_link_in_no_file_is_one_plain_command() {
        let found_on = [Cow::from("https://a.example/page")];
        let finding = Finding {
            found_count: 3,
            ..dead(&found_on)
        };
        assert_eq!(
            written(&finding, &[]),
            "::error::https://a.example/x?a=1%2520b: dead (HTTP 404), \
             found on https://a.example/page (and 2 more)\n"
        );
        assert_eq!(
            written(&dead(&[]), &[]),
            "::error::https://a.example/x?a=1%2520b: dead (HTTP 404)\n"
        );
    }

    #[test]
    fn what_fail_on_counts_is_an_error_and_the_rest_a_warning() {
        let blocked = Finding {
            verdict: Verdict::Blocked,
            ..dead(&[])
        };
        let missing = Finding {
            verdict: Verdict::Alive,
            missing_fragment: true,
            ..dead(&[])
        };
        let confirmed = Finding {
            confirmed: true,
            ..dead(&[])
        };
        let levels = |fail_on: &[FailOn]| {
            [&dead(&[]), &blocked, &missing, &confirmed].map(|f| f.level(fail_on))
        };
        use Level::{Error as E, Warning as W};
        assert_eq!(levels(&[]), [E, W, E, E]);
        assert_eq!(levels(&[FailOn::Dead]), [E, W, W, E]);
        assert_eq!(levels(&[FailOn::NotAlive]), [E, E, W, E]);
        assert_eq!(levels(&[FailOn::ConfirmedDead]), [W, W, W, E]);
        assert_eq!(levels(&[FailOn::MissingFragment]), [W, W, E, W]);
        assert!(written(&blocked, &[FailOn::Dead]).starts_with("::warning::"));
    }

    #[test]
    fn a_link_that_is_fine_or_left_out_is_no_finding() {
        for verdict in [Verdict::Alive, Verdict::Excluded] {
            let fine = Finding {
                verdict,
                ..dead(&[])
            };
            assert_eq!(fine.problem(), None);
            assert_eq!(written(&fine, &[]), "");
        }
        let missing = Finding {
            verdict: Verdict::Alive,
            missing_fragment: true,
            ..dead(&[])
        };
        assert_eq!(
            missing.message(),
            "https://a.example/x?a=1%20b: fragment missing (its page is alive)"
        );
    }

    #[test]
    fn messages_and_properties_escape_what_would_end_them() {
        assert_eq!(escape_data("50% a\r\nb: c,d"), "50%25 a%0D%0Ab: c,d");
        assert_eq!(
            escape_property("50% a\r\nb: c,d"),
            "50%25 a%0D%0Ab%3A c%2Cd"
        );
    }
}
