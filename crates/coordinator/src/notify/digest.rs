//! A digest's body: the changes as JSON objects, and a short text a chat's incoming webhook
//! (Slack, Mattermost) shows as it is.
//!
//! ```json
//! {"id": "…", "since": "…", "until": "…", "changes": [{"url": …, "verdict": …,
//!  "previous_verdict": …, "changed_at": …, "http_status": …, "error_kind": …,
//!  "final_url": …, "found_on": …, "moved_to": …}], "text": "…"}
//! ```

use crawler_queue::{Change, Verdict};
use serde::Serialize;

use crate::redact::strip_userinfo;
use crate::report::timestamp::rfc3339;

/// Changes a digest holds at most (the issue's bound: more changes, more digests).
pub const MAX_CHANGES: u32 = 1000;

/// A digest's body at most, in bytes: a change (URLs up to 8 KiB, a final URL longer) always
/// fits alone, and receivers refuse large bodies (Slack takes about 1 MB).
pub const MAX_BYTES: usize = 512 * 1024;

/// Changes the text lists one by one; the rest are counted.
const TEXT_LINES: usize = 20;

#[derive(Serialize)]
struct Body<'a> {
    id: &'a str,
    since: String,
    until: String,
    changes: Vec<Told<'a>>,
    text: String,
}

/// One change, as a receiver reads it. URLs print without credentials.
#[derive(Serialize)]
struct Told<'a> {
    url: String,
    verdict: Verdict,
    /// None for a new link's first verdict.
    previous_verdict: Option<Verdict>,
    /// RFC 3339.
    changed_at: String,
    http_status: Option<u16>,
    error_kind: Option<&'a str>,
    final_url: Option<String>,
    found_on: Option<String>,
    /// Where a permanent redirect sends it: the URL to write instead.
    moved_to: Option<String>,
}

impl<'a> Told<'a> {
    fn new(change: &'a Change) -> Told<'a> {
        let shown = |url: &Option<String>| url.as_deref().map(|u| strip_userinfo(u).into_owned());
        Told {
            url: strip_userinfo(&change.url).into_owned(),
            verdict: change.verdict,
            previous_verdict: change.previous_verdict,
            changed_at: rfc3339(change.changed_at),
            http_status: change.http_status,
            error_kind: change.error_kind.map(|k| k.as_str()),
            final_url: shown(&change.final_url),
            found_on: shown(&change.found_on),
            moved_to: shown(&change.moved_to),
        }
    }
}

/// The body of digest `id` of `changes`, which happened after `since` and at `until` or before
/// (Unix milliseconds).
pub fn body(id: &str, since: i64, until: i64, changes: &[Change]) -> String {
    let body = Body {
        id,
        since: rfc3339(since),
        until: rfc3339(until),
        changes: changes.iter().map(Told::new).collect(),
        text: text(changes),
    };
    serde_json::to_string(&body).expect("a digest serializes")
}

/// `crawler: 3 links changed: 2 dead, 1 alive`, then a line per change (the first
/// [`TEXT_LINES`]): `dead (was alive): URL 404`. Escaped as Slack asks (`&`, `<`, `>`).
fn text(changes: &[Change]) -> String {
    let mut counts: Vec<(Verdict, usize)> = Vec::new();
    for change in changes {
        match counts.iter_mut().find(|(v, _)| *v == change.verdict) {
            Some((_, n)) => *n += 1,
            None => counts.push((change.verdict, 1)),
        }
    }
    let counts: Vec<String> = counts.iter().map(|(v, n)| format!("{n} {v}")).collect();
    let links = if changes.len() == 1 { "link" } else { "links" };
    let mut text = format!(
        "crawler: {} {links} changed: {}",
        changes.len(),
        counts.join(", ")
    );
    for change in changes.iter().take(TEXT_LINES) {
        let was = change
            .previous_verdict
            .map_or("new".to_owned(), |v| format!("was {v}"));
        let why = match (change.http_status, change.error_kind) {
            (_, Some(kind)) => format!(" {}", kind.as_str()),
            (Some(status), None) => format!(" {status}"),
            (None, None) => String::new(),
        };
        let url = strip_userinfo(&change.url);
        text += &format!("\n{} ({was}): {url}{why}", change.verdict);
    }
    if changes.len() > TEXT_LINES {
        text += &format!("\n… and {} more", changes.len() - TEXT_LINES);
    }
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawler_queue::ErrorKind;
    use serde_json::{json, Value};

    fn change(url: &str, verdict: Verdict, previous: Option<Verdict>) -> Change {
        Change {
            site_id: 1,
            url: url.into(),
            verdict,
            previous_verdict: previous,
            changed_at: 1_796_378_400_000,
            http_status: Some(404),
            error_kind: None,
            final_url: None,
            moved_to: None,
            found_on: Some("https://a.example/".into()),
        }
    }

    #[test]
    fn a_body_holds_every_field_of_each_change_and_a_text() {
        let changes = [
            change(
                "https://u:pw@a.example/x?a=1&b=<2>",
                Verdict::Dead,
                Some(Verdict::Alive),
            ),
            Change {
                http_status: None,
                error_kind: Some(ErrorKind::Dns),
                ..change("https://b.example/", Verdict::Unreachable, None)
            },
        ];
        let body: Value =
            serde_json::from_str(&body("d1", 0, 1_796_378_400_000, &changes)).unwrap();
        assert_eq!(body["id"], "d1");
        assert_eq!(body["since"], "1970-01-01T00:00:00Z");
        assert_eq!(body["until"], "2026-12-04T10:00:00Z");
        assert_eq!(
            body["changes"][0],
            json!({
                "url": "https://a.example/x?a=1&b=<2>",
                "verdict": "dead",
                "previous_verdict": "alive",
                "changed_at": "2026-12-04T10:00:00Z",
                "http_status": 404,
                "error_kind": null,
                "final_url": null,
                "found_on": "https://a.example/",
                "moved_to": null,
            })
        );
        assert_eq!(body["changes"][1]["previous_verdict"], Value::Null);
        assert_eq!(
            body["text"],
            "crawler: 2 links changed: 1 dead, 1 unreachable\n\
             dead (was alive): https://a.example/x?a=1&amp;b=&lt;2&gt; 404\n\
             unreachable (new): https://b.example/ dns"
        );
    }

    #[test]
    fn the_text_lists_the_first_changes_and_counts_the_rest() {
        let changes: Vec<Change> = (0..25)
            .map(|i| change(&format!("https://a.example/{i}"), Verdict::Dead, None))
            .collect();
        let text = text(&changes);
        assert_eq!(text.lines().count(), 1 + TEXT_LINES + 1);
        assert!(text.ends_with("… and 5 more"), "{text}");
    }
}
