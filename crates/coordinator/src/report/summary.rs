//! The summary: where the crawl stands, who works on it, and where the dead sites are.

use std::io::Write;

use crawler_queue::{Queue, Verdict};

use crate::Error;

/// Counts per verdict and per state, the live workers and their rates, and the hosts with the
/// most dead sites.
pub async fn write_summary(queue: &Queue, out: &mut impl Write) -> Result<(), Error> {
    let states = queue.state_counts().await?;
    let verdicts = queue.verdict_counts().await?;
    let now = queue.now().await?;
    writeln!(
        out,
        "sites: {} pending, {} claimed, {} done",
        states.pending, states.claimed, states.done
    )?;
    for v in Verdict::ALL {
        let n = verdicts
            .iter()
            .find(|(x, _)| *x == v)
            .map_or(0, |(_, n)| *n);
        writeln!(out, "{:<12} {n}", format!("{v}:"))?;
    }
    let workers = queue.workers().await?;
    writeln!(out, "workers: {}", workers.len())?;
    for w in workers {
        let secs = ((w.heartbeat_at - w.started_at) as f64 / 1000.0).max(0.001);
        let seen = (now - w.heartbeat_at) as f64 / 1000.0;
        writeln!(
            out,
            "  {} on {}: {} checked, {:.1}/s, last heard {seen:.0}s ago",
            w.id,
            w.host,
            w.checked,
            w.checked as f64 / secs
        )?;
    }
    let hosts = queue.top_dead_hosts(10).await?;
    if !hosts.is_empty() {
        writeln!(out, "hosts with the most dead sites:")?;
        for (host, n) in hosts {
            writeln!(out, "  {n:>8} {host}")?;
        }
    }
    out.flush()?;
    Ok(())
}
