//! `ProjectionSnapshot`: one read transaction over the journal and the projection tables
//! (receipts, checkpoints), so a view is computed from a single committed state.

use std::sync::Arc;

use redb::{ReadOnlyTable, ReadTransaction};

use crate::error::{Failure, ReadError};
use crate::log::overlay::Layer;
use crate::read::{range_with_frames, Snapshot};
use crate::tables::{CHECKPOINTS, RECEIPTS};
use crate::tokens::TokenCounter;

use super::cache::ProjectionCache;

/// A consistent read view of a store for projections: the journal (as a [`Snapshot`]) and the
/// checkpoint tables, all from one redb read transaction, with the store's token counter. Get
/// one with [`Store::projection_snapshot`](crate::Store::projection_snapshot).
pub struct ProjectionSnapshot {
    receipts: ReadOnlyTable<(u64, u64), [u8; 32]>,
    checkpoints: ReadOnlyTable<[u8; 32], &'static [u8]>,
    counter: Arc<dyn TokenCounter>,
    cache: Option<Arc<ProjectionCache>>,
    snapshot: Snapshot,
}

impl std::fmt::Debug for ProjectionSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectionSnapshot").finish_non_exhaustive()
    }
}

impl ProjectionSnapshot {
    /// Opens the projection tables of `txn`, then hands it to a [`Snapshot`]: redb's read-only
    /// tables keep the transaction's view alive on their own.
    pub(crate) fn new(
        txn: ReadTransaction,
        layer: Option<Layer>,
        counter: Arc<dyn TokenCounter>,
        cache: Option<Arc<ProjectionCache>>,
    ) -> Result<ProjectionSnapshot, ReadError> {
        let receipts = txn.open_table(RECEIPTS).map_err(Failure::from)?;
        let checkpoints = txn.open_table(CHECKPOINTS).map_err(Failure::from)?;
        let snapshot = Snapshot::layered(txn, layer)?;
        Ok(ProjectionSnapshot { receipts, checkpoints, counter, cache, snapshot })
    }

    /// The store's cache of outlines and entry ids.
    pub(crate) fn cache(&self) -> Option<&ProjectionCache> {
        self.cache.as_deref()
    }

    /// The token counter generated text is measured with (the store's).
    pub(crate) fn counter(&self) -> &dyn TokenCounter {
        self.counter.as_ref()
    }

    /// The journal as of this snapshot.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The receipts of session key `key` with sourceOrders in `[orders.0, orders.1)`, in order:
    /// redb's, then those of the shared log's frames laid over it.
    pub(crate) fn receipt_range(
        &self,
        key: u64,
        orders: (u64, u64),
    ) -> Result<Vec<(u64, [u8; 32])>, ReadError> {
        range_with_frames(&self.receipts, key, orders, |after| match self.snapshot.layer() {
            Some(layer) => layer.maps().receipt_range(key, (after, orders.1), layer.window),
            None => Vec::new(),
        })
    }

    /// The stored plan of a checkpoint, if its row exists.
    pub(crate) fn checkpoint_row(&self, key: &[u8; 32]) -> Result<Option<Vec<u8>>, ReadError> {
        Ok(self.checkpoints.get(key).map_err(ReadError::storage)?.map(|value| value.value().to_vec()))
    }
}
