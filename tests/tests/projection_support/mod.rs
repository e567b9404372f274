//! Shared by the projection and checkpoint tests: the shaped sessions (annal-support's session
//! family), a fresh store (through the facade, or the engine's `Store` for what only it reaches),
//! and checks of the properties every projection must have.
#![allow(dead_code)]
#![allow(clippy::unwrap_used)]

pub(crate) mod compaction;

pub(crate) use annal_support::projection_checks::*;
pub(crate) use annal_support::sessions::{shaped, Shape};

use annal::{Annal, Options};
use annal_engine::{Block, Record, Role, Store, StoreOptions};

/// A store in a fresh temporary folder, opened through the facade as a user opens it. These
/// tests never search, so the index is left closed (it would only index in the background).
pub(crate) fn annal() -> (tempfile::TempDir, Annal) {
    let dir = tempfile::tempdir().expect("temp dir");
    let options = Options { index_eagerly: false, ..Options::default() };
    let annal = Annal::open_with(dir.path().join("annal.redb"), &options).expect("open store");
    (dir, annal)
}

/// The engine's store in a fresh temporary folder, for what the facade does not reach.
pub(crate) fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("annal.redb"), StoreOptions::default()).expect("open store");
    (dir, store)
}

pub(crate) fn call(id: &str, tool: &str, input: &str) -> Block {
    Block::ToolCall { call_id: id.into(), tool: tool.into(), input: input.into(), target: String::new() }
}

pub(crate) fn result(id: &str, tool: &str, is_error: bool, output: String) -> Block {
    Block::ToolResult { call_id: id.into(), tool: tool.into(), is_error, output }
}

pub(crate) fn record(id: &str, role: Role, blocks: Vec<Block>) -> Record {
    annal_support::sessions::record(id.to_owned(), role, blocks)
}

/// `n` characters of `seed` repeated, spaces between.
pub(crate) fn filler(n: usize, seed: &str) -> String {
    format!("{seed} ").repeat(n / (seed.len() + 1) + 1)[..n].to_owned()
}
