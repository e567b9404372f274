//! The store as every command and front-end (the viewer, the MCP server, the demo) uses it
//! besides its own work: where it is, its search index caught up before a search, and a fleet
//! it is kept in step with. Commands take these from here, never from one another.

mod location;
mod relay;
mod searchable;

pub(crate) use location::StoreLocation;
pub(crate) use relay::{Connection, Relay};
pub(crate) use searchable::{catch_up, open_searchable, STALL};
