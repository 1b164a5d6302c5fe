//! robots.txt (RFC 9309) for one user agent: the group that names it (`crawler`), or else `*`;
//! `Allow` and `Disallow` with `*` and `$`, the longest match winning and `Allow` winning a
//! tie; `Crawl-delay`; and the file's `Sitemap` lines, whichever group they are in.

use std::time::Duration;

/// The longest `Crawl-delay` obeyed: a larger one is taken as this. A site that asks for a
/// minute between requests is slowed to one a minute, not stopped (at an hour a page, a
/// crawl of a few hundred pages would never end).
pub const MAX_CRAWL_DELAY: Duration = Duration::from_secs(60);

/// The rules of one robots.txt for one user agent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Robots {
    /// `(allow, pattern)`, in the file's order.
    rules: Vec<(bool, String)>,
    /// The least time between two requests to the host (`Crawl-delay`, in seconds, decimals
    /// allowed), at most [`MAX_CRAWL_DELAY`]; `None` without one, or for `0`.
    pub crawl_delay: Option<Duration>,
    pub sitemaps: Vec<String>,
}

impl Robots {
    /// Allows everything: no robots.txt, or one that could not be read as text.
    pub fn allow_all() -> Robots {
        Robots::default()
    }

    /// The rules of `text` for `agent` (its product token, `crawler`).
    pub fn parse(text: &str, agent: &str) -> Robots {
        let agent = agent.to_ascii_lowercase();
        let mut named = Group::default();
        let mut any = Group::default();
        let mut sitemaps = Vec::new();
        // The agents of the group being read, and whether its rules have started (a
        // `User-agent` after a rule starts a new group).
        let (mut agents, mut in_rules) = (Vec::<String>::new(), false);
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or_default().trim();
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
            match key.as_str() {
                "user-agent" => {
                    if in_rules {
                        agents.clear();
                        in_rules = false;
                    }
                    agents.push(value.to_ascii_lowercase());
                }
                "allow" | "disallow" | "crawl-delay" => {
                    in_rules = true;
                    if agents.contains(&agent) {
                        named.add(&key, value);
                    }
                    if agents.iter().any(|a| a == "*") {
                        any.add(&key, value);
                    }
                }
                "sitemap" if !value.is_empty() => sitemaps.push(value.to_owned()),
                _ => {}
            }
        }
        let group = if named.seen { named } else { any };
        Robots {
            rules: group.rules,
            crawl_delay: group.crawl_delay,
            sitemaps,
        }
    }

    /// Whether the path and query `path` (`/a/b?c`, as in the URL) may be fetched.
    pub fn allows(&self, path: &str) -> bool {
        let mut best: Option<(usize, bool)> = None;
        for (allow, pattern) in &self.rules {
            if matches(pattern, path) {
                let better = best.is_none_or(|(len, was_allow)| {
                    pattern.len() > len || (pattern.len() == len && *allow && !was_allow)
                });
                if better {
                    best = Some((pattern.len(), *allow));
                }
            }
        }
        best.is_none_or(|(_, allow)| allow)
    }
}

/// The rules gathered for one agent.
#[derive(Default)]
struct Group {
    seen: bool,
    rules: Vec<(bool, String)>,
    crawl_delay: Option<Duration>,
}

impl Group {
    fn add(&mut self, key: &str, value: &str) {
        self.seen = true;
        match key {
            // A value that is not a number of seconds is ignored, as if the line were not
            // there; of several, the longest.
            "crawl-delay" => {
                if let Some(delay) = crawl_delay(value) {
                    self.crawl_delay = self.crawl_delay.max(Some(delay));
                }
            }
            // An empty Disallow allows everything: no rule.
            _ if value.is_empty() => {}
            _ => self.rules.push((key == "allow", value.to_owned())),
        }
    }
}

/// A `Crawl-delay` value: seconds, decimals allowed, up to [`MAX_CRAWL_DELAY`]; `None` for
/// `0` (no delay) and for what is not a finite number of seconds from 0.
fn crawl_delay(value: &str) -> Option<Duration> {
    let seconds = value.parse::<f64>().ok()?;
    if !seconds.is_finite() || seconds <= 0.0 {
        return None;
    }
    // Capped before it is a `Duration`, which cannot hold 1e30 seconds.
    Some(Duration::from_secs_f64(
        seconds.min(MAX_CRAWL_DELAY.as_secs_f64()),
    ))
}

/// Whether `pattern` (`*` any run, `$` at its end the end of the path) matches the start of
/// `path`.
fn matches(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = path.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        if last && anchored {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    !anchored || rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
# comment
User-agent: other
Disallow: /

User-agent: *
Disallow: /private/
Allow: /private/open.html
Disallow: /*.pdf$
Crawl-delay: 0.5
Sitemap: http://a.example/sitemap.xml
";

    #[test]
    fn the_star_group_applies_when_none_names_the_crawler() {
        let robots = Robots::parse(FILE, "crawler");
        assert!(robots.allows("/"));
        assert!(!robots.allows("/private/x.html"));
        assert!(robots.allows("/private/open.html"));
        assert!(!robots.allows("/a/b.pdf"));
        assert!(robots.allows("/a/b.pdf?x"));
        assert_eq!(robots.crawl_delay, Some(Duration::from_millis(500)));
        assert_eq!(robots.sitemaps, ["http://a.example/sitemap.xml"]);
    }

    #[test]
    fn a_group_naming_the_crawler_replaces_the_star_group() {
        let text = format!("{FILE}\nUser-agent: Crawler\nUser-agent: x\nDisallow: /mine\n");
        let robots = Robots::parse(&text, "crawler");
        assert!(robots.allows("/private/x.html"));
        assert!(!robots.allows("/mine/y"));
        assert_eq!(robots.crawl_delay, None);
        assert!(Robots::parse("User-agent: *\nDisallow:\n", "crawler").allows("/x"));
    }

    #[test]
    fn the_crawl_delay_is_the_crawlers_groups_else_the_star_groups() {
        let text = "User-agent: *\nCrawl-delay: 5\n\nUser-agent: crawler\nCrawl-delay: 1.5\n";
        let delay = |agent| Robots::parse(text, agent).crawl_delay;
        assert_eq!(delay("crawler"), Some(Duration::from_millis(1500)));
        assert_eq!(delay("other"), Some(Duration::from_secs(5)));
        // A group naming the crawler without a delay has none, whatever `*` asks.
        let text = "User-agent: *\nCrawl-delay: 5\n\nUser-agent: crawler\nDisallow: /x\n";
        assert_eq!(Robots::parse(text, "crawler").crawl_delay, None);
        // A group of several agents, the crawler among them.
        let text = "User-agent: a\nUser-agent: CRAWLER\nCrawl-delay: 2\n";
        assert_eq!(
            Robots::parse(text, "crawler").crawl_delay,
            Some(Duration::from_secs(2))
        );
    }

    #[test]
    fn a_crawl_delay_is_capped_and_an_invalid_one_ignored() {
        let delay = |value: &str| {
            Robots::parse(&format!("User-agent: *\nCrawl-delay: {value}\n"), "crawler").crawl_delay
        };
        assert_eq!(delay("0.25"), Some(Duration::from_millis(250)));
        assert_eq!(delay(" 3 # polite"), Some(Duration::from_secs(3)));
        assert_eq!(delay("3600"), Some(MAX_CRAWL_DELAY));
        assert_eq!(delay("1e30"), Some(MAX_CRAWL_DELAY));
        for invalid in ["0", "-1", "", "soon", "1s", "NaN", "inf", "1,5"] {
            assert_eq!(delay(invalid), None, "{invalid:?}");
        }
        // An invalid line leaves a valid one as it was; of two, the longer applies.
        let text = "User-agent: *\nCrawl-delay: 2\nCrawl-delay: x\nCrawl-delay: 1\n";
        assert_eq!(
            Robots::parse(text, "crawler").crawl_delay,
            Some(Duration::from_secs(2))
        );
    }

    #[test]
    fn wildcards_match_as_rfc_9309_says() {
        assert!(matches("/a*b", "/a/x/b/c"));
        assert!(matches("/a*b$", "/axb"));
        assert!(!matches("/a*b$", "/axbc"));
        assert!(matches("/", "/anything"));
        assert!(!matches("/x$", "/x/"));
    }
}
