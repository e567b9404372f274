//! Crush and the Go OpenCode: rows of their SQLite `sessions` and `messages` tables as records
//! (placeholder until the importer lands).

use super::ParsedSession;

/// One row of the `sessions` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrushSessionRow {
    /// `id`.
    pub id: String,
}

/// One row of the `messages` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrushMessageRow {
    /// `id`.
    pub id: String,
}

/// The records of one session's message rows, in the order given.
pub fn parse_crush_session(session: &CrushSessionRow, _messages: &[CrushMessageRow]) -> ParsedSession {
    ParsedSession {
        name: session.id.clone(),
        parent: None,
        fork_at: None,
        records: Vec::new(),
        claimed_hashes: Vec::new(),
    }
}
