//! The `annal` binary as users and agents run it: the journal commands, import and export, sync,
//! history search, the MCP server, bad input (nested as deep as it likes) and failures, each a real process on a store in a
//! temporary folder.

#[path = "../support/mod.rs"]
mod support;

mod bad_input;
mod failures;
mod fleet;
mod history;
mod import_saves;
mod import_shapes;
mod journal;
mod mcp;
mod nesting;
mod sync;
mod sync_places;
mod transfer;
mod ui;
