//! What the requests share: the queue, the sampled counts and the plots' cache, the options
//! that decide what a request may do, and the counts of wrong tokens and running searches.

use std::time::Duration;

use crawler_queue::Queue;

use super::auth::Access;
use super::client::Proxies;
use super::counts::Counts;
use super::history;
use super::logins::Logins;
use super::origin::AllowedHosts;
use super::searches::Searches;
use super::settings::Settings;

pub struct Dashboard {
    pub queue: Queue,
    pub counts: Counts,
    pub history: history::Cache,
    /// Whether `POST /api/pause` and `/api/resume` may act (`--allow-control`).
    pub allow_control: bool,
    /// Who may see it.
    pub access: Access,
    pub hosts: AllowedHosts,
    pub proxies: Proxies,
    pub session_lifetime: Duration,
    pub logins: Logins,
    pub searches: Searches,
    /// How long the login form's body may take to arrive: as long as a head may.
    pub body_timeout: Duration,
}

impl Dashboard {
    pub fn new(queue: Queue, counts: Counts, settings: Settings) -> Dashboard {
        Dashboard {
            queue,
            counts,
            history: history::Cache::default(),
            allow_control: settings.allow_control,
            access: settings.access,
            hosts: settings.hosts,
            proxies: settings.proxies,
            session_lifetime: settings.session_lifetime,
            logins: Logins::default(),
            searches: Searches::new(settings.limits.max_searches),
            body_timeout: settings.limits.header_timeout,
        }
    }
}
