//! `--follow`, `--sitemap`, `--links-in`: seeding a recursive check. The crawl (its scopes,
//! `--include`/`--exclude`, depth and page limits, robots) is stored once, so that every
//! worker of the fleet applies the same rules to the links it finds; its start pages go in as
//! pages of it, at depth 0.

use crawler_links::{Fate, Rules, Scope, ScopeKind};
use crawler_queue::filter::UrlFilter;
use crawler_queue::{Frontier, Links, NewCrawl, NewSite, Queue};
use url::Url;

use super::summary::{SeedSummary, Unread};
use crate::error::Error;

/// The options of a recursive check.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct CrawlArgs {
    /// Check whole sites from these start pages: every alive HTML page in scope is read, and
    /// its links are checked too (by any worker of the fleet); links out of scope are checked,
    /// not read. Takes URLs up to the next option.
    #[arg(long, value_name = "URL", num_args = 1..)]
    pub follow: Vec<String>,

    /// What --follow reads: `origin` (default: the start URL's scheme, host and port), `host`
    /// (any scheme and port), `domain` (the host without `www.`, and its subdomains) or `prefix`
    /// (URLs under the start URL's directory).
    #[arg(long, value_enum, value_name = "SCOPE", default_value_t = ScopeArg::Origin)]
    pub follow_scope: ScopeArg,

    /// Pages more than N links from a start page are checked, not read. Default: no limit.
    #[arg(long, value_name = "N")]
    pub max_depth: Option<u32>,

    /// Read at most N pages (start pages included), over the whole fleet; the links of the
    /// last ones are still checked. Default: no limit.
    #[arg(long, value_name = "N")]
    pub max_pages: Option<u64>,

    /// Read pages that robots.txt disallows to `crawler` (for your own sites). Links that are
    /// only checked never ask robots.txt, as in every link checker.
    #[arg(long)]
    pub ignore_robots: bool,

    /// Seed the URLs of these sitemaps (urlset or sitemap index, `.xml.gz` too, or a
    /// robots.txt: its `Sitemap:` lines); with --follow, those in scope are start pages.
    /// Takes URLs up to the next option.
    #[arg(long, value_name = "URL", num_args = 1..)]
    pub sitemap: Vec<String>,

    /// Seed the links of these HTML and Markdown files, each found at `FILE:LINE:COL`: files
    /// (read whatever their name: `.md`, `.markdown`, `.mdown`, `.mkd`, `.mkdn` as Markdown, the
    /// rest as HTML), folders (walked) and glob patterns (quoted: 'docs/**/*.md'). Folders and
    /// globs read `.html`, `.htm`, `.xhtml` and those Markdown files, and skip hidden files and
    /// what `.gitignore`, `.ignore` and `.git/info/exclude` ignore. Takes paths up to the next
    /// option.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub links_in: Vec<String>,

    /// With --links-in: folders and globs read hidden files and folders too (`.github/`), not
    /// `.git`.
    #[arg(long, requires = "links_in")]
    pub links_in_hidden: bool,

    /// With --links-in: folders and globs read what ignore files ignore too.
    #[arg(long, requires = "links_in")]
    pub links_in_no_ignore: bool,

    /// With --links-in: folders and globs read files ending in `.EXT` too, as Markdown (its
    /// links and bare URLs: `txt`, `rst`) or as KIND (`njk=html`). Comma-separated or repeated.
    #[arg(
        long,
        value_name = "EXT[=KIND]",
        value_delimiter = ',',
        requires = "links_in"
    )]
    pub links_in_ext: Vec<super::walk::Extension>,

    /// Resolve the relative links of --links-in against this URL (the site the files are
    /// published at); without it they are skipped and counted.
    #[arg(long, value_name = "URL", requires = "links_in")]
    pub base: Option<Url>,

    /// Check the fragments (`page#section`) of the URLs of lists too: each is a site of its
    /// own, alive only where the page has that section. Default: on for --follow, --sitemap
    /// and --links-in, where pages are read anyway; off for lists.
    #[arg(long, overrides_with = "no_fragments")]
    pub fragments: bool,

    /// Check no fragment anywhere: `page#section` is `page`, as before fragments were checked.
    #[arg(long, overrides_with = "fragments")]
    pub no_fragments: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ScopeArg {
    #[default]
    Origin,
    Host,
    Domain,
    Prefix,
}

impl From<ScopeArg> for ScopeKind {
    fn from(arg: ScopeArg) -> ScopeKind {
        match arg {
            ScopeArg::Origin => ScopeKind::Origin,
            ScopeArg::Host => ScopeKind::Host,
            ScopeArg::Domain => ScopeKind::Domain,
            ScopeArg::Prefix => ScopeKind::Prefix,
        }
    }
}

impl CrawlArgs {
    /// Whether the URLs of lists keep their fragments (`--fragments`).
    pub fn fragments_in_lists(&self) -> bool {
        self.fragments && !self.no_fragments
    }

    /// Whether crawls, sitemaps and files check their links' fragments (unless
    /// `--no-fragments`).
    pub fn fragments_in_pages(&self) -> bool {
        !self.no_fragments
    }

    /// How `--links-in` walks folders and globs.
    pub fn walking(&self) -> super::walk::Walking {
        super::walk::Walking {
            hidden: self.links_in_hidden,
            no_ignore: self.links_in_no_ignore,
            extensions: self.links_in_ext.clone(),
        }
    }

    /// Whether anything is to be seeded besides lists of URLs.
    pub fn any(&self) -> bool {
        !self.follow.is_empty() || !self.sitemap.is_empty() || !self.links_in.is_empty()
    }
}

/// The crawl being seeded, if `--follow` made one, and the rules links are sorted by.
pub struct Seeding<'q> {
    pub queue: &'q Queue,
    pub frontier: Option<Frontier>,
    pub rules: Rules,
    /// A link with a fragment that names an anchor is two sites: its page, and the fragment's.
    pub fragments: bool,
}

impl Seeding<'_> {
    /// Adds `urls` found at `referrer` (none for start pages), sorted by the crawl's rules.
    pub async fn add(
        &self,
        urls: impl IntoIterator<Item = Url>,
        referrer: Option<String>,
        summary: &mut SeedSummary,
    ) -> Result<(), Error> {
        let links = self.sort(urls, referrer, summary);
        self.store(&[links], summary).await
    }

    /// `urls` found at `referrer`, sorted by the crawl's rules into the links to follow and
    /// those only to check (each once); the excluded are counted in `summary`.
    pub fn sort(
        &self,
        urls: impl IntoIterator<Item = Url>,
        referrer: Option<String>,
        summary: &mut SeedSummary,
    ) -> Links {
        let mut links = Links {
            referrer,
            ..Links::default()
        };
        let mut seen = std::collections::HashSet::new();
        for url in urls {
            let fragment = self.fragments.then(|| url.clone());
            let (follow, normal) = match self.rules.fate(url, 0) {
                Fate::Follow(n) => (self.frontier.is_some(), n),
                Fate::Check(n) => (false, n),
                Fate::Skip => {
                    summary.excluded += 1;
                    continue;
                }
            };
            let fragment = fragment.and_then(|url| crawler_links::with_fragment(&normal, &url));
            let site = |n: crawler_links::Normal| NewSite {
                url: n.url,
                host: n.host,
            };
            links.add(&mut seen, follow, site(normal), fragment.map(site));
        }
        links
    }

    /// Stores `found` (links [`Seeding::sort`]ed, each with its referrer) in one transaction.
    pub async fn store(&self, found: &[Links], summary: &mut SeedSummary) -> Result<(), Error> {
        let total: usize = found.iter().map(|l| l.follow.len() + l.check.len()).sum();
        let added = self
            .queue
            .follow()
            .add_found(None, self.frontier, found)
            .await?
            .unwrap_or_default();
        summary.seeded.added += added.new;
        summary.seeded.known += total as u64 - added.new;
        summary.pages += added.pages;
        Ok(())
    }
}

/// Stores the crawl `args` describe (if `--follow` was given) and seeds its start pages.
pub async fn start<'q>(
    queue: &'q Queue,
    args: &CrawlArgs,
    filter: &UrlFilter,
    summary: &mut SeedSummary,
) -> Result<Seeding<'q>, Error> {
    let mut starts = Vec::new();
    for text in &args.follow {
        match crate::input::normalize(text) {
            Ok(seed) => starts.push(Url::parse(&seed.url).expect("a normalized url parses")),
            Err(reason) => {
                summary.rejected += 1;
                crawler_cli::eprint_line(format_args!("--follow {text}: {reason}"));
            }
        }
    }
    let kind = ScopeKind::from(args.follow_scope);
    let rules = Rules {
        scopes: starts.iter().map(|s| Scope::of(kind, s)).collect(),
        include: filter.include.clone(),
        exclude: filter.exclude.clone(),
        max_depth: args.max_depth.map(|d| i32::try_from(d).unwrap_or(i32::MAX)),
    };
    let mut seeding = Seeding {
        queue,
        frontier: None,
        rules,
        fragments: args.fragments_in_pages(),
    };
    if starts.is_empty() {
        return Ok(seeding);
    }
    let crawl = NewCrawl {
        scopes: seeding.rules.scopes.iter().map(Scope::to_line).collect(),
        includes: filter
            .include
            .iter()
            .map(|r| r.as_str().to_owned())
            .collect(),
        excludes: filter
            .exclude
            .iter()
            .map(|r| r.as_str().to_owned())
            .collect(),
        max_depth: seeding.rules.max_depth,
        max_pages: args.max_pages.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
        robots: !args.ignore_robots,
        fragments: args.fragments_in_pages(),
    };
    let id = queue.follow().create_crawl(&crawl).await?;
    seeding.frontier = Some(Frontier {
        crawl: id,
        depth: 0,
        max_pages: crawl.max_pages,
    });
    seeding.add(starts, None, summary).await?;
    summary.complete += 1;
    Ok(seeding)
}

/// Names a source that could not be read in the summary (exit 3), and on stderr.
pub(super) fn unread(summary: &mut SeedSummary, name: &str, error: &Error) {
    crawler_cli::eprint_line(format_args!("{}", crate::error::chain(error)));
    summary.unread.push(Unread {
        name: name.to_owned(),
        lines: None,
    });
}
