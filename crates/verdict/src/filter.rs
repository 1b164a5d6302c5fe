//! `--include` and `--exclude`: regular expressions that choose the URLs to take, shared by
//! `crawler-seed` (a line left out is not seeded, and is counted) and `crawler-worker` (a site
//! left out gets no request). Both match the URL as the seed normalized it, so a pattern means
//! the same thing to both.

/// Re-exported, so that the binaries and tests build filters without naming the crate.
pub use regex::Regex;

/// Which URLs to take. The `regex` crate's syntax, matched anywhere in the URL (anchor with
/// `^…$`); it runs in linear time whatever the pattern.
#[derive(Clone, Debug, Default)]
pub struct UrlFilter {
    /// A URL must match one of these, if there is any (`--include`).
    pub include: Vec<Regex>,
    /// A URL matching one of these is left out, whatever `include` says (`--exclude`).
    pub exclude: Vec<Regex>,
}

impl UrlFilter {
    /// Whether `url` is taken: it matches an `--include` (or there is none) and no `--exclude`.
    pub fn allows(&self, url: &str) -> bool {
        let included = self.include.is_empty() || self.include.iter().any(|r| r.is_match(url));
        included && !self.exclude.iter().any(|r| r.is_match(url))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(include: &[&str], exclude: &[&str]) -> UrlFilter {
        let regexes = |patterns: &[&str]| patterns.iter().map(|p| Regex::new(p).unwrap()).collect();
        UrlFilter {
            include: regexes(include),
            exclude: regexes(exclude),
        }
    }

    #[test]
    fn no_pattern_takes_every_url() {
        assert!(UrlFilter::default().allows("https://a.example/"));
    }

    #[test]
    fn an_url_needs_one_include_and_no_exclude() {
        let only_docs = filter(&[r"^https://docs\.", "/manual/"], &[r"\.pdf$"]);
        assert!(only_docs.allows("https://docs.example/a"));
        assert!(only_docs.allows("https://www.example/manual/b"));
        assert!(!only_docs.allows("https://www.example/blog"));
        assert!(!only_docs.allows("https://docs.example/a.pdf"));
        let no_pdf = filter(&[], &[r"\.pdf$"]);
        assert!(no_pdf.allows("https://www.example/blog"));
        assert!(!no_pdf.allows("https://www.example/x.pdf"));
    }
}
