//! `--sitemap URL`: the URLs of sitemaps, streamed: a body is scanned as it arrives
//! (`crawler_links::SitemapScanner`), gunzipped on the way when it is gzip (`.xml.gz`), and its
//! URLs are added a thousand at a time, found on the sitemap. A sitemap index's sitemaps are
//! read in turn; a robots.txt gives its `Sitemap:` lines.

use std::collections::{HashSet, VecDeque};
use std::io::Write;
use std::time::Duration;

use crawler_links::{Robots, SitemapKind, SitemapScanner};
use flate2::write::GzDecoder;
use url::Url;

use super::crawl::{unread, Seeding};
use super::summary::SeedSummary;
use crate::error::Error;

/// URLs added at once.
const BATCH: usize = 1000;
/// Sitemaps read at most, indexes included: an index of indexes cannot go on forever.
const MAX_SITEMAPS: usize = 10_000;
/// Decompressed bytes read at most from one sitemap (the protocol's limit is 50 MB).
const MAX_BYTES: u64 = 256 * 1024 * 1024;

/// Reads every sitemap of `urls` (and those their indexes name) into the queue.
pub async fn seed_sitemaps(
    seeding: &Seeding<'_>,
    urls: &[String],
    summary: &mut SeedSummary,
) -> Result<(), Error> {
    let client = reqwest::Client::builder()
        .user_agent(crawler_worker_agent())
        .timeout(Duration::from_secs(60))
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|source| Error::Fetch {
            url: String::new(),
            source,
        })?;
    let mut queue: VecDeque<String> = urls.iter().cloned().collect();
    let mut seen: HashSet<String> = HashSet::new();
    while let Some(url) = queue.pop_front() {
        if !seen.insert(url.clone()) || seen.len() > MAX_SITEMAPS {
            continue;
        }
        match read_one(&client, seeding, &url, summary).await {
            Ok(more) => queue.extend(more),
            Err(error @ (Error::Fetch { .. } | Error::Sitemap { .. })) => {
                unread(summary, &url, &error)
            }
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// What the seed calls itself when it asks for sitemaps: the worker's default User-Agent.
fn crawler_worker_agent() -> String {
    concat!("crawler/", env!("CARGO_PKG_VERSION")).to_owned()
}

/// Reads one sitemap (or robots.txt); returns the sitemaps it names (an index's).
async fn read_one(
    client: &reqwest::Client,
    seeding: &Seeding<'_>,
    url: &str,
    summary: &mut SeedSummary,
) -> Result<Vec<String>, Error> {
    let fetch = |source| Error::Fetch {
        url: url.to_owned(),
        source,
    };
    let mut response = client.get(url).send().await.map_err(fetch)?;
    if !response.status().is_success() {
        return Err(Error::Sitemap {
            url: url.to_owned(),
            why: format!("status {}", response.status().as_u16()),
        });
    }
    let base = response.url().clone();
    if base.path().ends_with("/robots.txt") {
        let text = response.text().await.map_err(fetch)?;
        return Ok(Robots::parse(&text, "crawler").sitemaps);
    }
    let mut body = Body::default();
    let mut scanner = SitemapScanner::default();
    let mut locs = Vec::new();
    let mut sitemaps = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(fetch)? {
        let text = body.take(&chunk).map_err(|why| Error::Sitemap {
            url: url.to_owned(),
            why,
        })?;
        locs.extend(scanner.feed(&text));
        if scanner.kind() == SitemapKind::Index {
            sitemaps.append(&mut locs);
        } else if locs.len() >= BATCH {
            add(seeding, &base, std::mem::take(&mut locs), url, summary).await?;
        }
    }
    let rest = body.finish().map_err(|why| Error::Sitemap {
        url: url.to_owned(),
        why,
    })?;
    locs.extend(scanner.feed(&rest));
    if scanner.kind() == SitemapKind::Index {
        sitemaps.append(&mut locs);
    }
    add(seeding, &base, locs, url, summary).await?;
    summary.complete += 1;
    Ok(sitemaps)
}

async fn add(
    seeding: &Seeding<'_>,
    base: &Url,
    locs: Vec<String>,
    sitemap: &str,
    summary: &mut SeedSummary,
) -> Result<(), Error> {
    if locs.is_empty() {
        return Ok(());
    }
    let urls: Vec<Url> = locs.iter().filter_map(|l| base.join(l).ok()).collect();
    summary.rejected += (locs.len() - urls.len()) as u64;
    seeding.add(urls, Some(sitemap.to_owned()), summary).await
}

/// A body as it arrives, gunzipped when it starts with gzip's magic bytes.
#[derive(Default)]
struct Body {
    gzip: Option<GzDecoder<Vec<u8>>>,
    started: bool,
    read: u64,
}

impl Body {
    /// The text of the next `chunk`.
    fn take(&mut self, chunk: &[u8]) -> Result<Vec<u8>, String> {
        if !self.started {
            self.started = true;
            if chunk.starts_with(&[0x1f, 0x8b]) {
                self.gzip = Some(GzDecoder::new(Vec::new()));
            }
        }
        let out = match &mut self.gzip {
            Some(gzip) => {
                gzip.write_all(chunk)
                    .map_err(|e| format!("bad gzip: {e}"))?;
                std::mem::take(gzip.get_mut())
            }
            None => chunk.to_vec(),
        };
        self.count(out)
    }

    /// What the decompressor still holds at the end of the body.
    fn finish(&mut self) -> Result<Vec<u8>, String> {
        let Some(gzip) = &mut self.gzip else {
            return Ok(Vec::new());
        };
        gzip.try_finish().map_err(|e| format!("bad gzip: {e}"))?;
        let out = std::mem::take(gzip.get_mut());
        self.count(out)
    }

    fn count(&mut self, out: Vec<u8>) -> Result<Vec<u8>, String> {
        self.read += out.len() as u64;
        if self.read > MAX_BYTES {
            return Err(format!("longer than {MAX_BYTES} bytes"));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gzip_body_is_gunzipped_chunk_by_chunk() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"<urlset><url><loc>http://a.example/</loc></url></urlset>")
            .unwrap();
        let packed = gz.finish().unwrap();
        let mut body = Body::default();
        let mut text = Vec::new();
        for chunk in packed.chunks(7) {
            text.extend(body.take(chunk).unwrap());
        }
        text.extend(body.finish().unwrap());
        assert!(String::from_utf8(text)
            .unwrap()
            .contains("<loc>http://a.example/</loc>"));
        assert_eq!(Body::default().take(b"plain").unwrap(), b"plain");
    }
}
