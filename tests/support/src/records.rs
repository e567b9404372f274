//! Record builders: varied, canonical records whose stored form reads back equal to what was
//! appended, so tests can compare a read with the original using `==`.
//!
//! "Canonical" matters because the store rewrites JSON inside records (metadata, tool inputs)
//! to canonical text and fills in empty tool-call targets; the builders only produce values
//! the store keeps unchanged.

use std::collections::BTreeMap;

use annal_engine::{Block, Record, Role, Snapshot, Store};

use crate::rng::Rng;
use crate::sessions::text::Numbered;

/// The store's default blob threshold: text payloads longer than this go to the blob table.
pub const BLOB_THRESHOLD: usize = 16 << 10;

const WORDS: &[&str] = &[
    "alpha", "bravo", "cargo", "delta", "error", "fixture", "gamma", "index", "journal", "kernel", "lambda",
    "module", "nested", "offset", "parser", "query", "record", "schema", "token", "vector",
];

const TIMESTAMPS: &[&str] = &[
    "2026-01-02T03:04:05Z",
    "2026-02-28T23:59:59.125Z",
    "2025-12-31T12:00:00+02:00",
    "2026-03-01T00:00:00.5-07:30",
];

/// JSON texts already in the store's canonical form (compact, keys sorted).
const META_VALUES: &[&str] = &["1", "\"x\"", "true", "null", "[1,2,3]", "{\"a\":1,\"b\":[true,null]}"];

/// `len` bytes of words, spaces and digits, different for every seed.
pub fn filler(rng: &mut Rng, len: usize) -> String {
    Numbered { words: WORDS, numbers_below: 1000, newline: None }.exactly(rng, len)
}

/// Filler text of `min..min + spread` bytes.
pub fn some_text(rng: &mut Rng, min: usize, spread: usize) -> String {
    let len = min + rng.index(spread);
    filler(rng, len)
}

/// A tool output larger than the blob threshold, so it is stored in the blob table.
pub fn big_output(rng: &mut Rng) -> String {
    let len = BLOB_THRESHOLD + 1 + rng.index(3 * BLOB_THRESHOLD);
    filler(rng, len)
}

/// A tool call in canonical form with an explicit target.
pub fn tool_call(call_id: &str, path: &str) -> Block {
    Block::ToolCall {
        call_id: call_id.to_owned(),
        tool: "Read".to_owned(),
        input: format!("{{\"file_path\":\"{path}\",\"limit\":40}}"),
        target: path.to_owned(),
    }
}

/// A record of random role, blocks, timestamp and metadata. With `big`, one block is a tool
/// output past the blob threshold.
pub fn varied(rng: &mut Rng, entry_id: &str, big: bool) -> Record {
    let role = Role::ALL[rng.index(Role::ALL.len())];
    let mut blocks = Vec::new();
    let count = 1 + rng.index(3);
    for index in 0..count {
        let call_id = format!("{entry_id}-call{index}");
        blocks.push(match rng.below(6) {
            0 | 1 => Block::Text { text: some_text(rng, 0, 200) },
            2 => Block::Thinking { text: some_text(rng, 1, 120) },
            3 => tool_call(&call_id, &format!("src/{}.rs", WORDS[rng.index(WORDS.len())])),
            4 => Block::ToolResult {
                call_id,
                tool: "Bash".to_owned(),
                is_error: rng.chance(1, 4),
                output: some_text(rng, 0, 400),
            },
            _ => Block::Blob {
                media_type: "image/png".to_owned(),
                data: (0..rng.index(64)).map(|_| rng.below(256) as u8).collect(),
            },
        });
    }
    if big {
        blocks.push(Block::ToolResult {
            call_id: format!("{entry_id}-big"),
            tool: "Bash".to_owned(),
            is_error: false,
            output: big_output(rng),
        });
    }
    let mut meta = BTreeMap::new();
    for _ in 0..rng.index(3) {
        meta.insert(
            WORDS[rng.index(WORDS.len())].to_owned(),
            META_VALUES[rng.index(META_VALUES.len())].to_owned(),
        );
    }
    let timestamp = rng.chance(2, 3).then(|| TIMESTAMPS[rng.index(TIMESTAMPS.len())].to_owned());
    Record { entry_id: entry_id.to_owned(), role, timestamp, blocks, meta }
}

/// The same record with different content (the first block's text changes, or a block is
/// added), keeping its entryId.
pub fn altered(record: &Record) -> Record {
    let mut other = record.clone();
    match other.blocks.first_mut() {
        Some(Block::Text { text }) | Some(Block::Thinking { text }) => text.push_str(" (edited)"),
        _ => other.blocks.push(Block::Text { text: "an extra block".to_owned() }),
    }
    other
}

/// Whether two records have the same content as the store hashes it: everything but tool-call
/// targets, which are derived data.
pub fn same_content(a: &Record, b: &Record) -> bool {
    fn without_targets(record: &Record) -> Record {
        let mut record = record.clone();
        for block in &mut record.blocks {
            if let Block::ToolCall { target, .. } = block {
                target.clear();
            }
        }
        record
    }
    without_targets(a) == without_targets(b)
}

/// The records of `session` from sourceOrder `from` on as a view sees them: as stored (entry ids
/// derived where none was given), compaction receipts left out, each with its sourceOrder.
///
/// # Errors
/// A read that fails, naming the sourceOrder.
pub fn shown_records(store: &Store, session: &str, from: u64) -> Result<Vec<(u64, Record)>, String> {
    shown_records_in(&store.snapshot().map_err(|e| format!("snapshot: {e}"))?, session, from)
}

/// [`shown_records`] read from `snapshot`: what tests going through the `annal` facade (whose
/// `Annal::snapshot` hands out the same `Snapshot`) call.
///
/// # Errors
/// A read that fails, naming the sourceOrder.
pub fn shown_records_in(snapshot: &Snapshot, session: &str, from: u64) -> Result<Vec<(u64, Record)>, String> {
    let guards =
        snapshot.records(session, from..u64::MAX).map_err(|e| format!("records of {session:?}: {e}"))?;
    let mut out = Vec::new();
    for (order, guard) in (from..).zip(guards) {
        let guard = guard.map_err(|e| format!("record {order}: {e}"))?;
        let view = guard.view().map_err(|e| format!("record {order}: {e}"))?;
        let record = snapshot.to_record(&view).map_err(|e| format!("record {order}: {e}"))?;
        if !record.meta.contains_key("annal.receipt") {
            out.push((order, record));
        }
    }
    Ok(out)
}
