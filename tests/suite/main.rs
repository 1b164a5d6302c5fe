//! All integration tests, in one binary (one link, one place to look).
//!
//! Every database test runs on SQLite, MariaDB and PostgreSQL (`on_every_backend!`). The MariaDB
//! tests use a private server the suite starts (tests/support/mariadb.rs), or the server named
//! by `CRAWLER_TEST_MYSQL_URL`; they never skip.
//!
//! - `queue`: the lease queue's operations, on each backend; `history`: the verdict changes
//!   written with them, and their pruning.
//! - `e2e`: the binaries end to end, on each backend.
//! - `excluded`: the verdict of URLs a worker's `--include`/`--exclude` leave out, in the
//!   reports and `--fail-on`, and the migration of the rows older versions stored as errors.
//! - `follow`: recursive checks (`--follow`, `--sitemap`, `--links-in`) of a local site by two
//!   workers: every link checked once, each page read once, broken links with their referrers.
//! - `fragments`: links to sections (`page#section`) of real pages served by nginx, with ids
//!   removed: every broken fragment reported with its pages, each page read once.
//! - `fleet`: several workers keep to one host's limits together, as the host measures them.
//! - `addresses`: two workers keep to a server address's limits over its many names (a test
//!   DNS), and four starting together keep to each small host's rate.
//! - `hostile`: hostile servers, input lines, pipes and flags.
//! - `faults`: kills, a database restart, killed connections, a paused worker (MariaDB).
//! - `galera`: a fleet on a three-node Galera cluster: exactly once across nodes, a node killed.
//! - `partitions`: host partitions (fleet-wide politeness): leases, fence, balance, recovery.
//! - `balance`: work-aware balance (an idle worker is handed a busy partition) and the hosts'
//!   shared error rate.
//! - `report_hosts`: `crawler-report --hosts` in every format, against a queue set up by hand.
//! - `repo_files`: a repository's docs (`--links-in` a tree, a glob): ignore files and hidden
//!   files, every link at its line and column, GitHub workflow commands that parse back, SARIF
//!   valid against the SARIF 2.1.0 schema.
//! - `reports`: JUnit and Markdown reports, archived copies of dead links (`--archive-lookup`
//!   against a stand-in API), dead confirmed over time (`--confirm N:SPAN`).
//! - `pipelines`: what scripts and CI jobs rely on: `--fail-on` exit codes, `-o FILE`, the
//!   summary and site columns in every format, `--host HOST:PORT`, each binary's help, environment
//!   variables, man page and completions.
//! - `notify`: `crawler-reap --notify` against a local receiver: every change delivered, none
//!   in two digests, a failed POST sent again as itself, across a SIGKILL and two notifiers.
//! - `rot`: link rot over time: passes over a site whose links die, recover and move, and what
//!   `crawler-report --changed-since` lists, counts and fails on.
//! - `pause`: pausing and resuming the fleet: a paused worker claims nothing, keeps its leases,
//!   and finishes the crawl once resumed.
//! - `dashboard`: `crawler-dashboard`'s endpoints, and its page in headless Chromium (`browser`:
//!   chromedriver and a browser that can reach nothing but loopback); `dashboard_auth`: its
//!   token, login cookie and refusal to listen beyond loopback without one;
//!   `dashboard_defences`: a foreign `Host`, a cross-origin change, the guard headers, slow
//!   and idle connections, the caps on connections and searches; `dashboard_sessions`:
//!   sessions ended at log out (every backend) and at expiry, wrong tokens limited per client,
//!   who paused and how.
//! - `mariadb_server`: the private test server itself.
//! - `metrics`: a worker's `--metrics` scraped during a crawl, against the database.
//! - `config`: `crawler.toml` (`--config`): options from a file, `${VAR}`, precedence, errors
//!   naming the key's line.
//! - `compose`: docker-compose.yml and the Dockerfile, checked without a container engine.
//! - `options`: the worker's request options (headers, basic auth, cookies, accepted statuses,
//!   CAs, contact): bad values are usage errors, and secrets never print.
//! - `soft404`: `--soft-404` on a labelled corpus: soft 404s found and explained, real pages
//!   alive, each host and pattern probed once per fleet.
//! - `requests`: what a verdict costs, as a metered server counts it: a retry asks with GET,
//!   a host whose HEAD lies is asked with GET, a host whose checks queue is asked with GET.
//! - `hosts`: decisions at the host's level: a DNS-dead or hung host decided once, one
//!   throttling path slowing its host but never stopping it, an absurd Retry-After drained.
//! - `docs`: README.md and docs/*.md stay true: links and paths exist, the README is short,
//!   and the flags their code blocks give the binaries are ones the binaries accept.
//! - `progress`: what a worker tells: a bar and colour on a terminal (in a pseudo-terminal),
//!   plain lines in a pipe, `NO_COLOR`, `--log-format json`, `-q`, verdicts counted once.

mod addresses;
mod balance;
mod browser;
mod compose;
mod config;
mod dashboard;
mod dashboard_auth;
mod dashboard_defences;
mod dashboard_sessions;
mod docs;
mod e2e;
mod excluded;
mod faults;
mod fleet;
mod follow;
mod fragments;
mod galera;
mod history;
mod hostile;
mod hosts;
mod mariadb_server;
mod metrics;
mod notify;
mod options;
mod partitions;
mod pause;
mod pipelines;
mod progress;
mod queue;
mod repo_files;
mod report_hosts;
mod reports;
mod requests;
mod rot;
mod soft404;
