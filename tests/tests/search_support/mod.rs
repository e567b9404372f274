//! Shared by the search tests: stores, indexes with short intervals, records, and the blocks a
//! journal says an index must hold.

// Each test file uses its own subset of these helpers.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use annal_engine::{Block, BlockView, Record, Role, Snapshot, Store, StoreOptions};
use annal_query::{IndexOptions, IndexedBlock, SearchIndex};

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

pub fn searchable(index: &SearchIndex) -> u64 {
    index.wait_searchable(PATIENCE).unwrap()
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

/// Every block the index must hold: each session's own records (a fork's inherited ones are
/// its parent's), every block but binary blobs.
pub fn expected_blocks(snapshot: &Snapshot) -> Vec<IndexedBlock> {
    let mut out = Vec::new();
    for info in snapshot.sessions().unwrap() {
        for guard in snapshot.records(&info.name, info.fork_at.unwrap_or(0)..u64::MAX).unwrap() {
            let guard = guard.unwrap();
            let view = guard.view().unwrap();
            for (index, block) in view.blocks().enumerate() {
                if !matches!(block, BlockView::Blob { .. }) {
                    out.push(IndexedBlock {
                        session: info.name.clone(),
                        source_order: view.source_order(),
                        block_index: index as u64,
                    });
                }
            }
        }
    }
    out.sort();
    out
}

/// Asserts the index holds exactly the journal's blocks: none missing, none twice.
pub fn assert_index_equals_journal(index: &SearchIndex, store: &Store) {
    let expected = expected_blocks(&store.snapshot().unwrap());
    let actual = index.indexed_blocks().unwrap();
    if actual != expected {
        let missing: Vec<_> = expected.iter().filter(|b| !actual.contains(b)).take(5).collect();
        let mut seen = std::collections::BTreeSet::new();
        let twice: Vec<_> = actual.iter().filter(|b| !seen.insert(*b)).take(5).collect();
        panic!(
            "index has {} documents, journal {} blocks; missing {missing:?}; duplicated {twice:?}",
            actual.len(),
            expected.len()
        );
    }
}

/// Waits until `condition` holds (polling), failing after [`PATIENCE`].
pub fn until(what: &str, condition: impl Fn() -> bool) {
    let started = std::time::Instant::now();
    while !condition() {
        assert!(started.elapsed() < PATIENCE, "gave up waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}
