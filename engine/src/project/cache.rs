//! A store's cache of what projections read again and again: each recent session's outline
//! (its digests, as planning items, and its receipts) and the entry ids markers name.
//!
//! Records are never modified after their append commits, and a session's lineage (key, parent,
//! fork point) never changes, so a cached outline of a session's first `len` records stays
//! exact forever: a later call reads only the digests appended since, and a call on an older
//! snapshot uses a prefix. Entry ids are cached by where the record is stored (session key,
//! sourceOrder), so a fork shares its parent's. Everything here is derived from the journal and
//! may be dropped at any time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::hash::Hash;

use super::item::{Item, ReceiptRef};

/// Sessions whose outlines are kept.
const OUTLINES_MAX: usize = 16;
/// Entry ids kept before the map starts over.
const ENTRY_IDS_MAX: usize = 1 << 20;
/// Checkpoints whose evidence rows are kept.
const ROWS_MAX: usize = 64;

/// The identity of a session's lineage: its key, its parent's key and its fork point.
pub(crate) type Identity = (u64, u64, u64);

/// A cached outline: the items and receipts of a session's first `len` records.
#[derive(Clone, Debug)]
pub(crate) struct CachedOutline {
    pub(crate) name: String,
    pub(crate) identity: Identity,
    pub(crate) len: u64,
    pub(crate) items: Arc<Vec<Item>>,
    pub(crate) receipts: Arc<Vec<ReceiptRef>>,
}

#[derive(Debug, Default)]
struct State {
    /// Most recently used first.
    outlines: Vec<CachedOutline>,
    entry_ids: HashMap<(u64, u64), Arc<str>>,
    /// Formatted evidence rows by checkpoint key, most recently kept last.
    rows: Vec<(Hash, Arc<Vec<String>>)>,
}

/// The cache; shared by a store and its projection snapshots.
#[derive(Debug, Default)]
pub(crate) struct ProjectionCache {
    state: Mutex<State>,
}

impl crate::store::Store {
    /// The store's projection cache: outlines and entry ids projections read again and again
    /// (derived, safe to drop).
    pub(crate) fn projection_cache(&self) -> std::sync::Arc<ProjectionCache> {
        self.extension()
    }
}

/// What the cache holds for a session.
pub(crate) enum Lookup {
    /// Nothing (or another lineage under the name).
    Miss,
    /// At least the records asked for.
    Covers(CachedOutline),
    /// Fewer records: taken out of the cache to be extended and put back.
    Short(CachedOutline),
}

impl ProjectionCache {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere cannot leave this derived data inconsistent: every change is a
        // whole insert or removal.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The cached outline of `name` for a snapshot where it has `len` records.
    pub(crate) fn lookup(&self, name: &str, identity: Identity, len: u64) -> Lookup {
        let mut state = self.state();
        let Some(at) = state.outlines.iter().position(|o| o.name == name && o.identity == identity) else {
            return Lookup::Miss;
        };
        if state.outlines[at].len >= len {
            let hit = state.outlines.remove(at);
            state.outlines.insert(0, hit.clone());
            Lookup::Covers(hit)
        } else {
            Lookup::Short(state.outlines.remove(at))
        }
    }

    /// Keeps `outline` (replacing a shorter one of the same session).
    pub(crate) fn keep(&self, outline: CachedOutline) {
        let mut state = self.state();
        if let Some(at) = state.outlines.iter().position(|o| o.name == outline.name) {
            if state.outlines[at].identity == outline.identity && state.outlines[at].len >= outline.len {
                return;
            }
            state.outlines.remove(at);
        }
        state.outlines.insert(0, outline);
        state.outlines.truncate(OUTLINES_MAX);
    }

    /// The entry id stored at (session key, sourceOrder), if cached.
    pub(crate) fn entry_id(&self, at: (u64, u64)) -> Option<Arc<str>> {
        self.state().entry_ids.get(&at).cloned()
    }

    /// The formatted evidence rows of a checkpoint, if cached.
    pub(crate) fn rows(&self, key: &Hash) -> Option<Arc<Vec<String>>> {
        self.state().rows.iter().find(|(k, _)| k == key).map(|(_, rows)| Arc::clone(rows))
    }

    /// Caches the formatted evidence rows of a checkpoint.
    pub(crate) fn keep_rows(&self, key: Hash, rows: Arc<Vec<String>>) {
        let mut state = self.state();
        state.rows.retain(|(k, _)| *k != key);
        state.rows.push((key, rows));
        if state.rows.len() > ROWS_MAX {
            state.rows.remove(0);
        }
    }

    /// Caches an entry id.
    pub(crate) fn keep_entry_id(&self, at: (u64, u64), id: &str) {
        let mut state = self.state();
        if state.entry_ids.len() >= ENTRY_IDS_MAX {
            state.entry_ids.clear();
        }
        state.entry_ids.entry(at).or_insert_with(|| Arc::from(id));
    }
}
