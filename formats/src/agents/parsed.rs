//! What a parse takes and gives back: its bounds ([`ParseOptions`]), the sessions it found
//! ([`ParsedTranscript`], [`ParsedSession`]) and the lines it skipped, with why ([`Skipped`]).

use std::fmt;

use annal_engine::Hash;
use annal_engine::Record;

/// Bounds on what one parse accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// The longest line of a line-based format; a longer line is skipped and reported.
    pub max_line_bytes: usize,
    /// The largest single-document transcript (OpenCode); a larger one is reported, not parsed.
    pub max_document_bytes: usize,
}

impl Default for ParseOptions {
    fn default() -> ParseOptions {
        // A line holds one message; 64 MiB fits a large base64 screenshot with room to spare,
        // while a runaway line (a binary file appended by mistake) cannot exhaust memory.
        ParseOptions { max_line_bytes: 64 << 20, max_document_bytes: 1 << 30 }
    }
}

/// What a transcript parsed to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParsedTranscript {
    /// The sessions found, in the order they were found. Most files hold one.
    pub sessions: Vec<ParsedSession>,
    /// Every line that could not be read, in file order.
    pub skipped: Vec<Skipped>,
    /// Lines or items that were read (valid JSON, say) but are of no kind this format knows.
    /// When they are most of a file, the file is in another format: an import reports it
    /// rather than storing records that carry nothing.
    pub unrecognised: usize,
    /// Lines or items read as something this format knows.
    pub recognised: usize,
}

impl ParsedTranscript {
    /// The records of every session.
    pub fn record_count(&self) -> usize {
        self.sessions.iter().map(|session| session.records.len()).sum()
    }
}

/// One session of a transcript, ready to append.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedSession {
    /// The session's name: the source's session id where it has one, else the file stem.
    pub name: String,
    /// The session this one was forked from (annal exports only).
    pub parent: Option<String>,
    /// The fork point in `parent` (annal exports only).
    pub fork_at: Option<u64>,
    /// The records, in source order.
    pub records: Vec<Record>,
    /// Per record, the `(hash, prevHash)` the source claims for it (annal exports only; `None`
    /// elsewhere), so the caller can check that an import reproduces the exported chain.
    pub claimed_hashes: Vec<Option<(Hash, Hash)>>,
}

/// A line that was not imported, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The 1-based line number in the file.
    pub line: usize,
    /// Why it was skipped.
    pub reason: SkipReason,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

/// Why a line was skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// A `//` comment line, which JSON does not allow.
    Comment,
    /// The line is not UTF-8 text.
    NotUtf8 {
        /// The offset in the line of the first byte that is not UTF-8.
        valid_up_to: usize,
    },
    /// The line is not JSON.
    NotJson {
        /// What the JSON parser said.
        message: String,
        /// The 1-based column where it gave up.
        column: usize,
    },
    /// The JSON nests deeper than the parser's recursion limit (128 levels).
    TooDeep,
    /// The file ends inside this line (a write cut short); it imports once it is complete.
    Truncated,
    /// The line is longer than [`ParseOptions::max_line_bytes`].
    TooLarge {
        /// The line's length.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// Valid JSON that cannot be read as what the format requires at this place.
    Invalid(String),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Comment => f.write_str("comment line (not JSON)"),
            SkipReason::NotUtf8 { valid_up_to } => {
                write!(f, "not UTF-8 (invalid byte at offset {valid_up_to})")
            }
            SkipReason::NotJson { message, column } => write!(f, "not JSON ({message} at column {column})"),
            SkipReason::TooDeep => f.write_str("JSON nested too deeply (over 128 levels)"),
            SkipReason::Truncated => f.write_str("truncated (the file ends inside this line)"),
            SkipReason::TooLarge { bytes, limit } => {
                write!(f, "too large ({bytes} bytes, over the limit of {limit})")
            }
            SkipReason::Invalid(reason) => write!(f, "not a valid record ({reason})"),
        }
    }
}
