//! Reading seed input.
