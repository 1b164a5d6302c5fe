//! One crawl's figures ([`Crawl`]), which `crawl` measures and `report` prints.

use super::proc::Measured;

/// One crawl's figures: the seed's and the worker's costs, and the CPU around them.
pub struct Crawl {
    pub backend: &'static str,
    pub n: usize,
    pub seed: Measured,
    pub worker: Measured,
    /// CPU seconds during the worker phase: (HTTP server, mariadbd, whole machine busy,
    /// whole machine capacity).
    pub cpu: (f64, f64, f64, f64),
}

impl Crawl {
    pub fn end_to_end_rate(&self) -> f64 {
        self.n as f64 / (self.seed.wall + self.worker.wall).as_secs_f64()
    }

    pub fn worker_rate(&self) -> f64 {
        self.n as f64 / self.worker.wall.as_secs_f64()
    }
}
