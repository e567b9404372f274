//! One model request in a form every strategy shares: messages of parts (text, thinking, call,
//! result), built from an engine projection or kept by a baseline, and the measurements taken
//! on it (tokens, prefix reuse, orphans, which values it quotes).

use std::collections::BTreeSet;
use std::sync::Arc;

use annal_engine::{Block, Message, MessageBlock, Record, Role};

use super::session::text_tokens;

/// What a part is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartKind {
    /// Text (original, or written by the strategy: a marker, a summary, a note).
    Text,
    /// Reasoning.
    Thinking,
    /// A tool call; `text` is its input.
    Call,
    /// A tool result; `text` is its output.
    Result,
}

/// One part of a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// What it is.
    pub kind: PartKind,
    /// The call id of a call or result (empty otherwise).
    pub call_id: Arc<str>,
    /// Its text.
    pub text: Arc<str>,
    /// The tool of a call or result (empty otherwise).
    pub tool: Arc<str>,
}

/// One message of a request.
#[derive(Clone, Debug)]
pub struct Msg {
    /// Who speaks.
    pub role: Role,
    /// Its parts.
    pub parts: Vec<Part>,
    /// The turn of the record it came from (baselines only; `usize::MAX` when unknown).
    pub turn: usize,
    /// Written by the strategy (a summary or a marker), not an original.
    pub synthetic: bool,
    /// chars / 4 of its parts.
    pub tokens: u64,
}

impl Msg {
    /// A message of `parts`.
    pub fn new(role: Role, parts: Vec<Part>, turn: usize, synthetic: bool) -> Msg {
        let tokens = parts.iter().map(|p| text_tokens(&p.text)).sum();
        Msg { role, parts, turn, synthetic, tokens }
    }

    /// A message of one text part.
    pub fn text(role: Role, text: &str, turn: usize, synthetic: bool) -> Msg {
        Msg::new(role, vec![Part::text(text)], turn, synthetic)
    }

    /// A record as a message, every block verbatim.
    pub fn from_record(record: &Record, turn: usize) -> Msg {
        let parts = record
            .blocks
            .iter()
            .filter_map(|block| match block {
                Block::Text { text } => Some(Part::text(text)),
                Block::Thinking { text } => Some(Part { kind: PartKind::Thinking, ..Part::text(text) }),
                Block::ToolCall { call_id, tool, input, .. } => {
                    Some(Part::tool(PartKind::Call, call_id, tool, input))
                }
                Block::ToolResult { call_id, tool, output, .. } => {
                    Some(Part::tool(PartKind::Result, call_id, tool, output))
                }
                Block::Blob { .. } => None,
            })
            .collect();
        Msg::new(record.role, parts, turn, false)
    }

    fn bytes(&self) -> u64 {
        self.parts.iter().map(|p| (p.text.len() + p.call_id.len() + 8) as u64).sum::<u64>() + 8
    }

    fn same(&self, other: &Msg) -> bool {
        self.role == other.role && self.parts == other.parts
    }

    /// Whether it carries user text (not a summary, not only results).
    pub fn is_user_text(&self) -> bool {
        self.role == Role::User
            && !self.synthetic
            && self.parts.iter().any(|p| p.kind == PartKind::Text)
            && !self.parts.iter().any(|p| p.kind == PartKind::Result)
    }
}

impl Part {
    /// A text part.
    pub fn text(text: &str) -> Part {
        Part { kind: PartKind::Text, call_id: "".into(), text: text.into(), tool: "".into() }
    }

    fn tool(kind: PartKind, call_id: &str, tool: &str, text: &str) -> Part {
        Part { kind, call_id: call_id.into(), text: text.into(), tool: tool.into() }
    }
}

/// A request: shared messages, so a baseline's unchanged history costs nothing to send again.
pub type Request = Vec<Arc<Msg>>;

/// An engine projection's messages as a request.
pub fn from_messages(messages: &[Message<'_>]) -> Request {
    messages
        .iter()
        .map(|message| {
            let parts = message
                .blocks
                .iter()
                .filter_map(|block| match block {
                    MessageBlock::Text { text } => Some(Part::text(text)),
                    MessageBlock::Thinking { text } => {
                        Some(Part { kind: PartKind::Thinking, ..Part::text(text) })
                    }
                    MessageBlock::ToolCall { call_id, tool, input, .. } => {
                        Some(Part::tool(PartKind::Call, call_id, tool, input))
                    }
                    MessageBlock::ToolResult { call_id, tool, output, .. } => {
                        Some(Part::tool(PartKind::Result, call_id, tool, output))
                    }
                    MessageBlock::Blob { .. } => None,
                })
                .collect();
            Arc::new(Msg::new(message.role, parts, usize::MAX, false))
        })
        .collect()
}

/// Tokens of a request.
pub fn tokens(request: &Request) -> u64 {
    request.iter().map(|m| m.tokens).sum()
}

/// The share of `previous`'s bytes that `current` repeats as its prefix, counted in whole
/// messages (a message that changed counts as not repeated, even if it starts the same): what a
/// provider's prefix cache could serve of what it cached last time.
pub fn prefix_share(previous: &Request, current: &Request) -> f64 {
    let total: u64 = previous.iter().map(|m| m.bytes()).sum();
    if total == 0 {
        return 1.0;
    }
    let mut common = 0;
    for (a, b) in previous.iter().zip(current) {
        if !(Arc::ptr_eq(a, b) || a.same(b)) {
            break;
        }
        common += a.bytes();
    }
    common as f64 / total as f64
}

/// Calls without a later result and results without an earlier call, by call id.
pub fn orphans(request: &Request) -> (u64, u64) {
    let mut open: BTreeSet<&str> = BTreeSet::new();
    let mut orphan_results = 0;
    for part in request.iter().flat_map(|m| &m.parts) {
        match part.kind {
            PartKind::Call => {
                open.insert(&part.call_id);
            }
            PartKind::Result if !open.remove(&*part.call_id) => orphan_results += 1,
            _ => {}
        }
    }
    (open.len() as u64, orphan_results)
}

/// All the request's text in one string, parts separated by a NUL, for value look-ups.
pub fn joined(request: &Request) -> String {
    let mut out = String::new();
    for part in request.iter().flat_map(|m| &m.parts) {
        out.push_str(&part.text);
        out.push('\0');
    }
    out
}
