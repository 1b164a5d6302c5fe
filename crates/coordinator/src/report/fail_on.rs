//! What makes a report exit 4 (`--fail-on`).

use crawler_queue::{Only, Verdict};

/// What makes a report exit 4 (`--fail-on`): a site in the report's scope (every site, or
/// `--host`'s) whose verdict this names, whatever the report lists. A site not checked yet has
/// no verdict, and counts for neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// A dead site: 404, 410, another 4xx.
    Dead,
    /// A site that is not alive: dead, blocked, unreachable or error. Not an excluded one,
    /// which was left out on purpose and never asked.
    NotAlive,
    /// A dead site that `crawler-worker --confirm`'s policy confirmed.
    ConfirmedDead,
    /// A link to a section (`page#section`) that its page, alive, does not have.
    MissingFragment,
    /// An alive link through a permanent redirect (301, 308) to another page (`--moved`).
    Moved,
}

impl FailOn {
    /// The verdicts that fail.
    pub fn verdicts(self) -> &'static [Verdict] {
        match self {
            FailOn::Dead | FailOn::ConfirmedDead => &[Verdict::Dead],
            FailOn::MissingFragment | FailOn::Moved => &[Verdict::Alive],
            FailOn::NotAlive => &[
                Verdict::Dead,
                Verdict::Blocked,
                Verdict::Unreachable,
                Verdict::Error,
            ],
        }
    }
}

impl FailOn {
    /// Which sites of [`FailOn::verdicts`] fail.
    pub fn only(self) -> Only {
        match self {
            FailOn::ConfirmedDead => Only::Confirmed,
            FailOn::MissingFragment => Only::MissingFragments,
            FailOn::Moved => Only::Moved,
            FailOn::Dead | FailOn::NotAlive => Only::All,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_alive_fails_on_every_verdict_but_alive_and_excluded() {
        let mut verdicts = FailOn::NotAlive.verdicts().to_vec();
        verdicts.extend([Verdict::Alive, Verdict::Excluded]);
        verdicts.sort_by_key(|v| v.as_str());
        let mut all = Verdict::ALL.to_vec();
        all.sort_by_key(|v| v.as_str());
        assert_eq!(verdicts, all);
        assert_eq!(FailOn::Dead.verdicts(), [Verdict::Dead]);
    }
}
