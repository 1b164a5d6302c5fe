//! The unit tests' stand-in for the host book ([`StandInBook`]), for the parts of an entry that
//! sit below the book (`ratelimit.rs`, `health.rs`, `soft404/probe.rs`): their tests cannot use
//! the book itself, which is built on them, so they keep the part they test in this one, by
//! name, made on first use as the book makes its entries.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One `T` per name, made on first use by `make` (the book's entries are made the same way).
pub(crate) struct StandInBook<T> {
    make: Box<dyn Fn(&str) -> T + Send + Sync>,
    entries: Mutex<HashMap<String, Arc<T>>>,
}

impl<T> StandInBook<T> {
    /// A book whose entries `make` makes, given their names.
    pub(crate) fn new(make: impl Fn(&str) -> T + Send + Sync + 'static) -> Self {
        StandInBook {
            make: Box::new(make),
            entries: Mutex::default(),
        }
    }

    /// The entry of `name`, made when absent.
    pub(crate) fn of(&self, name: &str) -> Arc<T> {
        let mut entries = self.entries.lock().expect("stand-in book lock poisoned");
        let entry = entries.entry(name.to_owned());
        entry.or_insert_with(|| Arc::new((self.make)(name))).clone()
    }
}

impl<T: Default> Default for StandInBook<T> {
    fn default() -> Self {
        StandInBook::new(|_| T::default())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn an_entry_is_made_once_per_name() {
        let made = Arc::new(AtomicUsize::new(0));
        let counted = made.clone();
        let book = StandInBook::new(move |name: &str| {
            counted.fetch_add(1, Ordering::SeqCst);
            name.len()
        });
        assert!(Arc::ptr_eq(&book.of("a.example"), &book.of("a.example")));
        assert_eq!(*book.of("bb.example"), 10);
        assert_eq!(made.load(Ordering::SeqCst), 2);
    }
}
