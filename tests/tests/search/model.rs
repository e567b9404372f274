//! The index against the journal, under random workloads: appends of varied records to several
//! sessions, forks (of forks), the index closed and reopened, the store reopened, and the index
//! folder deleted. Afterwards the index holds exactly the journal's blocks, and an index rebuilt
//! from scratch answers every query with the same hits and scores as the incremental one.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use crate::search_support::*;
use annal_engine::{Block, Role, Store};
use annal_query::{IndexOptions, SearchIndex, SearchRequest};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// Words and identifiers records are made of: few enough that queries hit many records and
/// scores tie, which is where a rebuilt index could order hits differently.
const VOCABULARY: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "error",
    "timeout",
    "ECONNRESET",
    "src/api/client.ts",
    "v1.18.31",
    "--max-output",
    "test_user_auth",
    "0x7f3a9c",
    "retry",
    "cache",
];

const QUERIES: &[&str] = &[
    "alpha",
    "error",
    "ECONNRESET",
    "src/api/client.ts",
    "client.ts",
    "v1.18.31",
    "--max-output",
    "test_user_auth",
    "alpha beta",
    "\"gamma delta\"",
    "retry OR cache",
    "error -timeout",
    "0x7f3a9c",
];

#[derive(Clone, Debug)]
enum Op {
    /// Append `words` (indexes into the vocabulary), one record per group of blocks.
    Append {
        session: usize,
        records: Vec<(u8, Vec<Vec<usize>>)>,
    },
    /// Fork session `parent` at a point chosen from its length.
    Fork {
        parent: usize,
        at_per_mille: u16,
    },
    ReopenIndex,
    ReopenStore,
    DeleteIndex,
}

fn op() -> impl Strategy<Value = Op> {
    let block = prop::collection::vec(0..VOCABULARY.len(), 1..6);
    let record = (0u8..4, prop::collection::vec(block, 1..3));
    prop_oneof![
        6 => (0usize..4, prop::collection::vec(record, 1..4)).prop_map(|(session, records)| Op::Append { session, records }),
        2 => (0usize..4, 0u16..=1000).prop_map(|(parent, at_per_mille)| Op::Fork { parent, at_per_mille }),
        1 => Just(Op::ReopenIndex),
        1 => Just(Op::ReopenStore),
        1 => Just(Op::DeleteIndex),
    ]
}

struct World {
    path: std::path::PathBuf,
    store: Arc<Store>,
    index: Option<SearchIndex>,
    sessions: Vec<String>,
    next_id: u64,
}

impl World {
    fn index(&mut self) -> &SearchIndex {
        if self.index.is_none() {
            self.index = Some(open_index(&self.store));
        }
        self.index.as_ref().unwrap()
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Append { session, records } => {
                let name = self.sessions[session % self.sessions.len()].clone();
                let batch = records
                    .iter()
                    .map(|(kind, blocks)| {
                        self.next_id += 1;
                        let id = format!("r{}", self.next_id);
                        let texts: Vec<String> = blocks
                            .iter()
                            .map(|b| b.iter().map(|w| VOCABULARY[*w]).collect::<Vec<_>>().join(" "))
                            .collect();
                        match kind {
                            0 => record(
                                &id,
                                Role::User,
                                texts.into_iter().map(|text| Block::Text { text }).collect(),
                            ),
                            1 => record(
                                &id,
                                Role::Assistant,
                                texts.into_iter().map(|text| Block::Thinking { text }).collect(),
                            ),
                            2 => record(
                                &id,
                                Role::Tool,
                                texts
                                    .into_iter()
                                    .map(|output| Block::ToolResult {
                                        call_id: "c".into(),
                                        tool: "Bash".into(),
                                        is_error: output.contains("error"),
                                        output,
                                    })
                                    .chain(std::iter::once(Block::Blob {
                                        media_type: "image/png".into(),
                                        data: vec![1, 2, 3],
                                    }))
                                    .collect(),
                            ),
                            _ => record(
                                &id,
                                Role::Assistant,
                                texts
                                    .into_iter()
                                    .map(|input| Block::ToolCall {
                                        call_id: "c".into(),
                                        tool: "Grep".into(),
                                        input,
                                        target: String::new(),
                                    })
                                    .collect(),
                            ),
                        }
                    })
                    .collect();
                self.store.append(&name, None, batch).unwrap();
            }
            Op::Fork { parent, at_per_mille } => {
                let parent = self.sessions[parent % self.sessions.len()].clone();
                let len = self.store.snapshot().unwrap().session(&parent).unwrap().map_or(0, |s| s.len);
                if len == 0 {
                    return;
                }
                let at = (len * u64::from(*at_per_mille) / 1000).max(1);
                let name = format!("fork{}", self.sessions.len());
                self.store.fork(&parent, at, &name).unwrap();
                self.sessions.push(name);
            }
            Op::ReopenIndex => {
                if let Some(index) = self.index.take() {
                    index.close().unwrap();
                }
                self.index();
            }
            Op::ReopenStore => {
                if let Some(index) = self.index.take() {
                    index.close().unwrap();
                }
                self.store = open_store(&self.path);
                self.index();
            }
            Op::DeleteIndex => {
                if let Some(index) = self.index.take() {
                    let folder = index.folder().to_path_buf();
                    index.close().unwrap();
                    std::fs::remove_dir_all(folder).unwrap();
                }
            }
        }
    }
}

/// Every query's hits as (id, session, score bits): equal means same order, same scores.
fn answers(index: &SearchIndex) -> Vec<Vec<(String, String, u32)>> {
    QUERIES
        .iter()
        .map(|query| {
            let mut request = SearchRequest::new(*query);
            request.limit = 5;
            index
                .search(&request)
                .unwrap()
                .iter()
                .map(|h| (h.id(), h.session.clone(), h.score.to_bits()))
                .collect()
        })
        .collect()
}

fn check(dir: &Path, ops: &[Op]) {
    let path = dir.join("model.redb");
    let store = open_store(&path);
    store.append("s0", None, vec![text("first", Role::User, "alpha")]).unwrap();
    let mut world = World { path, store, index: None, sessions: vec!["s0".into(), "s1".into()], next_id: 0 };
    world.index();
    for op in ops {
        world.apply(op);
    }
    let index = world.index.take().unwrap_or_else(|| open_index(&world.store));
    searchable(&index);
    assert_index_equals_journal(&index, &world.store);

    let rebuilt_folder = dir.join("rebuilt.index");
    let options = IndexOptions { folder: Some(rebuilt_folder), ..quick_options() };
    SearchIndex::rebuild(&world.store, &options, &mut |_, _| {}).unwrap();
    let rebuilt = SearchIndex::open(Arc::clone(&world.store), options).unwrap();
    searchable(&rebuilt);
    assert_index_equals_journal(&rebuilt, &world.store);
    assert_eq!(answers(&rebuilt), answers(&index), "the rebuilt index answers differently");
    rebuilt.close().unwrap();
    index.close().unwrap();
}

proptest! {
    // Regressions are kept beside this file, as `<file>.proptest-regressions` (by default proptest
    // would put them in a folder parallel to the test binary's, away from the test).
    #![proptest_config(ProptestConfig {
        cases: 32,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn index_equals_journal_and_a_rebuild_answers_the_same(ops in prop::collection::vec(op(), 1..10)) {
        let dir = tempfile::tempdir().unwrap();
        check(dir.path(), &ops);
    }
}
