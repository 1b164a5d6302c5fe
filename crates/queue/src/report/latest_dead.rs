//! The dead sites checked last, optionally only those whose URL contains a text: the
//! dashboard's searchable list.
//!
//! A done site keeps `next_check_at = checked_at` (see the schema), so the newest verdicts are
//! the end of the `sites_due` index's done part: read backwards, the query stops after
//! `limit` dead sites. Without a search that is a few pages of the index; a search for a text
//! few URLs contain reads further back, up to every done site for one no URL contains (bounded
//! by the list's size, and only while someone types it).

use super::checked::{Checked, CheckedRow, CHECKED_COLUMNS};
use super::reports::Reports;
use crate::db::with_pool;
use crate::error::Error;
use crate::sql::{cached, case_insensitive_like, sites_using_on_sqlite_too, SitesIndex};

/// `LIKE`'s escape character here: not the backslash, which MySQL would read inside the SQL
/// string literal too.
const ESCAPE: char = '!';

impl Reports<'_> {
    /// Up to `limit` dead sites, the most recently checked first; only those whose URL
    /// contains `text` (case-insensitively for ASCII) when it is not empty.
    pub async fn latest_dead(&self, text: &str, limit: u32) -> Result<Vec<Checked>, Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
            // MariaDB would otherwise pick `sites_verdict` and sort every dead site.
            let sites = sites_using_on_sqlite_too(dialect, SitesIndex::Due);
            let like = case_insensitive_like(dialect);
            format!(
                "SELECT {CHECKED_COLUMNS} FROM {sites} \
                 WHERE state = {{done}} AND verdict = {{dead}} AND url {like} ? ESCAPE '{ESCAPE}' \
                 ORDER BY state DESC, next_check_at DESC, part DESC, id DESC LIMIT ?"
            )
        });
        let pattern = format!("%{}%", escape_like(text));
        let rows: Vec<CheckedRow> = with_pool!(&self.db, pool => {
            sqlx::query_as(sql).bind(pattern).bind(i64::from(limit)).fetch_all(pool).await?
        });
        rows.into_iter().map(Checked::try_from).collect()
    }
}

/// `text` with `LIKE`'s wildcards (and the escape character) escaped: matched as written.
fn escape_like(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | ESCAPE) {
            escaped.push(ESCAPE);
        }
        escaped.push(c);
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_in_a_search_are_matched_as_written() {
        assert_eq!(escape_like("a%b_c!d"), "a!%b!_c!!d");
        assert_eq!(escape_like("/dead/"), "/dead/");
    }
}
