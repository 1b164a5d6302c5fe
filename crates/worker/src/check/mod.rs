//! The checker: turns a URL into a verdict.
