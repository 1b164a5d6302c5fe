//! Which sites a report reads ([`Scope`]: [`Only`] some of them, of one host, changed since a
//! time), the condition and bound values that say it in SQL, and where the next page of a
//! verdict starts ([`After`]).

use super::checked::Checked;
use super::host_filter::{self, HostFilter, Shape};
use crate::sql::placeholders;

/// Which of the sites with the verdicts asked a report keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Only {
    /// Every one.
    #[default]
    All,
    /// The dead sites that `--confirm`'s policy confirmed.
    Confirmed,
    /// The fragments (`page#section`) whose page, alive, lacks the section: `fragment` is
    /// `missing` (their verdict is the page's, alive).
    MissingFragments,
    /// The links a permanent redirect sends elsewhere: `moved_to` is the URL to write instead.
    /// In the order they moved (`moved_at`, the `sites_moved` index); `Scope::changed_since`
    /// keeps those that moved since.
    Moved,
}

impl Only {
    /// The time its sites are read in the order of, and a window of changes is of: when they
    /// moved, or when their verdict began.
    pub(super) fn since_column(self) -> &'static str {
        match self {
            Only::Moved => "moved_at",
            Only::All | Only::Confirmed | Only::MissingFragments => "verdict_since",
        }
    }
}

/// Which sites of a verdict a report reads: some of them ([`Only`]), of one host, whose
/// verdict began at or after a time.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scope<'a> {
    pub only: Only,
    pub host: Option<&'a HostFilter>,
    /// Unix milliseconds: only the sites whose current verdict began then or later (a first
    /// verdict or a change: `crawler-report --changed-since`).
    pub changed_since: Option<i64>,
}

/// What shapes a [`Scope`]'s condition (its values are bound).
pub(super) type ScopeShape = (Only, Shape, bool);

impl Scope<'_> {
    pub(super) fn shape(&self) -> ScopeShape {
        (
            self.only,
            host_filter::shape(self.host),
            self.changed_since.is_some(),
        )
    }
}

/// Binds what [`scope_condition`] asks for.
pub(super) fn bind_scope<'q, DB: sqlx::Database, O>(
    q: sqlx::query::QueryAs<'q, DB, O, <DB as sqlx::Database>::Arguments<'q>>,
    scope: Scope<'q>,
) -> sqlx::query::QueryAs<'q, DB, O, <DB as sqlx::Database>::Arguments<'q>>
where
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i32: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let q = match scope.changed_since {
        Some(since) => q.bind(since),
        None => q,
    };
    host_filter::bind(q, scope.host)
}

/// The condition of a scope of `shape`, after a verdict's (bound values are the names of the
/// states and verdicts, `sql::statement`'s, so nothing here is user input): the time, then
/// the host, bound by [`Scope::bind`].
pub(super) fn scope_condition((only, host, since): ScopeShape) -> String {
    let since = match since {
        true => format!("AND {} >= ? ", only.since_column()),
        false => String::new(),
    };
    let only = match only {
        Only::All => "",
        Only::Confirmed => "AND confirmed_at IS NOT NULL ",
        Only::MissingFragments => "AND fragment = 'missing' ",
        Only::Moved => "AND moved_at IS NOT NULL ",
    };
    format!("{only}{since}{}", host_filter::condition(host))
}

/// The filter of [`Reports::any_checked`] and [`Reports::checked_count`]: one of `n` verdicts
/// (bound in order), then the scope's condition.
pub(super) fn with_verdicts(n: usize, scope: ScopeShape) -> String {
    format!(
        "verdict IN ({}) {}",
        placeholders(n),
        scope_condition(scope)
    )
}

/// Where the next page of a verdict starts: after this site, in the order the sites got the
/// verdict (`verdict_since`, then id), or moved ([`Only::Moved`]). [`After::START`] starts at
/// the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct After {
    pub(super) since: i64,
    pub(super) id: i64,
}

impl After {
    pub const START: After = After {
        since: i64::MIN,
        id: i64::MIN,
    };

    /// After `site`, the last of a page of `only`.
    pub fn site(site: &Checked, only: Only) -> After {
        let since = match only {
            Only::Moved => site.moved_at.unwrap_or(i64::MAX),
            Only::All | Only::Confirmed | Only::MissingFragments => site.changed_at,
        };
        After { since, id: site.id }
    }
}
