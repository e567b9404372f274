//! The generated data sets: the search-zipf profile of annal-support's session family (records
//! whose words follow Zipf's law over a 30,000-word vocabulary, with identifiers planted in
//! them), cut into sessions of 2,000 records.

use annal_bench::report::thousands;
use annal_engine::Record;
use annal_support::sessions::zipf::SESSION_RECORDS;
use annal_support::sessions::{Profile, SessionSpec};

use crate::data::Dataset;

/// How much to generate.
#[derive(Clone, Copy, Debug)]
// Each benchmark that includes this file builds only some of the sizes.
#[allow(dead_code)]
pub(crate) enum Size {
    Records(usize),
    Blocks(usize),
    /// Bytes of the records as annal JSONL lines (what `annal import` reads).
    InputBytes(u64),
}

/// Search-zipf records of `seed` until `size` is reached, in sessions `gen-0000`, `gen-0001`, …
/// of 2,000 records (the last one shorter).
pub(crate) fn generated(size: Size, seed: u64) -> Dataset {
    let mut records = SessionSpec { profile: Profile::SearchZipf, seed }.records();
    let (mut blocks, mut count, mut bytes) = (0usize, 0usize, 0u64);
    let done = |blocks: usize, records: usize, bytes: u64| match size {
        Size::Records(n) => records >= n,
        Size::Blocks(n) => blocks >= n,
        Size::InputBytes(n) => bytes >= n,
    };
    let mut sessions = Vec::new();
    let mut session: Vec<Record> = Vec::new();
    while !done(blocks, count, bytes) {
        let Some(record) = records.next() else { break };
        blocks += record.blocks.len();
        count += 1;
        if matches!(size, Size::InputBytes(_)) {
            bytes += annal_bench::records::to_json(&record).len() as u64 + 1;
        }
        session.push(record);
        if session.len() == SESSION_RECORDS || done(blocks, count, bytes) {
            sessions.push((format!("gen-{:04}", sessions.len()), std::mem::take(&mut session)));
        }
    }
    let name = match size {
        Size::Records(n) => format!("generated, {} records", thousands(n as u64)),
        Size::Blocks(n) => format!("generated, {} blocks", thousands(n as u64)),
        Size::InputBytes(n) => format!("generated, {} MiB of JSONL", n >> 20),
    };
    Dataset { name, sessions }
}
