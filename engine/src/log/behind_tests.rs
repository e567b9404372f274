//! Tests of the fold behind the tail on a real store: redb takes the frames read so far while
//! the cycle goes on, every snapshot (begun before or after) reads the same records, and
//! appends after it, a full log's fold and a reopen lose nothing.

use std::path::Path;

use crate::log_path;
use crate::options::{Sharing, StoreOptions};
use crate::record::{Record, Role};
use crate::Store;

fn options(sharing: Sharing) -> StoreOptions {
    // No checkpoint thread: the test folds behind itself, and nothing else folds meanwhile.
    StoreOptions { log_size_bytes: 64 << 10, checkpoint_idle: None, sharing, ..StoreOptions::default() }
}

/// Real-world text: CJK, emoji, a combining mark, an ideographic space, a long line.
fn text(i: usize) -> Record {
    let body = format!("第{i}条 東京 ☕ e\u{301}\u{3000}🦀 {}", "ж".repeat(i % 7 * 90));
    Record::text(format!("behind-{i}"), if i.is_multiple_of(2) { Role::User } else { Role::Assistant }, body)
}

fn entry_ids(store: &Store) -> Vec<String> {
    let snapshot = store.snapshot().expect("a snapshot");
    snapshot
        .records("s", 0..u64::MAX)
        .expect("records")
        .map(|guard| guard.expect("a record").view().expect("a view").entry_id().to_owned())
        .collect()
}

/// The log's header (its cycle and first sequence number, checked), as bytes.
fn header(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(log_path(path)).expect("the log reads");
    bytes[..64].to_vec()
}

fn wanted(upto: usize) -> Vec<String> {
    (0..upto).map(|i| format!("behind-{i}")).collect()
}

#[test]
fn a_fold_behind_the_tail_keeps_the_cycle_and_every_record() {
    for sharing in [Sharing::Processes, Sharing::Exclusive] {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("s.redb");
        let store = Store::open(&path, options(sharing)).expect("opens");
        for i in 0..12 {
            store.append("s", Some(i as u64), vec![text(i)]).expect("appends");
        }
        let before = store.snapshot().expect("a snapshot");
        let header_before = header(&path);
        assert_eq!(store.log_applied_after(false), 0, "{sharing:?}: nothing folded yet");
        assert_eq!(store.log_applied_after(true), 12, "{sharing:?}: the twelve frames folded");
        assert_eq!(header(&path), header_before, "{sharing:?}: the cycle goes on");
        let read_before: Vec<String> = before
            .records("s", 0..u64::MAX)
            .expect("records")
            .map(|guard| guard.expect("a record").view().expect("a view").entry_id().to_owned())
            .collect();
        assert_eq!(read_before, wanted(12), "{sharing:?}: a snapshot begun before the fold");
        assert_eq!(entry_ids(&store), wanted(12), "{sharing:?}: a snapshot begun after it");
        // A stale position is still a conflict, the next one is taken.
        assert!(store.append("s", Some(5), vec![text(99)]).is_err(), "{sharing:?}: a stale position");
        // Appends go on, until the log is full and folded whole (a new cycle).
        let mut i = 12;
        while header(&path) == header_before {
            store.append("s", Some(i as u64), vec![text(i)]).expect("appends");
            i += 1;
            if i.is_multiple_of(10) {
                store.log_applied_after(true);
            }
            assert!(i < 10_000, "{sharing:?}: the log never filled");
        }
        assert_eq!(entry_ids(&store), wanted(i), "{sharing:?}: after a full log's fold");
        drop(before);
        store.close().expect("closes");
        let again = Store::open(&path, options(sharing)).expect("reopens");
        assert_eq!(entry_ids(&again), wanted(i), "{sharing:?}: reopened");
        let report = again.verify(None).expect("verifies");
        assert!(report.is_ok() && report.records == i as u64, "{sharing:?}: {report:?}");
    }
}
