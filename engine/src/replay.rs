//! Replaying the durability log on open: the groups a crash took from redb, put back from their
//! redo form (`redo.rs`) into the same tables, under the same keys, in one durable transaction;
//! and `meta.log_applied`, the mark of the last group the tables hold, which the writer sets.

use std::time::Duration;

use redb::{Database, ReadableDatabase};

use crate::apply::Tables;
use crate::error::Failure;
use crate::log::Frame;
use crate::redo::ops;
use crate::tables::{meta_u64, META, META_LOG_APPLIED};
use crate::writer::begin_write;

/// Puts back the logged groups the tables lack and returns the sequence number of the last
/// group the tables hold. The outer error of `Err` is how long another process held the write
/// lock.
pub(crate) fn replay(
    db: &Database,
    frames: &[Frame],
    wait: Duration,
) -> Result<u64, Result<Duration, Failure>> {
    let applied = {
        let txn = db.begin_read().map_err(|e| Err(e.into()))?;
        let meta = txn.open_table(META).map_err(|e| Err(e.into()))?;
        meta_u64(&meta, META_LOG_APPLIED).map_err(Err)?
    };
    if frames.last().is_none_or(|last| last.seq <= applied) {
        return Ok(applied);
    }
    // Another process may have replayed meanwhile: decide again inside the transaction.
    let txn = begin_write(db, wait)?;
    let last = (|| -> Result<u64, Failure> {
        let mut tables = Tables::open(&txn)?;
        let applied = tables.log_applied()?;
        let mut pending = frames.iter().filter(|frame| frame.seq > applied).peekable();
        if let Some(first) = pending.peek().filter(|first| first.seq != applied + 1) {
            return Err(Failure::Corrupted(format!(
                "the log's groups start at {} but the store holds only those up to {applied}",
                first.seq
            )));
        }
        let mut last = applied;
        for frame in pending {
            put_back(&mut tables, &frame.redo)?;
            tables.set_log_applied(frame.seq)?;
            last = frame.seq;
        }
        Ok(last)
    })()
    .map_err(Err)?;
    txn.commit().map_err(|e| Err(e.into()))?;
    Ok(last)
}

impl Tables<'_> {
    /// Records that the tables hold the durability log's groups up to `seq` (not itself a
    /// redo op: replay sets it after each group it puts back).
    pub(crate) fn set_log_applied(&mut self, seq: u64) -> Result<(), Failure> {
        self.meta.insert(META_LOG_APPLIED, seq.to_le_bytes().as_slice())?;
        Ok(())
    }

    /// The sequence number of the last logged group the tables hold.
    pub(crate) fn log_applied(&self) -> Result<u64, Failure> {
        meta_u64(&self.meta, META_LOG_APPLIED)
    }
}

/// Puts every op of one group's redo form. A form that does not parse is `Corrupted`: the
/// log's check passed, so the bytes are what was written.
pub(crate) fn put_back(tables: &mut Tables<'_>, redo: &[u8]) -> Result<(), Failure> {
    for op in ops(redo) {
        let (target, key, value) = op?;
        tables.insert(target, key, value)?;
    }
    Ok(())
}
