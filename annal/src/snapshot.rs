//! What a [`Snapshot`](crate::Snapshot) hands out: records borrowed in place from the stored
//! bytes, their blocks and payloads, where an entry is, a session's digest, hashes, and the
//! sizes of the store's tables.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! use annal::snapshot::{BlockView, RecordGuard};
//! use annal::{Annal, Record, Role};
//! let annal = Annal::open(dir.path().join("s.redb"))?;
//! annal.append("s", None, vec![Record::text("u1", Role::User, "fix the flaky test")])?;
//! let snapshot = annal.snapshot()?;
//! let guards: Vec<RecordGuard> = snapshot.records("s", 0..u64::MAX)?.collect::<Result<_, _>>()?;
//! let record = guards[0].view()?;
//! let BlockView::Text { text } = record.blocks().next().expect("one block") else { panic!() };
//! assert_eq!(snapshot.text(text)?, "fix the flaky test");
//! # Ok(()) }
//! ```

pub use annal_engine::{
    hash_to_hex, BlockView, ChangeMark, Digest, EntryLocation, Hash, Payload, PositionEntry, RecordGuard,
    RecordView, Records, TableSize, RECEIPT_META_KEY,
};
