//! What a search index must hold, read from the journal, and the check that it holds exactly
//! that: the search tests and the index kill drill share it, so they cannot drift apart on what
//! "the index equals the journal" means.

use std::collections::BTreeSet;

use annal_engine::{BlockView, Snapshot, Store};
use annal_query::{IndexedBlock, SearchIndex};

/// Every block the index must hold, sorted: each session's own records, every block but binary
/// blobs. A fork's records before its fork point belong to its parent and are indexed there
/// once, so a fork contributes only the records from its fork point on.
///
/// # Panics
/// If the snapshot cannot be read.
pub fn journal_blocks(snapshot: &Snapshot) -> Vec<IndexedBlock> {
    let mut out = Vec::new();
    for info in snapshot.sessions().expect("the sessions are read") {
        let own = info.fork_at.unwrap_or(0)..u64::MAX;
        for guard in snapshot.records(&info.name, own).expect("the records are read") {
            let guard = guard.expect("a record is read");
            let view = guard.view().expect("a record is valid");
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

/// Whether `index` holds exactly the journal's blocks, none missing and none twice: their count,
/// or what differs (the first few missing and duplicated blocks).
///
/// # Errors
/// The difference, as one line for a panic message.
///
/// # Panics
/// If the store or the index cannot be read.
pub fn index_equals_journal(index: &SearchIndex, store: &Store) -> Result<usize, String> {
    let expected = journal_blocks(&store.snapshot().expect("a snapshot"));
    let actual = index.indexed_blocks().expect("the indexed blocks are read");
    if actual == expected {
        return Ok(expected.len());
    }
    let missing: Vec<_> = expected.iter().filter(|b| !actual.contains(b)).take(5).collect();
    let mut seen = BTreeSet::new();
    let twice: Vec<_> = actual.iter().filter(|b| !seen.insert(*b)).take(5).collect();
    Err(format!(
        "the index has {} documents, the journal {} blocks; missing {missing:?}; duplicated {twice:?}",
        actual.len(),
        expected.len()
    ))
}

/// Panics unless `index` holds exactly the journal's blocks (see [`index_equals_journal`]).
pub fn assert_index_equals_journal(index: &SearchIndex, store: &Store) {
    if let Err(diff) = index_equals_journal(index, store) {
        panic!("{diff}");
    }
}
