//! Statements run straight on a test database, beside the queue: to set up what an older
//! version left, or to read what the queue wrote.

use crawler_queue::Db;

/// Runs `sql` (fixed text, no values; several statements allowed) on `db`.
pub async fn execute(db: &Db, sql: &str) {
    match db {
        Db::MySql(pool) => sqlx::raw_sql(sql).execute(pool).await.map(drop),
        Db::Postgres(pool) => sqlx::raw_sql(sql).execute(pool).await.map(drop),
        Db::Sqlite(pool) => sqlx::raw_sql(sql).execute(pool).await.map(drop),
    }
    .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// The one number `sql` (fixed text, no values) reads from `db`.
pub async fn scalar(db: &Db, sql: &str) -> i64 {
    match db {
        Db::MySql(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
        Db::Postgres(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
        Db::Sqlite(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
    }
    .unwrap_or_else(|e| panic!("{sql}: {e}"))
}
