//! What the book keeps of a host's soft-404 probes (`--soft-404`): one cell per path pattern,
//! each a [`Probe`] asked once and, for a page in the gray zone, settled by a second request,
//! and the directory patterns admitted against the host's cap. Plain data beside the book:
//! finding, asking and storing probes is `soft404/`'s.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use crate::soft404::decide::Answer;

/// What a host answered for a path that cannot exist.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Probe {
    /// The path asked.
    pub path: String,
    /// `None` when no answer came (then nothing is judged by it).
    pub answer: Option<Answer>,
    /// Whether what the host's not-found page varies by is known: the pattern was asked
    /// twice (its `spread` is measured), or once where a second request tells nothing (an
    /// error, a redirect, no body). A probe asked once is asked again only for a page in the
    /// gray zone (`soft404/decide.rs`, `gray`).
    pub settled: bool,
}

impl Probe {
    /// What stands for a pattern past its host's cap (`soft404/probe.rs`, `DIRECTORY_PROBES`):
    /// never asked, so, like a probe that got no answer, it judges nothing. Kept in the worker
    /// only.
    pub(crate) fn unprobed() -> Probe {
        Probe {
            path: String::new(),
            answer: None,
            settled: true,
        }
    }

    /// Whether a page is worth comparing with this probe: only when the host answered the
    /// impossible path 2xx or 3xx. A real 404 says the host is honest, and costs nothing more.
    pub(crate) fn compares(&self) -> bool {
        self.answer
            .as_ref()
            .is_some_and(|a| (200..400).contains(&a.status))
    }
}

/// A pattern's probe in a worker: asked once, then, if a page in the gray zone needs it,
/// settled by a second request. The first check of a pattern probes; the others wait here.
#[derive(Default)]
pub(crate) struct ProbeCell {
    pub first: OnceCell<Arc<Probe>>,
    pub settled: OnceCell<Arc<Probe>>,
}

/// The probes a worker knows of one host. Behind a std mutex in the host's entry: held only to
/// find or insert a cell, never across an await.
#[derive(Default)]
pub(crate) struct HostProbes {
    /// One cell per pattern.
    cells: HashMap<String, Arc<ProbeCell>>,
    /// The directory patterns the host was admitted to be probed in by this worker, against
    /// the cap: a pattern counts from when its probe is decided, so checks of the host's
    /// directories at once cannot all pass the cap.
    pub admitted: HashSet<String>,
}

/// A host's name and its probes, as the book keeps them.
pub(crate) type ProbesOf<'a> = (&'a str, &'a Mutex<HostProbes>);

impl HostProbes {
    /// The cell of the pattern `key`, made empty when absent.
    pub(crate) fn cell(&mut self, key: &str) -> Arc<ProbeCell> {
        self.cells.entry(key.to_owned()).or_default().clone()
    }
}
