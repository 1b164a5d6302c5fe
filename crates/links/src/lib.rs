//! Links in documents, for `--follow`, `--sitemap` and `--links-in`: what a page, a Markdown
//! file, a robots.txt or a sitemap points to, resolved against where it was found and
//! normalized as `crawler-seed` normalizes a line, so a link found twice is one site.
//!
//! Everything here is pure (bytes in, links out): fetching is the worker's and the seed's.
//! The HTML scanner is a small tag tokenizer rather than a full HTML5 parser: it needs the
//! attributes of start tags only, skips comments and the raw text of `<script>` and `<style>`,
//! decodes character references, and never builds a tree, so a 4 MiB page costs its links.
//!
//! # Layout
//! - [`html`]: links and anchors (ids, `<a name>`) of an HTML page (`a`/`area`/`link[href]`, `img`/`script`/`iframe`/
//!   `frame`/`source`/`embed`/`track`/`audio`/`video[src]`, `srcset`, `<base href>`).
//! - [`markdown`]: links of a Markdown file (inline, reference, autolinks, bare URLs; not in
//!   code), with their line and column.
//! - [`slug`]: the anchors of a Markdown file: GitHub's heading slugs, `{#id}`, inline HTML.
//! - [`entities`]: HTML character references.
//! - [`fragment`]: which fragments name an anchor, and whether a page's anchors have it.
//! - [`normalize`]: a resolved URL to the form the queue stores.
//! - [`scope`]: which links a crawl follows (`--follow-scope`).
//! - [`rules`]: what becomes of a discovered link: followed, checked, or left out.
//! - [`robots`]: robots.txt rules for one user agent.
//! - [`sitemap`]: `<loc>`s of a sitemap or sitemap index, streamed.

pub mod entities;
pub mod fragment;
pub mod html;
pub mod markdown;
pub mod normalize;
pub mod robots;
pub mod rules;
pub mod scope;
pub mod sitemap;
pub mod slug;

pub use fragment::Anchors;
pub use html::{extract as html_links, Found, HtmlLinks};
pub use normalize::{normalize, resolve, resolve_with_fragment, with_fragment, Normal};
pub use robots::Robots;
pub use rules::{Fate, Rules};
pub use scope::{Scope, ScopeKind};
pub use sitemap::{SitemapKind, SitemapScanner};
