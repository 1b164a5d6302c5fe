//! How one check asks each hop ([`Ask`]): plain data, made by the check (`checker.rs`, a
//! soft-404 probe) and read by the attempt (`redirect.rs`) and the asker (`asker.rs`), so that
//! neither of those needs the other to know it.

use crate::cut::Cut;
use crate::page::Reading;

/// How an attempt asks each hop, and what its requests tell the check around them.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ask<'a> {
    /// Every hop a GET, and a 2xx text answer keeps its first 64 KiB (the soft-404
    /// comparison, a page to read).
    pub keep_body: bool,
    /// Every hop a GET: a retry asks the way that decides in one request.
    pub get_first: bool,
    /// What to read of the final answer's body, for a check that reads it (`page.rs`): how far,
    /// and only HTML or any text. `None`: a body kept is kept as the soft-404 comparison wants.
    pub reading: Option<Reading>,
    /// The check's cut-off point (`cut.rs`), marked before each request; `None` for a check
    /// nothing may cut off.
    pub cut: Option<&'a Cut>,
}
