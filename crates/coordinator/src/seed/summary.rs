//! What a whole seed did ([`SeedSummary`]), and the sources it could not read to their end
//! ([`Unread`]), as printed at its end.

use crawler_queue::Seeded;

/// What a whole seed did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeedSummary {
    pub seeded: Seeded,
    /// Lines that were not URLs, reported on stderr.
    pub rejected: u64,
    /// URLs left out by `--include`/`--exclude`.
    pub excluded: u64,
    /// Pages to read (`--follow`: start pages, and sitemap URLs in scope).
    pub pages: u64,
    /// Relative links of `--links-in` files skipped for want of `--base`.
    pub relative: u64,
    /// Files of `--links-in` read.
    pub files: u64,
    /// Sources read to their end.
    pub complete: u64,
    /// Sources not read to their end, in order (each reported on stderr when it failed).
    pub unread: Vec<Unread>,
}

/// A source that could not be read to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unread {
    /// As printed: `<stdin>` for `-`, a path without credentials.
    pub name: String,
    /// Lines read before the error (their URLs are seeded); `None` if it could not be opened.
    pub lines: Option<u64>,
}

impl SeedSummary {
    /// Whether anything was read: a whole source, or lines of one before it broke.
    pub fn read_anything(&self) -> bool {
        self.complete > 0 || self.unread.iter().any(|u| u.lines.unwrap_or(0) > 0)
    }
}

impl std::fmt::Display for SeedSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "added {}, already known {}, rejected {}",
            self.seeded.added, self.seeded.known, self.rejected
        )?;
        if self.excluded > 0 {
            write!(f, ", excluded {}", self.excluded)?;
        }
        if self.pages > 0 {
            write!(f, ", pages to follow {}", self.pages)?;
        }
        if self.files > 0 {
            write!(f, ", files read {}", self.files)?;
        }
        if self.relative > 0 {
            write!(f, ", relative links skipped {} (no --base)", self.relative)?;
        }
        if self.seeded.rechecked > 0 {
            write!(f, ", due again {}", self.seeded.rechecked)?;
        }
        for (i, unread) in self.unread.iter().enumerate() {
            f.write_str(if i == 0 {
                "; not read to the end: "
            } else {
                ", "
            })?;
            match unread.lines {
                Some(n) => write!(f, "{} (stopped after line {n})", unread.name)?,
                None => write!(f, "{} (cannot open)", unread.name)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_each_source_not_read_to_the_end() {
        let mut summary = SeedSummary {
            rejected: 2,
            complete: 1,
            ..SeedSummary::default()
        };
        summary.seeded.added = 7;
        assert_eq!(summary.to_string(), "added 7, already known 0, rejected 2");
        summary.excluded = 3;
        assert_eq!(
            summary.to_string(),
            "added 7, already known 0, rejected 2, excluded 3"
        );
        summary.excluded = 0;
        summary.files = 4;
        assert_eq!(
            summary.to_string(),
            "added 7, already known 0, rejected 2, files read 4"
        );
        summary.files = 0;
        summary.unread = vec![
            Unread {
                name: "big.txt".into(),
                lines: Some(1500),
            },
            Unread {
                name: "missing.txt".into(),
                lines: None,
            },
        ];
        assert_eq!(
            summary.to_string(),
            "added 7, already known 0, rejected 2; not read to the end: \
             big.txt (stopped after line 1500), missing.txt (cannot open)"
        );
    }

    #[test]
    fn nothing_was_read_when_every_source_failed_before_its_first_line() {
        let unread = |lines| Unread {
            name: "x".into(),
            lines,
        };
        let mut summary = SeedSummary {
            unread: vec![unread(None), unread(Some(0))],
            ..SeedSummary::default()
        };
        assert!(!summary.read_anything());
        summary.unread.push(unread(Some(3)));
        assert!(summary.read_anything());
    }
}
