//! The fleet's store of soft-404 probes, for the checker (`check/soft404/`): its
//! [`ProbeStore`] on the queue's view of probes (`Queue::probes`). Here, beside the rest of what
//! the worker asks of the queue, so that the checker needs nothing of the queue's types but
//! its rows.

use crawler_queue::soft404::{LastCheck, ProbeRow};
use futures::future::BoxFuture;

use crate::check::{ProbeStore, SOFT_404_TTL as TTL};

impl ProbeStore for crawler_queue::Queue {
    fn load<'a>(&'a self, host: &'a str, pattern: &'a str) -> BoxFuture<'a, Option<ProbeRow>> {
        Box::pin(async move {
            let ttl = TTL.as_millis() as i64;
            self.probes()
                .load_probe(host, pattern, ttl)
                .await
                .inspect_err(|e| {
                    let error = crawler_queue::error_chain(e);
                    tracing::debug!(%error, host, "cannot load a soft-404 probe")
                })
                .ok()
                .flatten()
        })
    }

    fn save<'a>(&'a self, host: &'a str, pattern: &'a str, row: ProbeRow) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Err(e) = self.probes().save_probe(host, pattern, &row).await {
                let error = crawler_queue::error_chain(&e);
                tracing::debug!(%error, host, "cannot store a soft-404 probe");
            }
        })
    }

    fn patterns<'a>(&'a self, host: &'a str) -> BoxFuture<'a, Vec<String>> {
        Box::pin(async move {
            let ttl = TTL.as_millis() as i64;
            self.probes()
                .probed_patterns(host, ttl)
                .await
                .inspect_err(|e| {
                    let error = crawler_queue::error_chain(e);
                    tracing::debug!(%error, host, "cannot list a host's soft-404 probes")
                })
                .unwrap_or_default()
        })
    }

    fn last_check<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Option<LastCheck>> {
        Box::pin(async move {
            self.probes()
                .last_check(url)
                .await
                .inspect_err(|e| {
                    let error = crawler_queue::error_chain(e);
                    tracing::debug!(%error, url, "cannot read a site's last check")
                })
                .ok()
                .flatten()
        })
    }
}
