//! The loom models, one test binary built only with `RUSTFLAGS="--cfg loom"` (`.ci/run`): the
//! compaction claims, the durable-position watermark, the shared log's lock, tail and cycle,
//! and a write request's answer, each explored in every interleaving up to
//! `LOOM_MAX_PREEMPTIONS`.
#![cfg(loom)]
#![allow(clippy::unwrap_used)]

mod claims;
mod reply;
mod shared_log;
mod watermark;
