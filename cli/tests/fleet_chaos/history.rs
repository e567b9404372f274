//! The history of a fault run: every operation a client tried, with what it was told, and every
//! fault the nemesis injected. The checker reads it once the run is over.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// What one append was told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Exit 0 or `Ok`: the record is in the session at this sourceOrder.
    Acknowledged(u64),
    /// Exit 13 or `ErrorKind::Forked`: the record went to this fork of the session.
    Forked(String),
    /// Another writer took the position (exit 4): not appended, tried again.
    Conflict,
    /// Not acknowledged, no server, or the client was killed: unknown, tried again with the
    /// same entryId.
    Unknown(String),
    /// Anything else: a failure the fleet must never give under these faults.
    Failed(String),
}

/// One operation.
#[derive(Debug, Clone)]
pub(crate) struct Operation {
    pub(crate) client: String,
    pub(crate) session: String,
    pub(crate) entry_id: String,
    pub(crate) outcome: Outcome,
}

/// Everything that happened, in the order it was recorded.
#[derive(Debug, Default)]
pub(crate) struct History {
    operations: Mutex<Vec<Operation>>,
    faults: Mutex<BTreeMap<&'static str, u64>>,
    /// Lines that are failures by themselves: a status read or a follow that failed the way
    /// it must not (a session stopped, corrupted).
    failures: Mutex<Vec<String>>,
}

impl History {
    pub(crate) fn record(&self, client: &str, session: &str, entry_id: &str, outcome: Outcome) {
        let operation = Operation {
            client: client.to_owned(),
            session: session.to_owned(),
            entry_id: entry_id.to_owned(),
            outcome,
        };
        self.operations.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(operation);
    }

    pub(crate) fn fault(&self, kind: &'static str) {
        *self.faults.lock().unwrap_or_else(std::sync::PoisonError::into_inner).entry(kind).or_default() += 1;
    }

    pub(crate) fn failure(&self, line: String) {
        self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(line);
    }

    pub(crate) fn operations(&self) -> Vec<Operation> {
        self.operations.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub(crate) fn faults(&self) -> BTreeMap<&'static str, u64> {
        self.faults.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub(crate) fn failures(&self) -> Vec<String> {
        self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// A record's text: real-world text with the client and turn in it (CJK, an ideographic
/// space, emoji, a combining mark, and now and then a long line).
pub(crate) fn text(client: &str, turn: u64) -> String {
    let long = if turn.is_multiple_of(17) { "長い行 ".repeat(900) } else { String::new() };
    format!("{client} turn {turn}: 日本語のテキスト\u{3000}🚀 cafe\u{301} {long}")
}
