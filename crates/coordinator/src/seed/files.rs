//! `--links-in FILE…`: the links of local HTML and Markdown files (a repository's docs; which
//! files, of folders and globs: `walk`), each found at `FILE:LINE:COL`, where its URL starts
//! (`crawler_queue::referrers::InFile`). Absolute http(s) links are taken as they are;
//! relative ones are resolved against `--base` (and an HTML file's `<base href>`), or skipped
//! and counted without it (a link to a file beside it is not a URL the crawler can ask). A link
//! to a section of the same file (`#install`) is decided here, from the file's own anchors
//! (GitHub's heading slugs for Markdown), and stored as a site already checked: the file's
//! `file://` URL with that fragment, alive, its fragment found or missing.

use crawler_links::{fragment, html, markdown, slug, Anchors, Found};
use crawler_queue::referrers::InFile;
use crawler_queue::Fragment;
use url::Url;

use super::crawl::{unread, Seeding};
use super::summary::SeedSummary;
use super::walk::{File, Kind, Walking};
use crate::error::Error;

/// Seeds the links of every file that `sources` name (files, folders, globs), walked as
/// `walking` says; a source or file that cannot be read is named, and the rest are read.
pub async fn seed_files(
    seeding: &Seeding<'_>,
    sources: &[String],
    walking: &Walking,
    base: Option<&Url>,
    summary: &mut SeedSummary,
) -> Result<(), Error> {
    if sources.is_empty() {
        return Ok(());
    }
    let found = {
        let (walking, sources) = (walking.clone(), sources.to_vec());
        tokio::task::spawn_blocking(move || walking.files(&sources))
            .await
            .expect("the walk panicked")
    };
    for (name, error) in &found.problems {
        unread(summary, name, error);
    }
    for file in &found.files {
        let bytes = match tokio::fs::read(&file.name).await {
            Ok(bytes) => bytes,
            Err(source) => {
                let path = file.name.clone();
                unread(summary, &file.name, &Error::Open { path, source });
                continue;
            }
        };
        let text = String::from_utf8_lossy(&bytes);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        seed_file(seeding, file, text, base, summary).await?;
        summary.files += 1;
        summary.complete += 1;
    }
    Ok(())
}

/// How many links of a file one transaction stores.
const STORED_AT_ONCE: usize = 500;

/// Seeds the links of `file`, whose text is `text`: each link a referrer of its own.
async fn seed_file(
    seeding: &Seeding<'_>,
    file: &File,
    text: &str,
    base: Option<&Url>,
    summary: &mut SeedSummary,
) -> Result<(), Error> {
    let (links, file_base) = links_of(file.kind, text);
    let base = match (base, file_base) {
        (Some(base), Some(own)) => base.join(&own).ok(),
        (base, _) => base.cloned(),
    };
    let mut own = OwnSections::new(file, text);
    // A file's links are stored a few hundred at a time, one transaction each: one per link
    // made a repository's docs slow to seed.
    let mut found_links = Vec::new();
    for found in &links {
        let referrer = InFile::referrer(&file.name, found.line, found.col);
        if let Some(fragment) = found.url.strip_prefix('#').filter(|_| seeding.fragments) {
            let Some(section) = own.decide(fragment) else {
                continue;
            };
            let follow = seeding.queue.follow();
            let new = follow.add_file_fragments(&referrer, &[section]).await?;
            summary.seeded.added += new;
            summary.seeded.known += 1 - new;
            continue;
        }
        match resolve(base.as_ref(), &found.url) {
            Some(url) => found_links.push(seeding.sort([url], Some(referrer), summary)),
            None => summary.relative += 1,
        }
        if found_links.len() >= STORED_AT_ONCE {
            seeding
                .store(&std::mem::take(&mut found_links), summary)
                .await?;
        }
    }
    if !found_links.is_empty() {
        seeding.store(&found_links, summary).await?;
    }
    Ok(())
}

/// A file's own sections, for its links `#section`: its anchors (a Markdown file's GitHub
/// heading slugs, `{#id}`s and inline HTML anchors; an HTML file's ids and `<a name>`s), read
/// when its first such link is found, and its `file://` URL.
struct OwnSections<'a> {
    file: &'a File,
    text: &'a str,
    read: Option<(Anchors, Option<Url>)>,
}

impl<'a> OwnSections<'a> {
    fn new(file: &'a File, text: &'a str) -> Self {
        OwnSections {
            file,
            text,
            read: None,
        }
    }

    /// The site of the link `#fragment` and whether the file has it; `None` for a fragment
    /// that always exists (`#top`, a text fragment), or a file with no `file://` URL.
    fn decide(&mut self, fragment: &str) -> Option<(String, Fragment)> {
        let anchor = fragment::anchor_of(fragment)?;
        let (file, text) = (self.file, self.text);
        let (anchors, url) = self.read.get_or_insert_with(|| {
            let anchors = match file.kind {
                Kind::Markdown => slug::markdown_anchors(text),
                Kind::Html => html::extract(text).anchors,
            };
            let url = std::fs::canonicalize(&file.name)
                .ok()
                .and_then(|p| Url::from_file_path(p).ok());
            (anchors.into_iter().collect(), url)
        });
        let mut url = url.clone()?;
        url.set_fragment(Some(fragment));
        let found = match anchors.has(&anchor) {
            true => Fragment::Found,
            false => Fragment::Missing,
        };
        Some((url.into(), found))
    }
}

/// The links of a file, by its kind, and an HTML file's `<base href>`.
fn links_of(kind: Kind, text: &str) -> (Vec<Found>, Option<String>) {
    match kind {
        Kind::Markdown => (markdown::extract(text), None),
        Kind::Html => {
            let page = html::extract(text);
            (page.links, page.base)
        }
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
