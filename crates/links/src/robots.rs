//! robots.txt (RFC 9309) for one user agent: the group that names it (`crawler`), or else `*`;
//! `Allow` and `Disallow` with `*` and `$`, the longest match winning and `Allow` winning a
//! tie; `Crawl-delay`; and the file's `Sitemap` lines, whichever group they are in.

use std::time::Duration;

/// The rules of one robots.txt for one user agent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Robots {
    /// `(allow, pattern)`, in the file's order.
    rules: Vec<(bool, String)>,
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
            "crawl-delay" => {
                self.crawl_delay = value
                    .parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .map(|s| Duration::from_secs_f64(s.min(86_400.0)));
            }
            // An empty Disallow allows everything: no rule.
            _ if value.is_empty() => {}
            _ => self.rules.push((key == "allow", value.to_owned())),
        }
    }
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
    fn wildcards_match_as_rfc_9309_says() {
        assert!(matches("/a*b", "/a/x/b/c"));
        assert!(matches("/a*b$", "/axb"));
        assert!(!matches("/a*b$", "/axbc"));
        assert!(matches("/", "/anything"));
        assert!(!matches("/x$", "/x/"));
    }
}
