//! Upgrading a store written by an older format version, inside the transaction that records
//! the new version: a crash or an error part-way leaves the store as the older version wrote it.

use std::ops::Bound;

use redb::{ReadableTable, WriteTransaction};

use crate::error::Failure;
use crate::packing::pack_record;
use crate::tables::JOURNAL;

/// Journal values rewritten per pass: bounds the memory an upgrade holds at once.
const PASS_RECORDS: usize = 4096;

/// Rewrites every journal value of a version 1 store (the archived record alone) in the
/// version 2 form (a tag byte, then the record as it is or compressed). Record hashes do not
/// change: they are over the records' content, not their stored bytes. Returns the records
/// rewritten.
pub(crate) fn upgrade_journal_from_v1(txn: &WriteTransaction) -> Result<u64, Failure> {
    let mut journal = txn.open_table(JOURNAL)?;
    let mut after: Option<(u64, u64)> = None;
    let mut rewritten = 0u64;
    loop {
        let mut pass = Vec::with_capacity(PASS_RECORDS);
        {
            let range = match after {
                None => journal.range::<(u64, u64)>(..)?,
                Some(key) => journal.range::<(u64, u64)>((Bound::Excluded(key), Bound::Unbounded))?,
            };
            for item in range.take(PASS_RECORDS) {
                let (key, value) = item?;
                pass.push((key.value(), pack_record(value.value())));
            }
        }
        let Some(&(last, _)) = pass.last() else { break };
        for (key, value) in &pass {
            journal.insert(key, value.as_slice())?;
        }
        rewritten += pass.len() as u64;
        after = Some(last);
    }
    Ok(rewritten)
}
