//! The shared log's frames as tables: what a snapshot lays over redb's last commit in a store
//! shared between processes, and what an append is decided against.
//!
//! Frames are added in sequence order and never changed; a checkpoint that folds them into redb
//! starts a new overlay (snapshots already begun keep the old one). A reader sees only the
//! frames of its [`Window`]: those above the `log_applied` of its redb transaction (older ones
//! are in redb, which may hold newer values from a write committed there) and up to the last
//! frame parsed when it paired, so everything it reads is one moment of the store.

use std::collections::{BTreeMap, HashMap};
use std::sync::PoisonError;

use bytes::Bytes;

use crate::digest::DIGEST_LEN;
use crate::error::Failure;
use crate::redo::{check_op, fixed, ops, text, u64_of, unpair, Target};
use crate::sync::{Arc, RwLock, RwLockReadGuard};
use crate::tables::{SessionRow, SESSION_ROW_LEN};

/// The frames a reader sees: sequence numbers in `(after, upto]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) after: u64,
    pub(crate) upto: u64,
}

impl Window {
    /// Every frame: what an append's own, not yet logged, writes are read with.
    pub(crate) const ALL: Window = Window { after: 0, upto: u64::MAX };

    fn holds(&self, seq: u64) -> bool {
        self.after < seq && seq <= self.upto
    }
}

/// A key's values, oldest first, each with the frame that wrote it.
type Versions = Vec<(u64, Bytes)>;

fn newest(versions: &Versions, window: Window) -> Option<&Bytes> {
    versions.iter().rev().find(|(seq, _)| window.holds(*seq)).map(|(_, value)| value)
}

/// Every value the frames put, by table, with the frames' redo forms for the checkpoint.
#[derive(Debug, Default)]
pub(crate) struct Maps {
    meta: BTreeMap<String, Versions>,
    sessions: BTreeMap<String, Versions>,
    names: BTreeMap<u64, Versions>,
    journal: BTreeMap<(u64, u64), Versions>,
    digests: BTreeMap<(u64, u64), Versions>,
    entries: BTreeMap<String, Versions>,
    positions: BTreeMap<u64, Versions>,
    blobs: HashMap<[u8; 32], Versions>,
    receipts: BTreeMap<(u64, u64), Versions>,
    /// Each frame's sequence number and redo form, in order.
    frames: Vec<(u64, Bytes)>,
}

impl Maps {
    /// Adds frame `seq`; a redo form that does not parse is `Corrupted` (its check passed, so
    /// the bytes are what was written).
    pub(crate) fn add(&mut self, seq: u64, redo: Bytes) -> Result<(), Failure> {
        // Checked whole before anything is added, so a frame that does not parse adds nothing.
        for op in ops(&redo) {
            let (target, key, value) = op?;
            check_op(target, key, value)?;
        }
        for op in ops(&redo) {
            let (target, key, value) = op?;
            self.insert(seq, target, key, redo.slice_ref(value))?;
        }
        self.frames.push((seq, redo));
        Ok(())
    }

    /// Puts one value, as frame `seq` would: what an append reads its own writes back from.
    pub(crate) fn put(&mut self, seq: u64, target: Target, key: &[u8], value: Bytes) -> Result<(), Failure> {
        check_op(target, key, &value)?;
        self.insert(seq, target, key, value)
    }

    fn insert(&mut self, seq: u64, target: Target, key: &[u8], value: Bytes) -> Result<(), Failure> {
        let versions = match target {
            Target::Meta => self.meta.entry(text(key)?.to_owned()).or_default(),
            Target::Sessions => self.sessions.entry(text(key)?.to_owned()).or_default(),
            Target::Names => self.names.entry(u64_of(key)?).or_default(),
            Target::Journal => self.journal.entry(unpair(key)?).or_default(),
            Target::Digests => self.digests.entry(unpair(key)?).or_default(),
            Target::Entries => self.entries.entry(text(key)?.to_owned()).or_default(),
            Target::Positions => self.positions.entry(u64_of(key)?).or_default(),
            Target::Blobs => self.blobs.entry(fixed::<32>(key)?).or_default(),
            Target::Receipts => self.receipts.entry(unpair(key)?).or_default(),
        };
        versions.push((seq, value));
        Ok(())
    }

    /// The frames above `after`, oldest first: what a checkpoint folds into redb.
    pub(crate) fn frames_after(&self, after: u64) -> impl Iterator<Item = &(u64, Bytes)> {
        self.frames.iter().filter(move |(seq, _)| *seq > after)
    }

    /// Whether any frame is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Entries and bytes of keys and values the window holds, per table, as
    /// [`Snapshot::table_sizes`](crate::Snapshot::table_sizes) names them.
    pub(crate) fn sizes(&self, window: Window) -> [(&'static str, u64, u64); 6] {
        fn size<'a, K: 'a>(
            table: impl Iterator<Item = (&'a K, &'a Versions)>,
            key_len: impl Fn(&K) -> usize,
            window: Window,
        ) -> (u64, u64) {
            table.fold((0, 0), |(entries, bytes), (key, versions)| match newest(versions, window) {
                Some(value) => (entries + 1, bytes + (key_len(key) + value.len()) as u64),
                None => (entries, bytes),
            })
        }
        let (sessions, journal, digests, entries, positions, blobs) = (
            size(self.sessions.iter(), String::len, window),
            size(self.journal.iter(), |_| 16, window),
            size(self.digests.iter(), |_| 16, window),
            size(self.entries.iter(), String::len, window),
            size(self.positions.iter(), |_| 8, window),
            size(self.blobs.iter(), |_| 32, window),
        );
        [
            ("sessions", sessions.0, sessions.1),
            ("journal", journal.0, journal.1),
            ("digests", digests.0, digests.1),
            ("entries", entries.0, entries.1),
            ("positions", positions.0, positions.1),
            ("blobs", blobs.0, blobs.1),
        ]
    }

    pub(crate) fn meta(&self, key: &str, window: Window) -> Result<Option<u64>, Failure> {
        self.meta.get(key).and_then(|v| newest(v, window)).map(|b| u64_of(b)).transpose()
    }

    pub(crate) fn session(&self, name: &str, window: Window) -> Option<SessionRow> {
        let value = self.sessions.get(name).and_then(|v| newest(v, window))?;
        // Checked when the frame was added.
        fixed::<SESSION_ROW_LEN>(value).ok().map(|row| SessionRow::decode(&row))
    }

    /// Every session row the window holds, by name.
    pub(crate) fn sessions(&self, window: Window) -> Vec<(String, SessionRow)> {
        self.sessions
            .iter()
            .filter_map(|(name, v)| {
                let row = fixed::<SESSION_ROW_LEN>(newest(v, window)?).ok()?;
                Some((name.clone(), SessionRow::decode(&row)))
            })
            .collect()
    }

    pub(crate) fn name(&self, key: u64, window: Window) -> Option<String> {
        let value = self.names.get(&key).and_then(|v| newest(v, window))?;
        text(value).ok().map(str::to_owned)
    }

    pub(crate) fn journal(&self, key: (u64, u64), window: Window) -> Option<Bytes> {
        self.journal.get(&key).and_then(|v| newest(v, window)).cloned()
    }

    /// The records of one session key in `orders`, in order.
    pub(crate) fn journal_range(&self, key: u64, orders: (u64, u64), window: Window) -> Vec<(u64, Bytes)> {
        range_of(&self.journal, key, orders, window)
    }

    pub(crate) fn digest(&self, key: (u64, u64), window: Window) -> Option<[u8; DIGEST_LEN]> {
        self.digests.get(&key).and_then(|v| newest(v, window)).and_then(|b| fixed(b).ok())
    }

    /// The digests of one session key in `orders`, in order.
    pub(crate) fn digest_range(
        &self,
        key: u64,
        orders: (u64, u64),
        window: Window,
    ) -> Vec<(u64, [u8; DIGEST_LEN])> {
        range_of(&self.digests, key, orders, window)
            .into_iter()
            .filter_map(|(order, b)| Some((order, fixed(&b).ok()?)))
            .collect()
    }

    /// The receipts of one session key in `orders`, in order.
    pub(crate) fn receipt_range(&self, key: u64, orders: (u64, u64), window: Window) -> Vec<(u64, [u8; 32])> {
        range_of(&self.receipts, key, orders, window)
            .into_iter()
            .filter_map(|(order, b)| Some((order, fixed(&b).ok()?)))
            .collect()
    }

    pub(crate) fn entry(&self, entry_id: &str, window: Window) -> Option<(u64, u64)> {
        self.entries.get(entry_id).and_then(|v| newest(v, window)).and_then(|b| unpair(b).ok())
    }

    /// Positions from `from` on, in order.
    pub(crate) fn positions(&self, from: u64, window: Window) -> Vec<(u64, (u64, u64))> {
        self.positions
            .range(from..)
            .filter_map(|(position, v)| Some((*position, unpair(newest(v, window)?).ok()?)))
            .collect()
    }

    /// One past the highest position the window holds (0 when none).
    pub(crate) fn position_end(&self, window: Window) -> u64 {
        self.positions
            .iter()
            .rev()
            .find(|(_, v)| newest(v, window).is_some())
            .map_or(0, |(position, _)| position + 1)
    }

    pub(crate) fn blob(&self, hash: &[u8; 32], window: Window) -> Option<Bytes> {
        self.blobs.get(hash).and_then(|v| newest(v, window)).cloned()
    }

    /// Every blob the window holds, with its stored value.
    pub(crate) fn blobs(&self, window: Window) -> Vec<([u8; 32], Bytes)> {
        self.blobs.iter().filter_map(|(hash, v)| Some((*hash, newest(v, window)?.clone()))).collect()
    }
}

fn range_of(
    table: &BTreeMap<(u64, u64), Versions>,
    key: u64,
    orders: (u64, u64),
    window: Window,
) -> Vec<(u64, Bytes)> {
    if orders.0 >= orders.1 {
        return Vec::new();
    }
    table
        .range((key, orders.0)..(key, orders.1))
        .filter_map(|((_, order), v)| Some((*order, newest(v, window)?.clone())))
        .collect()
}

/// The frames of one cycle of the log, shared by every snapshot that paired with them.
#[derive(Debug, Default)]
pub(crate) struct Overlay {
    maps: RwLock<Maps>,
}

impl Overlay {
    /// The frames, for reading.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Maps> {
        // Frames are added whole or not at all (`add` parses before the caller publishes the
        // frame's end): a panic elsewhere leaves nothing half-added to read.
        self.maps.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds frame `seq`.
    pub(crate) fn add(&self, seq: u64, redo: Bytes) -> Result<(), Failure> {
        self.maps.write().unwrap_or_else(PoisonError::into_inner).add(seq, redo)
    }
}

/// What a snapshot lays over its redb transaction: the frames of its window.
#[derive(Clone, Debug)]
pub(crate) struct Layer {
    pub(crate) overlay: Arc<Overlay>,
    pub(crate) window: Window,
}

impl Layer {
    /// The frames, for reading through [`Layer::window`].
    pub(crate) fn maps(&self) -> RwLockReadGuard<'_, Maps> {
        self.overlay.read()
    }
}
