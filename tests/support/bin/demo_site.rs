//! `crawler-demo-site [ADDR]`: serves the test site (see `site.rs`) on ADDR (default
//! 127.0.0.1:8808) for the quick start's example list, until killed.

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8808".into());
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("error: cannot listen on {addr}: {error}");
            std::process::exit(1);
        }
    };
    eprintln!(
        "demo site on http://{addr}/ (alive, dead, gone, redirect, slow, blocked, error pages)"
    );
    crawler_tests::site::serve(listener).await;
}
