//! `--format sarif`: the report as SARIF 2.1.0, the format of code scanning (GitHub's
//! `upload-sarif` action, editors' SARIF viewers). One run of the tool `crawler`, a rule per
//! kind of failure ([`Problem`]: dead, missing fragment, blocked, unreachable, error) with help
//! text, and a result per failing link and place: a place in a file is a region with its start
//! line and column (`columnKind` `unicodeCodePoints`: columns count characters, as the seed
//! does), a page it was found on is that page's URL, and a link of a list, found nowhere, is
//! placed at itself (code scanning wants a location on every result). The message names the
//! URL and the verdict; `properties` hold the URL, verdict and status. A result's `level` is
//! `error` for what `--fail-on` counts, else `warning`, as in `--format github`. Streamed: the
//! rules first, then the results as the sites come.

use std::io::Write;

use serde_json::{json, Value};

use super::fail_on::FailOn;
use super::github::{Finding, Problem};

/// Where the schema of the format is, for editors (the `$schema` of the log).
const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Writes the log up to its first result: the tool and its rules.
pub(super) fn start(out: &mut impl Write) -> Result<(), serde_json::Error> {
    let rules: Vec<Value> = Problem::ALL.iter().map(|&p| rule(p)).collect();
    let driver = json!({
        "name": "crawler",
        "version": env!("CARGO_PKG_VERSION"),
        "rules": rules,
    });
    write!(
        out,
        r#"{{"$schema":"{SCHEMA}","version":"2.1.0","runs":[{{"tool":{{"driver":"#
    )
    .map_err(serde_json::Error::io)?;
    serde_json::to_writer(&mut *out, &driver)?;
    write!(out, r#"}},"columnKind":"unicodeCodePoints","results":["#).map_err(serde_json::Error::io)
}

/// Writes the results of `finding`, after `written` results already (each but the first after
/// a comma). Returns how many.
pub(super) fn write(
    out: &mut impl Write,
    finding: &Finding<'_>,
    fail_on: &[FailOn],
    written: u64,
) -> Result<u64, serde_json::Error> {
    let Some(problem) = finding.problem() else {
        return Ok(0);
    };
    let level = finding.level(fail_on).as_str();
    let index = Problem::ALL
        .iter()
        .position(|&p| p == problem)
        .expect("a rule each");
    let properties = json!({
        "url": finding.url,
        "verdict": finding.verdict.as_str(),
        "status": finding.status,
    });
    let mut results = 0;
    for location in locations(finding) {
        let result = json!({
            "ruleId": problem.id(),
            "ruleIndex": index,
            "level": level,
            "message": { "text": finding.message() },
            "locations": [location],
            "properties": properties,
        });
        let comma = if written + results > 0 { "," } else { "" };
        writeln!(out, "{comma}").map_err(serde_json::Error::io)?;
        serde_json::to_writer(&mut *out, &result)?;
        results += 1;
    }
    Ok(results)
}

/// Ends the log.
pub(super) fn finish(out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "\n]}}]}}")
}

/// The places of `finding`: a region of a file per place in a file; if none, each page it was
/// found on; if none, the link itself.
fn locations(finding: &Finding<'_>) -> Vec<Value> {
    let artifact = |uri: &str, region: Option<Value>| {
        let mut physical = json!({ "artifactLocation": { "uri": uri } });
        if let Some(region) = region {
            physical["region"] = region;
        }
        json!({ "physicalLocation": physical })
    };
    let in_files: Vec<Value> = finding
        .places()
        .map(|place| {
            let mut region = json!({ "startLine": place.line });
            if let Some(col) = place.col {
                region["startColumn"] = col.into();
            }
            artifact(&file_uri(place.file), Some(region))
        })
        .collect();
    if !in_files.is_empty() {
        return in_files;
    }
    match finding.found_on.is_empty() {
        true => vec![artifact(finding.url, None)],
        false => finding.found_on.iter().map(|p| artifact(p, None)).collect(),
    }
}

/// A file's path as a URI reference: relative as it is (code scanning reads it against the
/// repository's root), absolute as a `file://` URI; every byte but letters, digits, `-._~`
/// and `/` percent-encoded.
fn file_uri(path: &str) -> String {
    let mut uri = String::with_capacity(path.len());
    if path.starts_with('/') {
        uri.push_str("file://");
    }
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(char::from(b))
            }
            b => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri
}

/// The rule of `problem`: its id, title, what it means and what to do.
fn rule(problem: Problem) -> Value {
    let (full, help) = match problem {
        Problem::Dead => (
            "The link's page is gone: it answers 404, 410 or another 4xx (or, with \
             --soft-404, a page that only stands in for a missing one).",
            "Point the link at where the page is now, or at an archived copy, or remove it.",
        ),
        Problem::MissingFragment => (
            "The link names a section (page#section) that its page, alive, does not have: no \
             element with that id, and no <a name>.",
            "Point the link at a section the page has (a heading's id may have changed), or \
             at the page alone.",
        ),
        Problem::Blocked => (
            "The server refused the checker: 401, 403, 407, 451, 429 or a bot wall.",
            "Open the link in a browser: if it works there, the site keeps robots out; leave \
             it out of the check, or accept it.",
        ),
        Problem::Unreachable => (
            "No HTTP answer: the host name does not resolve, the connection is refused or \
             reset, it times out, or TLS fails.",
            "Check the host name; if the server is gone, remove the link or use an archived \
             copy.",
        ),
        Problem::Error => (
            "The server answered with an error (5xx, 408), redirected in a loop or too often, \
             or did not speak HTTP.",
            "Check the link again later: an error that lasts is a broken server or link.",
        ),
        Problem::Moved => (
            "The link answers through a permanent redirect (301 or 308) to another page: it \
             works today, and breaks when the redirect goes.",
            "Write the URL it moved to in place of the link.",
        ),
    };
    let level = match problem {
        Problem::Dead | Problem::MissingFragment => "error",
        _ => "warning",
    };
    json!({
        "id": problem.id(),
        // `DeadLink`: the title in one word, as SARIF's rule names are.
        "name": problem.title().split(' ').map(capitalized).collect::<String>(),
        "shortDescription": { "text": problem.title() },
        "fullDescription": { "text": full },
        "help": { "text": help, "markdown": help },
        "defaultConfiguration": { "level": level },
        "properties": { "tags": ["links"] },
    })
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use crawler_queue::Verdict;

    use super::*;

    fn log(findings: &[Finding<'_>]) -> Value {
        let mut out = Vec::new();
        start(&mut out).unwrap();
        let mut written = 0;
        for finding in findings {
            written += write(&mut out, finding, &[FailOn::Dead], written).unwrap();
        }
        finish(&mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    fn finding<'a>(verdict: Verdict, found_on: &'a [Cow<'a, str>]) -> Finding<'a> {
        Finding {
            verdict,
            ..super::super::github::tests::dead(found_on)
        }
    }

    #[test]
    fn a_result_per_failing_link_and_place_with_its_rule_and_region() {
        let in_files = [Cow::from("docs/a b.md:3:14"), Cow::from("/abs/ü.md:7")];
        let on_page = [Cow::from("https://a.example/page")];
        let log = log(&[
            finding(Verdict::Dead, &in_files),
            finding(Verdict::Alive, &in_files),
            finding(Verdict::Blocked, &on_page),
            finding(Verdict::Unreachable, &[]),
        ]);
        let run = &log["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
        assert_eq!(
            ids,
            [
                "dead",
                "missing-fragment",
                "blocked",
                "unreachable",
                "error",
                "moved"
            ]
        );
        let results = run["results"].as_array().unwrap();
        let summary: Vec<(String, i64, String, String)> = results
            .iter()
            .map(|r| {
                let location = &r["locations"][0]["physicalLocation"];
                (
                    r["ruleId"].as_str().unwrap().to_owned(),
                    r["ruleIndex"].as_i64().unwrap(),
                    r["level"].as_str().unwrap().to_owned(),
                    format!(
                        "{} {}",
                        location["artifactLocation"]["uri"], location["region"]
                    ),
                )
            })
            .collect();
        let row = |id: &str, index, level: &str, place: &str| {
            (id.to_owned(), index, level.to_owned(), place.to_owned())
        };
        assert_eq!(
            summary,
            [
                row(
                    "dead",
                    0,
                    "error",
                    r#""docs/a%20b.md" {"startColumn":14,"startLine":3}"#
                ),
                row(
                    "dead",
                    0,
                    "error",
                    r#""file:///abs/%C3%BC.md" {"startLine":7}"#
                ),
                row("blocked", 2, "warning", r#""https://a.example/page" null"#),
                row(
                    "unreachable",
                    3,
                    "warning",
                    r#""https://a.example/x?a=1%20b" null"#
                ),
            ]
        );
        assert_eq!(
            results[0]["message"]["text"],
            "https://a.example/x?a=1%20b: dead (HTTP 404)"
        );
        assert_eq!(results[0]["properties"]["status"], 404);
        assert_eq!(run["columnKind"], "unicodeCodePoints");
    }

    #[test]
    fn a_log_without_failures_has_the_rules_and_no_result() {
        let log = log(&[]);
        assert_eq!(log["version"], "2.1.0");
        assert_eq!(log["runs"][0]["results"], json!([]));
        assert_eq!(log["runs"][0]["tool"]["driver"]["name"], "crawler");
    }
}
