//! The seed's input at its worst: invisible characters around lines, credentials in URLs, a
//! read error part-way, missing files among good ones. Every good line is still seeded, every
//! bad one named; and the report never prints credentials, whatever the database holds.

use crawler_queue::Db;
use crawler_tests::TestDb;

/// Every URL in the queue, sorted.
pub async fn stored_urls(db: &TestDb) -> Vec<String> {
    let raw = Db::connect(&db.url, 1).await.unwrap();
    let sql = "SELECT url FROM sites ORDER BY url";
    let rows: Vec<(String,)> = match &raw {
        Db::MySql(pool) => sqlx::query_as(sql).fetch_all(pool).await,
        Db::Sqlite(pool) => sqlx::query_as(sql).fetch_all(pool).await,
    }
    .unwrap();
    raw.close().await;
    rows.into_iter().map(|(url,)| url).collect()
}
