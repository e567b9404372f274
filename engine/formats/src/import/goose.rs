//! goose: rows of its SQLite `sessions.db` as records
//! (placeholder until the importer lands).

use super::ParsedSession;

/// One row of the `sessions` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GooseSessionRow {
    /// `id`.
    pub id: String,
}

/// One row of the `messages` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GooseMessageRow {
    /// `id`.
    pub id: String,
}

/// The records of one session's message rows, in the order given.
pub fn parse_goose_session(session: &GooseSessionRow, _messages: &[GooseMessageRow]) -> ParsedSession {
    ParsedSession {
        name: session.id.clone(),
        parent: None,
        fork_at: None,
        records: Vec::new(),
        claimed_hashes: Vec::new(),
    }
}
