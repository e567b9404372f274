//! What a record is and how it is written down: the record and its borrowed view, the archived
//! bytes (the one module that touches rkyv) and their packing, the canonical text of JSON
//! values, hashes, digests, token counts, times and priority targets.

pub(crate) mod canonical;
pub(crate) mod codec;
pub(crate) mod digest;
pub(crate) mod hash;
pub(crate) mod packing;
pub(crate) mod record;
pub(crate) mod target;
pub(crate) mod time;
pub(crate) mod tokens;
pub(crate) mod view;
