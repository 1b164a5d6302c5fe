//! Pausing and resuming the fleet, for `crawler-reap --pause`/`--resume` and the dashboard's
//! buttons: the switch is in the database (see [`crawler_queue::control`]), so whoever sets it,
//! every worker reads it with its next heartbeat.

use crawler_queue::Queue;

use crate::error::Error;

/// Pauses (`pause`) or resumes the fleet; returns the line that says what happened, which
/// tells whether it was so already.
pub async fn set_paused(queue: &Queue, pause: bool) -> Result<String, Error> {
    let line = match (pause, pause_or_resume(queue, pause).await?) {
        (true, true) => "fleet paused: workers finish what they hold and claim nothing more",
        (true, false) => "fleet already paused",
        (false, true) => "fleet resumed: workers claim again",
        (false, false) => "fleet not paused: nothing to resume",
    };
    Ok(line.to_owned())
}

async fn pause_or_resume(queue: &Queue, pause: bool) -> Result<bool, Error> {
    Ok(if pause {
        queue.control().pause().await?
    } else {
        queue.control().resume().await?
    })
}
