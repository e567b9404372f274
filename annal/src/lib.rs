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

#[doc = include_str!("docs/mod-error.md")]
mod append;
pub mod error;
#[doc = include_str!("docs/mod-fleet.md")]
pub mod fleet;
mod handle;
#[doc = include_str!("docs/mod-import.md")]
pub mod import;
pub mod json;
mod options;
pub mod responses;
mod search;
pub mod snapshot;
#[doc = include_str!("docs/mod-sync.md")]
pub mod sync;
pub mod text;

#[doc = include_str!("docs/Error.md")]
#[doc(inline)]
pub use crate::error::Error;
#[doc = include_str!("docs/Annal.md")]
pub use crate::handle::Annal;
#[doc = include_str!("docs/ExportFormat.md")]
pub use crate::handle::ExportFormat;
#[doc = include_str!("docs/ExportOptions.md")]
pub use crate::handle::ExportOptions;
pub use crate::options::Options;

// Store configuration.
#[doc = include_str!("docs/Limits.md")]
pub use annal_engine::Limits;
#[doc = include_str!("docs/Sharing.md")]
pub use annal_engine::Sharing;
#[doc = include_str!("docs/TokenCounter.md")]
pub use annal_engine::TokenCounter;
// Records and what an append returns.
#[doc = include_str!("docs/AppendReceipt.md")]
pub use annal_engine::AppendReceipt;
#[doc = include_str!("docs/Block.md")]
pub use annal_engine::Block;
#[doc = include_str!("docs/PortableRecord.md")]
pub use annal_engine::PortableRecord;
#[doc = include_str!("docs/Record.md")]
pub use annal_engine::Record;
#[doc = include_str!("docs/Role.md")]
pub use annal_engine::Role;
// Reads: a consistent view, sessions, checks (what a snapshot hands out is in `snapshot`).
#[doc = include_str!("docs/Problem.md")]
pub use annal_engine::Problem;
#[doc = include_str!("docs/SessionInfo.md")]
pub use annal_engine::SessionInfo;
#[doc = include_str!("docs/Snapshot.md")]
pub use annal_engine::Snapshot;
#[doc = include_str!("docs/VerifyReport.md")]
pub use annal_engine::VerifyReport;
// Projections and compaction.
#[doc = include_str!("docs/Algorithm.md")]
pub use annal_engine::Algorithm;
#[doc = include_str!("docs/Budget.md")]
pub use annal_engine::Budget;
#[doc = include_str!("docs/CompactOptions.md")]
pub use annal_engine::CompactOptions;
#[doc = include_str!("docs/CompactOutcome.md")]
pub use annal_engine::CompactOutcome;
#[doc = include_str!("docs/CompactStatus.md")]
pub use annal_engine::CompactStatus;
#[doc = include_str!("docs/KeptCounts.md")]
pub use annal_engine::KeptCounts;
#[doc = include_str!("docs/Message.md")]
pub use annal_engine::Message;
#[doc = include_str!("docs/MessageBlock.md")]
pub use annal_engine::MessageBlock;
#[doc = include_str!("docs/Omission.md")]
pub use annal_engine::Omission;
#[doc = include_str!("docs/OmissionReason.md")]
pub use annal_engine::OmissionReason;
#[doc = include_str!("docs/OmittedCounts.md")]
pub use annal_engine::OmittedCounts;
#[doc = include_str!("docs/OmittedEntry.md")]
pub use annal_engine::OmittedEntry;
#[doc = include_str!("docs/PartTokens.md")]
pub use annal_engine::PartTokens;
#[doc = include_str!("docs/ProjectOptions.md")]
pub use annal_engine::ProjectOptions;
#[doc = include_str!("docs/Projection.md")]
pub use annal_engine::Projection;
#[doc = include_str!("docs/ProjectionStats.md")]
pub use annal_engine::ProjectionStats;
#[doc = include_str!("docs/Summarizer.md")]
pub use annal_engine::Summarizer;
#[doc = include_str!("docs/SummaryRequest.md")]
pub use annal_engine::SummaryRequest;
#[doc = include_str!("docs/ViewSource.md")]
pub use annal_engine::ViewSource;
// Search and originals.
#[doc = include_str!("docs/Hit.md")]
pub use annal_query::Hit;
#[doc = include_str!("docs/IndexStatus.md")]
pub use annal_query::IndexStatus;
#[doc = include_str!("docs/Original.md")]
pub use annal_query::Original;
#[doc = include_str!("docs/OriginalBlock.md")]
pub use annal_query::OriginalBlock;
#[doc = include_str!("docs/RebuildSummary.md")]
pub use annal_query::RebuildSummary;
#[doc = include_str!("docs/SearchRequest.md")]
pub use annal_query::SearchRequest;
#[doc = include_str!("docs/Snippet.md")]
pub use annal_query::Snippet;
// Exports.
#[doc = include_str!("docs/ExportSummary.md")]
pub use annal_formats::ExportSummary;
