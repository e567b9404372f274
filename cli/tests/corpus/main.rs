//! The binary over the real transcripts in the folder named by `ANNAL_CORPUS` (read-only). Built
//! only with the `corpus` feature:
//!
//! ```text
//! ANNAL_CORPUS=<corpus folder> cargo test -p annal-cli --features corpus --test corpus
//! ```

#[path = "../support/mod.rs"]
mod support;

mod mcp;
