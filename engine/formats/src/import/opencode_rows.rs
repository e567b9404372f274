//! OpenCode's stored rows (the 1.2 SQLite tables, or the older `storage/` JSON tree) as
//! records (placeholder until the importer lands).

use super::ParsedSession;

/// One message as stored: its `data` JSON and its parts' `data` JSON, with the row ids.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenCodeMessageRows {
    /// The message row's id.
    pub id: String,
    /// The message's JSON.
    pub data: String,
    /// `(part id, part JSON)`, in the order the agent keeps them.
    pub parts: Vec<(String, String)>,
}

/// The records of one session from its session JSON and message rows, in the order given.
pub fn parse_opencode_rows(session_id: &str, _session: &str, _messages: &[OpenCodeMessageRows]) -> ParsedSession {
    ParsedSession {
        name: session_id.to_owned(),
        parent: None,
        fork_at: None,
        records: Vec::new(),
        claimed_hashes: Vec::new(),
    }
}
