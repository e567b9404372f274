//! annal-sources: where coding agents keep their sessions on a machine, and reading them
//! incrementally: transcript files by size and offset, databases by update time, each with a
//! cursor the caller keeps in the store.

mod db;
mod error;
mod opencode_storage;

pub use crate::error::SourceError;
