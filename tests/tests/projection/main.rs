//! Projections and checkpoints: deterministic-v1 on sessions built for one rule each, user text
//! first, and properties over generated sessions, projected through the facade
//! (`annal::Annal`); the compaction protocol and concurrent compactions of one checkpoint key on
//! the engine's `Store`.

#[path = "../projection_support/mod.rs"]
mod projection_support;

mod cases;
mod checkpoint_claims;
mod checkpoint_protocol;
mod properties;
mod user_text;
