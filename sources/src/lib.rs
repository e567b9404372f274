//! annal-sources: where coding agents keep their sessions on a machine, and reading them
//! incrementally into a store: transcript files by fingerprint, databases by update time, each
//! with a cursor kept in the store, so a sync reads only what changed.
//!
//! ```
//! use annal_engine::{Store, StoreOptions};
//! use annal_sources::{sync, Environment, SyncOptions};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let home = tempfile::tempdir()?;
//! let project = home.path().join(".claude/projects/-src-app");
//! std::fs::create_dir_all(&project)?;
//! let line = r#"{"type":"user","uuid":"u1","sessionId":"s1","message":{"role":"user","content":"hi"}}"#;
//! std::fs::write(project.join("s1.jsonl"), format!("{line}\n"))?;
//! let store = Store::open(home.path().join("annal.redb"), StoreOptions::default())?;
//! let options = SyncOptions { environment: Environment::with_home(home.path()), ..SyncOptions::default() };
//! let first = sync(&store, &options)?;
//! assert_eq!(first.sources[0].records_new, 1);
//! // Nothing changed: nothing is read.
//! let again = sync(&store, &options)?;
//! assert_eq!(again.sources[0].units_read, 0);
//! # Ok(()) }
//! ```

mod agent_store;
mod codex_fork;
mod cursor;
mod db;
mod discover;
mod error;
mod opencode_storage;
mod read;
mod sync;

pub use crate::agent_store::{is_opencode_storage, read_agent_store, AgentStoreReading};
pub use crate::discover::{may_hold_sessions, Unit, UnitKind};
pub use crate::error::SourceError;
pub use crate::read::{kimi_rotations, FILE_BYTES_MAX};
pub use crate::sync::{projects, survey, sync, SourceReport, SyncError, SyncOptions, SyncReport};
pub use annal_formats::Agent;
pub use annal_formats::Environment;
