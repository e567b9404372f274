//! annal-query: full-text search over the journal's originals, and retrieval by id.
//!
//! Every original a projection leaves out stays findable and retrievable verbatim. A
//! [`SearchIndex`] is a tantivy index in a folder beside the store (`<store>.index`), derived
//! from the journal: one document per block with text (text, thinking, tool call input, tool
//! output), kept up to date by an indexer thread, and rebuilt from the journal when missing or
//! damaged. [`get_original`] reads an original back by the id a hit, a projection marker or an
//! evidence row carries.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use annal_engine::{Record, Role, Store, StoreOptions};
//! use annal_query::{IndexOptions, SearchIndex, SearchRequest};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let store = Arc::new(Store::open(dir.path().join("annal.redb"), StoreOptions::default())?);
//! store.append("s", None, vec![Record::text("e1", Role::Assistant, "It failed with ECONNRESET.")])?;
//! let index = SearchIndex::open(Arc::clone(&store), IndexOptions::default())?;
//! index.wait_searchable(Duration::from_secs(10))?;
//! let hits = index.search(&SearchRequest::new("econnreset"))?;
//! assert_eq!(hits[0].id(), "e1#0");
//! assert_eq!(hits[0].snippet.marked("[", "]"), "It failed with [ECONNRESET].");
//! index.close()?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod clock;
mod error;
mod exclusion;
mod filters;
mod folder;
mod handover;
mod idents;
mod index;
mod indexer;
mod limits;
mod near;
mod original;
mod protect;
mod query;
mod schema;
mod search;
mod signals;
mod snippet;
mod tokenize;
mod top;
mod verified;

pub use crate::clock::{Clock, ManualClock};
pub use crate::error::{GetError, IndexError, SearchError, WaitError};
pub use crate::folder::index_folder;
pub use crate::index::{IndexOptions, IndexStatus, IndexedBlock, RebuildSummary, SearchIndex};
pub use crate::original::{get_original, select_lines, Original, OriginalBlock};
pub use crate::search::{Hit, SearchRequest};
pub use crate::snippet::Snippet;
