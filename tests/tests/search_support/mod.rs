//! Shared by the search tests: stores, indexes with short intervals, stores opened through the
//! facade (`annal::Annal`), records, and the check that an index holds what the journal says it
//! must (from annal-support).

// Each test file uses its own subset of these helpers.
#![allow(dead_code, unreachable_pub)]
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use annal::{Annal, Block, Record, Role, SearchRequest};
use annal_engine::{Store, StoreOptions};
use annal_query::{IndexOptions, SearchIndex};
pub use annal_support::indexed::assert_index_equals_journal;

/// How long a test waits for the index before failing (never reached unless broken).
pub const PATIENCE: Duration = Duration::from_secs(120);

pub fn open_store(path: &Path) -> Arc<Store> {
    Arc::new(Store::open(path, StoreOptions::default()).unwrap())
}

/// Options with short intervals, so tests do not wait on the defaults.
pub fn quick_options() -> IndexOptions {
    IndexOptions {
        commit_interval: Duration::from_millis(20),
        poll_interval: Duration::from_millis(20),
        writer_memory_bytes: 16 << 20,
        ..IndexOptions::default()
    }
}

pub fn open_index(store: &Arc<Store>) -> SearchIndex {
    SearchIndex::open(Arc::clone(store), quick_options()).unwrap()
}

/// An empty store in a fresh folder, with the path of its file (for reopening it, or handing it
/// to another process).
pub fn fresh_store(file: &str) -> (tempfile::TempDir, PathBuf, Arc<Store>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file);
    let store = open_store(&path);
    (dir, path, store)
}

/// A fresh store holding `records` in session `s`, and an index that has caught up with them:
/// how most search tests begin.
pub fn indexed(records: Vec<Record>) -> (tempfile::TempDir, Arc<Store>, SearchIndex) {
    let (dir, _, store) = fresh_store("s.redb");
    store.append("s", Some(0), records).unwrap();
    let index = open_index(&store);
    searchable(&index);
    (dir, store, index)
}

pub fn searchable(index: &SearchIndex) -> u64 {
    index.wait_searchable(PATIENCE).unwrap()
}

/// A fresh store opened through the facade, as a user opens it, holding `records` in session
/// `s`; its searches wait for the index themselves.
pub fn annal_with(records: Vec<Record>) -> (tempfile::TempDir, Annal) {
    let dir = tempfile::tempdir().unwrap();
    let annal = Annal::open(dir.path().join("s.redb")).unwrap();
    annal.append("s", Some(0), records).unwrap();
    (dir, annal)
}

/// The ids of what `annal` finds for `query`, best first.
pub fn search_ids(annal: &Annal, query: &str) -> Vec<String> {
    annal.search(&SearchRequest::new(query)).unwrap().iter().map(|hit| hit.id()).collect()
}

/// Closes `annal`, then checks that the index it kept holds exactly the journal's blocks. The
/// facade does not hand out its index, so the check reopens both with the inner crates; closing
/// first commits everything the handle indexed, and its searches had waited for the journal's
/// end, so the reopened index has nothing left to catch up on.
pub fn assert_closed_index_equals_journal(annal: Annal) {
    let (path, folder) = (annal.path().to_owned(), annal.index_folder());
    assert!(annal.close().unwrap(), "the store is still held");
    let store = open_store(&path);
    let index =
        SearchIndex::open(Arc::clone(&store), IndexOptions { folder: Some(folder), ..quick_options() })
            .unwrap();
    searchable(&index);
    assert_index_equals_journal(&index, &store);
    index.close().unwrap();
}

pub fn record(id: &str, role: Role, blocks: Vec<Block>) -> Record {
    Record { entry_id: id.into(), role, timestamp: None, blocks, meta: BTreeMap::new() }
}

pub fn text(id: &str, role: Role, text: &str) -> Record {
    Record::text(id, role, text)
}

pub fn call(id: &str, call_id: &str, tool: &str, input: &str) -> Record {
    record(
        id,
        Role::Assistant,
        vec![Block::ToolCall {
            call_id: call_id.into(),
            tool: tool.into(),
            input: input.into(),
            target: String::new(),
        }],
    )
}

pub fn result(id: &str, call_id: &str, tool: &str, output: &str, is_error: bool) -> Record {
    record(
        id,
        Role::Tool,
        vec![Block::ToolResult {
            call_id: call_id.into(),
            tool: tool.into(),
            is_error,
            output: output.into(),
        }],
    )
}

/// Waits until `condition` holds (polling), failing after [`PATIENCE`].
pub fn until(what: &str, condition: impl Fn() -> bool) {
    let started = std::time::Instant::now();
    while !condition() {
        assert!(started.elapsed() < PATIENCE, "gave up waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}
