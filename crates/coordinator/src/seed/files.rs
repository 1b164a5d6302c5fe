//! `--links-in FILE…`: the links of local HTML and Markdown files (a repository's docs), each
//! found on `FILE:LINE`. Absolute http(s) links are taken as they are; relative ones are
//! resolved against `--base` (and an HTML file's `<base href>`), or skipped and counted
//! without it (a link to a file beside it is not a URL the crawler can ask).

use crawler_links::{html, markdown, Found};
use url::Url;

use super::crawl::{unread, Seeding};
use super::SeedSummary;
use crate::Error;

/// Seeds the links of every file of `paths`.
pub async fn seed_files(
    seeding: &Seeding<'_>,
    paths: &[String],
    base: Option<&Url>,
    summary: &mut SeedSummary,
) -> Result<(), Error> {
    for path in paths {
        let bytes = match tokio::fs::read(path).await {
            Ok(bytes) => bytes,
            Err(source) => {
                let error = Error::Open {
                    path: path.clone(),
                    source,
                };
                unread(summary, path, &error);
                continue;
            }
        };
        let text = String::from_utf8_lossy(&bytes);
        let (links, file_base) = links_of(path, &text);
        let base = match (base, file_base) {
            (Some(base), Some(own)) => base.join(&own).ok(),
            (base, _) => base.cloned(),
        };
        let mut at = 0;
        while at < links.len() {
            let line = links[at].line;
            let end = at + links[at..].iter().take_while(|f| f.line == line).count();
            let mut urls = Vec::new();
            for found in &links[at..end] {
                match resolve(base.as_ref(), &found.url) {
                    Some(url) => urls.push(url),
                    None => summary.relative += 1,
                }
            }
            if !urls.is_empty() {
                seeding
                    .add(urls, Some(format!("{path}:{line}")), summary)
                    .await?;
            }
            at = end;
        }
        summary.complete += 1;
    }
    Ok(())
}

/// The links of a file, by its extension, and an HTML file's `<base href>`.
fn links_of(path: &str, text: &str) -> (Vec<Found>, Option<String>) {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".md") || lower.ends_with(".markdown") {
        (markdown::extract(text), None)
    } else {
        let page = html::extract(text);
        (page.links, page.base)
    }
}

/// `link` as a URL to check: absolute, or relative to `base`; `None` when it is relative and
/// there is no base. Fragments of the same file (`#x`) and other schemes are skipped later.
fn resolve(base: Option<&Url>, link: &str) -> Option<Url> {
    match Url::parse(link) {
        Ok(url) => Some(url),
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            base.and_then(|b| crawler_links::resolve(b, link))
        }
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_links_need_a_base() {
        assert_eq!(resolve(None, "other.md"), None);
        let base = Url::parse("https://docs.example/guide/").unwrap();
        assert_eq!(
            resolve(Some(&base), "other.html").unwrap().as_str(),
            "https://docs.example/guide/other.html"
        );
        assert_eq!(
            resolve(None, "https://a.example/x").unwrap().as_str(),
            "https://a.example/x"
        );
    }
}
