//! Putting a log's groups back into the tables from their redo form (`redo.rs`), under the same
//! keys: an earlier build's store-alone log at open ([`replay`], the groups a crash took from
//! redb, in one durable transaction), and the frames a checkpoint folds ([`put_back_all`]); and
//! `meta.log_applied`, the mark of the last group the tables hold.

use std::time::Duration;

use redb::{Database, ReadableDatabase};

use crate::apply::Tables;
use crate::error::Failure;
use crate::log::legacy::Frame;
use crate::redo::{check_op, ops, u64_of, unpair, Target};
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
        let pending: Vec<&Frame> = pending.collect();
        put_back_all(&mut tables, pending.iter().map(|frame| frame.redo.as_slice()))?;
        let last = pending.last().map_or(applied, |frame| frame.seq);
        tables.set_log_applied(last)?;
        Ok(last)
    })()
    .map_err(Err)?;
    txn.commit().map_err(|e| Err(e.into()))?;
    Ok(last)
}

impl Tables<'_> {
    /// Records that the tables hold the log's groups up to `seq` (not itself a redo op: set
    /// after the groups are put back, in the same transaction).
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
    put_back_all(tables, [redo])
}

/// Puts back the redo forms of several groups, leaving the tables as putting back each in turn
/// would: a key written by several ops is inserted once, with the last op's value (every op is
/// an insert), and each table's keys go in the order redb keeps them, so consecutive inserts
/// find their pages where the last one left them. A checkpoint folds thousands of groups,
/// most of which rewrite the same session row and counters.
pub(crate) fn put_back_all<'a>(
    tables: &mut Tables<'_>,
    redos: impl IntoIterator<Item = &'a [u8]>,
) -> Result<(), Failure> {
    // Per table, in the order the ops came: each table's keys are then sorted on their own,
    // most already in order (positions and a session's sourceOrders only grow).
    let mut numbered: [Vec<SortedOp<'a, (u64, u64)>>; TARGETS] = std::array::from_fn(|_| Vec::new());
    let mut named: [Vec<(&'a [u8], &'a [u8])>; TARGETS] = std::array::from_fn(|_| Vec::new());
    for redo in redos {
        for op in ops(redo) {
            let (target, key, value) = op?;
            // Every op is checked, not only the last on its key: an op later overwritten fails
            // as it did when every op was inserted.
            check_op(target, key, value)?;
            match number_of(target, key) {
                Some(number) => numbered[target as usize].push((number, key, value)),
                None => named[target as usize].push((key, value)),
            }
        }
    }
    for (index, ops) in numbered.iter_mut().enumerate() {
        insert_last_of_each_key(tables, index, ops, |op| op)?;
    }
    for (index, ops) in named.iter_mut().enumerate() {
        insert_last_of_each_key(tables, index, ops, |(key, value)| (key, key, value))?;
    }
    Ok(())
}

/// Sorts the ops on the table of tag `index` by their order in redb and inserts, of the ops
/// on one key, the last. `parts` gives an op's order, key and value.
fn insert_last_of_each_key<'a, T: Copy, K: Ord>(
    tables: &mut Tables<'_>,
    index: usize,
    ops: &mut [T],
    parts: impl Fn(T) -> SortedOp<'a, K>,
) -> Result<(), Failure> {
    if ops.is_empty() {
        return Ok(());
    }
    // Stable: of the ops on one key, the last stays last.
    ops.sort_by(|a, b| parts(*a).0.cmp(&parts(*b).0));
    let target = target_at(index)?;
    for (at, &op) in ops.iter().enumerate() {
        let (order, key, value) = parts(op);
        if ops.get(at + 1).is_none_or(|&next| parts(next).0 != order) {
            tables.insert(target, key, value)?;
        }
    }
    Ok(())
}

/// An op with what orders its key in redb (the numbers a numbered key encodes, the bytes of
/// any other), then the key and value as the redo form has them.
type SortedOp<'a, K> = (K, &'a [u8], &'a [u8]);

/// One more than the largest table tag.
const TARGETS: usize = 10;

fn target_at(index: usize) -> Result<Target, Failure> {
    Target::from_tag(index as u8).ok_or_else(|| Failure::Corrupted(format!("log: unknown table tag {index}")))
}

/// A numbered table's key as redb orders it (the redo form writes numbers little endian);
/// `None` for a table keyed by text or hashes, which redb orders as bytes, and for a key of
/// the wrong length, whose insert reports it.
fn number_of(target: Target, key: &[u8]) -> Option<(u64, u64)> {
    match target {
        Target::Journal | Target::Digests | Target::Receipts => unpair(key).ok(),
        Target::Names | Target::Positions => u64_of(key).ok().map(|n| (n, 0)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use redb::{Database, ReadableTable};

    use super::*;
    use crate::digest::DIGEST_LEN;
    use crate::redo::{pair, Redo};
    use crate::tables::SESSION_ROW_LEN;

    /// Every row of the tables a redo form writes, as text.
    fn rows(tables: &Tables<'_>) -> Vec<String> {
        let mut out = Vec::new();
        macro_rules! rows_of {
            ($($table:ident),*) => {$(
                for row in tables.$table.iter().unwrap() {
                    let (k, v) = row.unwrap();
                    out.push(format!("{} {:?} {:?}", stringify!($table), k.value(), v.value()));
                }
            )*};
        }
        rows_of!(meta, sessions, names, journal, entries, positions, digests, blobs, receipts);
        out
    }

    /// Groups as an append writes them: each rewrites the session rows and the position
    /// counter, and adds records under keys whose little-endian bytes sort unlike the numbers.
    fn groups() -> Vec<Vec<u8>> {
        let names = ["東京 セッション", "emoji 🦀🧪", "e\u{301}te\u{301}\u{3000}space"];
        let mut position = 0u64;
        (0..40u64)
            .map(|group| {
                let mut redo = Redo::default();
                let session = group % 3;
                for _ in 0..=(group % 4) {
                    let key = pair((session, position * 255 + 1));
                    let text = format!("{} · record {position} {}", names[session as usize], "長".repeat(40));
                    redo.put(Target::Journal, &key, text.as_bytes());
                    redo.put(Target::Digests, &key, &[group as u8; DIGEST_LEN]);
                    redo.put(Target::Entries, format!("id-{position}-ид-😀").as_bytes(), &key);
                    redo.put(Target::Positions, &(position * 257).to_le_bytes(), &key);
                    position += 1;
                }
                // Keys written twice, within the group and across groups: the last op wins.
                let first = pair((session, (position - 1) * 255 + 1));
                if group % 5 == 0 {
                    redo.put(Target::Journal, &first, format!("rewritten in group {group} 🦀").as_bytes());
                }
                if group % 7 == 6 {
                    redo.put(Target::Journal, &pair((0, 1)), format!("group {group} again").as_bytes());
                    redo.put(Target::Receipts, &first, &[group as u8; 32]);
                }
                // The same blob from several groups, as content-addressed blobs are.
                redo.put(Target::Blobs, &[(group % 4) as u8; 32], "長い出力 ".repeat(30).as_bytes());
                redo.put(Target::Names, &session.to_le_bytes(), names[session as usize].as_bytes());
                redo.put(
                    Target::Sessions,
                    names[session as usize].as_bytes(),
                    &[group as u8; SESSION_ROW_LEN],
                );
                redo.put(Target::Meta, b"next_position", &position.to_le_bytes());
                redo.into_bytes()
            })
            .collect()
    }

    fn tables_after(
        put: impl FnOnce(&mut Tables<'_>) -> Result<(), Failure>,
    ) -> Result<Vec<String>, Failure> {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::create(dir.path().join("store")).unwrap();
        let txn = db.begin_write().unwrap();
        let mut tables = Tables::open(&txn).unwrap();
        put(&mut tables)?;
        Ok(rows(&tables))
    }

    /// Every op inserted in turn, as checkpoints put frames back before `put_back_all`.
    fn op_by_op(tables: &mut Tables<'_>, groups: &[Vec<u8>]) -> Result<(), Failure> {
        for redo in groups {
            for op in ops(redo) {
                let (target, key, value) = op?;
                tables.insert(target, key, value)?;
            }
        }
        Ok(())
    }

    #[test]
    fn groups_put_back_together_leave_the_tables_as_one_op_at_a_time() {
        let groups = groups();
        let one_by_one = tables_after(|tables| op_by_op(tables, &groups)).unwrap();
        let each = tables_after(|tables| groups.iter().try_for_each(|redo| put_back(tables, redo))).unwrap();
        assert_eq!(each, one_by_one);
        let together = tables_after(|tables| put_back_all(tables, groups.iter().map(Vec::as_slice))).unwrap();
        assert_eq!(together, one_by_one);
        // Each session's last group won (groups take the sessions in turn), and the counter is
        // the one after every record.
        assert!(
            one_by_one.contains(&format!("sessions {:?} {:?}", "東京 セッション", [39u8; SESSION_ROW_LEN]))
        );
        assert!(one_by_one.contains(&format!("sessions {:?} {:?}", "emoji 🦀🧪", [37u8; SESSION_ROW_LEN])));
        let records: usize = (0..40).map(|group| group % 4 + 1).sum();
        let counter = (records as u64).to_le_bytes();
        assert!(one_by_one.contains(&format!("meta \"next_position\" {counter:?}")));
        // A numbered key rewritten across groups holds its last value.
        let rewritten = format!("journal {:?} {:?}", (0u64, 1u64), "group 34 again".as_bytes());
        assert!(one_by_one.contains(&rewritten), "{rewritten} missing");
    }

    #[test]
    fn an_overwritten_op_that_does_not_parse_is_still_corrupted() {
        let mut groups = groups();
        let mut bad = Redo::default();
        // A session row one byte short, written over by every later group of that session.
        bad.put(Target::Sessions, "東京 セッション".as_bytes(), &[1u8; SESSION_ROW_LEN - 1]);
        groups.insert(3, bad.into_bytes());
        let result = tables_after(|tables| put_back_all(tables, groups.iter().map(Vec::as_slice)));
        assert!(matches!(result, Err(Failure::Corrupted(_))), "{result:?}");
        assert!(matches!(tables_after(|tables| op_by_op(tables, &groups)), Err(Failure::Corrupted(_))));
    }

    #[test]
    fn a_group_cut_short_among_others_is_corrupted_before_anything_is_put() {
        let mut groups = groups();
        let cut = groups[7].len() - 3;
        groups[7].truncate(cut);
        let result = tables_after(|tables| put_back_all(tables, groups.iter().map(Vec::as_slice)));
        assert!(matches!(result, Err(Failure::Corrupted(_))), "{result:?}");
        let mut rows_put = None;
        let _ = tables_after(|tables| {
            let result = put_back_all(tables, groups.iter().map(Vec::as_slice));
            rows_put = Some(rows(tables));
            result
        });
        assert_eq!(rows_put, Some(Vec::new()), "rows were put before the cut form was found");
    }
}
