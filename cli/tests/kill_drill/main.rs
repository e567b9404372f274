//! Kill drills: processes of the real binary killed with SIGKILL at random moments, the journal's
//! (imports and appends) and the search index's (processes that index). Slow: not part of
//! `cargo test`; CI runs it on its own, one drill at a time:
//!
//! ```text
//! cargo test -p annal-cli --test kill_drill -- --nocapture --test-threads=1
//! ```

#[path = "../support/mod.rs"]
mod support;

mod index;
mod journal;
