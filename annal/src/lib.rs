//! annal: an embeddable, event-sourced session store for AI agents.
//!
//! Every record of an agent session (user text, assistant text, thinking, tool calls, tool
//! output) is appended once to a durable, hash-chained journal in one file and never
//! rewritten. What the model sees next is a **projection** of that journal under a token
//! budget; when it grows past the budget's trigger, **compaction** commits a checkpoint so later
//! views keep a stable prefix. Everything a projection leaves out stays on disk: its omission
//! markers name the entryIds, [`Annal::search`] finds any original by its words, and
//! [`Annal::get`] reads it back verbatim. Sessions fork in O(1), and can be exported, imported
//! (also from Claude Code, Codex, OpenCode, Gemini CLI, goose, Crush, aider, Cline and Roo Code
//! sessions, once or continuously with [`Annal::sync`]) and verified.
//!
//! This crate is what an agent framework depends on. [`Annal`] holds a store and its search
//! index; the engine's and the search index's types are re-exported here, so one dependency is
//! enough. No storage or index library type appears in any signature.
//!
//! # An agent loop
//!
//! Append each turn; before each model call, ask for the projection and send its messages;
//! compact when the projection says so; answer "what did we decide about X" by searching.
//!
//! ```
//! use annal::{Annal, Block, Budget, CompactOptions, ProjectOptions, Record, Role, SearchRequest, ViewSource};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let annal = Annal::open(dir.path().join("sessions.redb"))?;
//! // A small window, so that this short loop needs compacting.
//! let budget = Budget { tail_tokens: 1_024, evidence_tokens: 512, history_tokens: 1_024, ..Budget::new(8_000, 1_000) };
//! let options = ProjectOptions::new(budget);
//!
//! for turn in 1..=12 {
//!     let ask = if turn == 1 { "Make the importer faster.".to_owned() } else { format!("Go on: step {turn}.") };
//!     annal.append("s", None, vec![Record::text(format!("u{turn}"), Role::User, ask)])?;
//!     // Before each model call: the view to send, compacted when it has grown too large.
//!     let mut view = annal.project("s", &options)?;
//!     if view.compaction_due {
//!         annal.compact("s", &CompactOptions::new(options))?;
//!         view = annal.project("s", &options)?;
//!     }
//!     assert!(view.stats.tokens.total <= u64::from(budget.capacity_tokens()));
//!     // The model's reply (here: made up) and the tool's output, appended as they happen.
//!     let text = match turn {
//!         3 => "We decided to batch appends by 2,000 records per transaction.".to_owned(),
//!         _ => format!("Profiling step {turn}."),
//!     };
//!     let call = Block::tool_call(format!("c{turn}"), "Bash", format!(r#"{{"command":"cargo bench -- step{turn}"}}"#));
//!     annal.append("s", None, vec![Record::new(format!("a{turn}"), Role::Assistant, vec![Block::text(text), call])])?;
//!     let output = format!("step{turn}: {}\n", "12.5 ms/iter ".repeat(200));
//!     let result = Block::tool_result(format!("c{turn}"), "Bash", false, output);
//!     annal.append("s", None, vec![Record::new(format!("t{turn}"), Role::Tool, vec![result])])?;
//! }
//! // The view now starts from a checkpoint; what it left out is still on disk.
//! let view = annal.project("s", &options)?;
//! assert!(matches!(view.source, ViewSource::Checkpoint { .. }));
//!
//! // "What did we decide about batching?": search, then read the original.
//! let hits = annal.search(&SearchRequest::new("decided batch"))?;
//! assert_eq!(hits[0].id(), "a3#0");
//! let original = annal.get(&hits[0].id(), None)?;
//! assert_eq!(
//!     original.blocks[0].text.as_deref(),
//!     Some("We decided to batch appends by 2,000 records per transaction.")
//! );
//! assert!(annal.verify(None)?.is_ok());
//! annal.close()?;
//! # Ok(()) }
//! ```
//!
//! # Threads and processes
//!
//! [`Annal`] is `Send + Sync`: share one handle between
//! threads, in an `Arc`. Appends from many threads, to one session or many, are committed
//! together (group commit) and each is acknowledged only after its commit is durable;
//! snapshots, projections and searches run alongside. Several processes may open the same file
//! at once (the default [`Sharing`] mode); one of them indexes for all.
//!
//! # Examples
//!
//! The crate's `examples/` folder has an agent loop with compaction and search
//! (`agent_loop`), a fork-and-retry (`fork_and_retry`) and an importer of existing sessions
//! (`import_sessions`): `cargo run -p annal --example agent_loop`.
#![deny(missing_docs)]

pub mod error;
mod handle;
pub mod import;
pub mod json;
mod options;
pub mod responses;
mod search;
pub mod snapshot;
pub mod sync;

pub use crate::error::Error;
pub use crate::handle::{Annal, ExportFormat, ExportOptions};
pub use crate::options::Options;

// Store configuration.
pub use annal_engine::{Limits, Sharing, TokenCounter};
// Records and what an append returns.
pub use annal_engine::{AppendReceipt, Block, PortableRecord, Record, Role};
// Reads: a consistent view, sessions, checks (what a snapshot hands out is in `snapshot`).
pub use annal_engine::{Problem, SessionInfo, Snapshot, VerifyReport};
// Projections and compaction.
pub use annal_engine::{
    Algorithm, Budget, CompactOptions, CompactOutcome, CompactStatus, KeptCounts, Message, MessageBlock,
    Omission, OmissionReason, OmittedCounts, OmittedEntry, PartTokens, ProjectOptions, Projection,
    ProjectionStats, Summarizer, SummaryRequest, ViewSource,
};
// Search and originals.
pub use annal_query::{Hit, IndexStatus, Original, OriginalBlock, RebuildSummary, SearchRequest, Snippet};
// Exports.
pub use annal_formats::ExportSummary;
