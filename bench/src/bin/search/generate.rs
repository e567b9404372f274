//! The generated data sets: the search-zipf profile of annal-support's session family (records
//! whose words follow Zipf's law over a 30,000-word vocabulary, with identifiers planted in
//! them), cut into sessions of 2,000 records.

use annal_engine::Record;
use annal_support::sessions::zipf::SESSION_RECORDS;
use annal_support::sessions::{Profile, SessionSpec};

use crate::data::Dataset;

fn thousands(n: u64) -> String {
    annal_bench::report::thousands(n)
}

/// How much to generate.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Size {
    Records(usize),
    Blocks(usize),
}

/// Search-zipf records of `seed` until `size` is reached, in sessions `gen-0000`, `gen-0001`, …
/// of 2,000 records (the last one shorter).
pub(crate) fn generated(size: Size, seed: u64) -> Dataset {
    let mut records = SessionSpec { profile: Profile::SearchZipf, seed }.records();
    let (mut blocks, mut count) = (0usize, 0usize);
    let done = |blocks: usize, records: usize| match size {
        Size::Records(n) => records >= n,
        Size::Blocks(n) => blocks >= n,
    };
    let mut sessions = Vec::new();
    let mut session: Vec<Record> = Vec::new();
    while !done(blocks, count) {
        let Some(record) = records.next() else { break };
        blocks += record.blocks.len();
        count += 1;
        session.push(record);
        if session.len() == SESSION_RECORDS || done(blocks, count) {
            sessions.push((format!("gen-{:04}", sessions.len()), std::mem::take(&mut session)));
        }
    }
    let name = match size {
        Size::Records(n) => format!("generated, {} records", thousands(n as u64)),
        Size::Blocks(n) => format!("generated, {} blocks", thousands(n as u64)),
    };
    Dataset { name, sessions }
}
