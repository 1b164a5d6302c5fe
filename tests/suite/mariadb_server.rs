//! The private MariaDB server that the tests start and own.

use std::time::Duration;

use crawler_tests::mariadb::{self, MariaDb};
use sqlx::mysql::MySqlPoolOptions;
use sqlx::{Connection, MySqlConnection};

async fn connect(url: &str) -> MySqlConnection {
    MySqlConnection::connect(url).await.expect("connect")
}

#[tokio::test]
async fn shared_server_answers_over_its_url() {
    let url = mariadb::shared().create_database().await;
    let mut connection = connect(&url).await;

    let version: String = sqlx::query_scalar("SELECT VERSION()")
        .fetch_one(&mut connection)
        .await
        .unwrap();

    assert!(!version.is_empty());
}

#[tokio::test]
async fn each_created_database_is_a_new_one() {
    let first = mariadb::shared().create_database().await;
    let second = mariadb::shared().create_database().await;
    assert_ne!(first, second);

    let mut connection = connect(&first).await;
    sqlx::query("CREATE TABLE t (id INT)")
        .execute(&mut connection)
        .await
        .unwrap();
    let mut connection = connect(&second).await;
    let tables: Vec<String> = sqlx::query_scalar("SHOW TABLES")
        .fetch_all(&mut connection)
        .await
        .unwrap();
    assert!(tables.is_empty(), "second database sees {tables:?}");
}

#[tokio::test]
async fn data_survives_stop_and_restart() {
    let mut server = MariaDb::start();
    let url = server.create_database().await;
    let mut connection = connect(&url).await;
    sqlx::query("CREATE TABLE t (id INT)")
        .execute(&mut connection)
        .await
        .unwrap();
    sqlx::query("INSERT INTO t VALUES (7)")
        .execute(&mut connection)
        .await
        .unwrap();
    drop(connection);

    server.stop();
    assert!(
        MySqlConnection::connect(&url).await.is_err(),
        "a stopped server accepted a login"
    );
    server.restart();

    let mut connection = connect(&url).await;
    let id: i32 = sqlx::query_scalar("SELECT id FROM t")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!(id, 7);
}

#[tokio::test]
async fn killed_connection_fails_its_next_query_and_the_pool_recovers() {
    let server = MariaDb::start();
    let pool = MySqlPoolOptions::new()
        .max_connections(1)
        .test_before_acquire(false)
        .connect(&server.create_database().await)
        .await
        .unwrap();
    let before: u64 = sqlx::query_scalar("SELECT CONNECTION_ID()")
        .fetch_one(&pool)
        .await
        .unwrap();

    server.kill_connections().await;

    assert!(
        sqlx::query("SELECT 1").execute(&pool).await.is_err(),
        "a killed connection answered"
    );
    let after: u64 = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Ok(id) = sqlx::query_scalar("SELECT CONNECTION_ID()")
                .fetch_one(&pool)
                .await
            {
                return id;
            }
        }
    })
    .await
    .expect("the pool reconnects");
    assert_ne!(before, after);
}
