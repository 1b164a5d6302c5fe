//! crawler-worker: claims batches of sites from the queue and checks them over HTTP.

pub mod check;
