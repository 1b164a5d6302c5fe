//! The HTTP server child: one listener per loopback host, all on one port, answering 200 with
//! an empty body to everything, with keep-alive.

use std::convert::Infallible;
use std::io::Write;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crawler_tests::bench::{bind_all, raise_fd_limit};

pub fn run() {
    raise_fd_limit();
    let runtime = tokio::runtime::Runtime::new().expect("server runtime");
    runtime.block_on(async {
        let listeners = bind_all().await;
        let port = listeners[0].local_addr().unwrap().port();
        println!("READY {port}");
        std::io::stdout().flush().unwrap();
        for listener in listeners {
            tokio::spawn(serve(listener));
        }
        std::future::pending::<()>().await;
    });
}

async fn serve(listener: TcpListener) {
    while let Ok((stream, _)) = listener.accept().await {
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(|_req: Request<hyper::body::Incoming>| async {
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::new())))
                });
            let conn = hyper::server::conn::http1::Builder::new();
            let _ = conn.serve_connection(TokioIo::new(stream), service).await;
        });
    }
}
