//! Which journal records are compaction receipts: a receipt is an ordinary record whose
//! metadata names the checkpoint it commits, and every append indexes it in the `receipts`
//! table so a view finds a session's newest checkpoint without scanning. The journal knows
//! this much of receipts and no more; what a checkpoint holds is the projection layer's.

use serde_json::Value;

use crate::codec::StoredMeta;
use crate::hash::{hash_from_hex, Hash};

/// The metadata key that makes a record a receipt.
pub const RECEIPT_META_KEY: &str = "annal.receipt";

/// The checkpoint key a stored record's metadata names, if it is a receipt.
pub(crate) fn receipt_key_of(meta: &[StoredMeta]) -> Option<Hash> {
    let entry = meta.iter().find(|m| m.key == RECEIPT_META_KEY)?;
    let value: Value = serde_json::from_str(&entry.value).ok()?;
    hash_from_hex(value.get("key")?.as_str()?)
}
