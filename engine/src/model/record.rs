//! The owned record model: what a caller appends and what an export writes out.

use std::collections::BTreeMap;
use std::fmt;

/// Who produced a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// The person driving the agent.
    User,
    /// The model.
    Assistant,
    /// A tool run on the model's behalf (a record that only carries tool results).
    Tool,
    /// The host or agent harness (instructions, notices, summaries).
    System,
}

impl Role {
    /// All roles, in their on-disk tag order.
    pub const ALL: [Role; 4] = [Role::User, Role::Assistant, Role::Tool, Role::System];

    /// The lower-case name used in the portable format and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::System => "system",
        }
    }

    /// Parses a lower-case role name.
    pub fn parse(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.as_str() == name)
    }

    pub(crate) fn tag(self) -> u8 {
        match self {
            Role::User => 0,
            Role::Assistant => 1,
            Role::Tool => 2,
            Role::System => 3,
        }
    }

    pub(crate) fn from_tag(tag: u8) -> Option<Role> {
        Role::ALL.get(usize::from(tag)).copied()
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One content part of a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// Plain text.
    Text {
        /// The text, verbatim.
        text: String,
    },
    /// Model reasoning, kept apart from text so projections can leave it out.
    Thinking {
        /// The reasoning, verbatim.
        text: String,
    },
    /// A tool invocation requested by the model.
    ToolCall {
        /// The id that pairs this call with its result.
        call_id: String,
        /// The tool's name as the agent knows it.
        tool: String,
        /// The call's input, as JSON text.
        input: String,
        /// What the call acts on (a path, a command, a URL, a pattern). Left empty on append,
        /// it is derived from `tool` and `input`; see [`derive_target`](crate::derive_target).
        target: String,
    },
    /// The outcome of a tool call.
    ToolResult {
        /// The id of the call this answers.
        call_id: String,
        /// The tool's name, when the source names it (empty otherwise).
        tool: String,
        /// Whether the tool reported failure.
        is_error: bool,
        /// The output, verbatim.
        output: String,
    },
    /// An image or other binary payload, stored once in the blob table by its blake3 hash.
    Blob {
        /// A MIME type such as `image/png`.
        media_type: String,
        /// The payload.
        data: Vec<u8>,
    },
}

impl Block {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Block {
        Block::Text { text: text.into() }
    }

    /// A tool call; its target (the path, command, URL or pattern it acts on) is derived from
    /// `input` when the record is appended.
    pub fn tool_call(call_id: impl Into<String>, tool: impl Into<String>, input: impl Into<String>) -> Block {
        Block::ToolCall {
            call_id: call_id.into(),
            tool: tool.into(),
            input: input.into(),
            target: String::new(),
        }
    }

    /// The result of the call `call_id`.
    pub fn tool_result(
        call_id: impl Into<String>,
        tool: impl Into<String>,
        is_error: bool,
        output: impl Into<String>,
    ) -> Block {
        Block::ToolResult { call_id: call_id.into(), tool: tool.into(), is_error, output: output.into() }
    }

    /// The portable-format name of this block's type.
    pub fn kind(&self) -> &'static str {
        match self {
            Block::Text { .. } => "text",
            Block::Thinking { .. } => "thinking",
            Block::ToolCall { .. } => "toolCall",
            Block::ToolResult { .. } => "toolResult",
            Block::Blob { .. } => "blob",
        }
    }
}

/// One message-level item of a session, as appended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// A store-wide unique id. Re-appending the same id with the same content is a no-op.
    pub entry_id: String,
    /// Who produced it.
    pub role: Role,
    /// When, as RFC 3339 text, if the source says.
    pub timestamp: Option<String>,
    /// The content, in order.
    pub blocks: Vec<Block>,
    /// What the source format had that has no block form, as JSON text per key, so an export
    /// loses nothing.
    pub meta: BTreeMap<String, String>,
}

impl Record {
    /// The bytes a record carries: its strings, payloads and metadata (what the store's record
    /// and batch size limits count).
    pub fn size_bytes(&self) -> usize {
        let blocks: usize = self
            .blocks
            .iter()
            .map(|block| match block {
                Block::Text { text } | Block::Thinking { text } => text.len(),
                Block::ToolCall { call_id, tool, input, target } => {
                    call_id.len() + tool.len() + input.len() + target.len()
                }
                Block::ToolResult { call_id, tool, output, .. } => call_id.len() + tool.len() + output.len(),
                Block::Blob { media_type, data } => media_type.len() + data.len(),
            })
            .sum();
        let meta: usize = self.meta.iter().map(|(k, v)| k.len() + v.len()).sum();
        self.entry_id.len() + self.timestamp.as_ref().map_or(0, String::len) + blocks + meta
    }

    /// A record of `blocks`, with no timestamp or metadata.
    ///
    /// ```
    /// use annal_engine::{Block, Record, Role};
    /// let call = Record::new("a1", Role::Assistant, vec![
    ///     Block::text("Running the tests."),
    ///     Block::tool_call("c1", "Bash", r#"{"command":"cargo test"}"#),
    /// ]);
    /// let result = Record::new("t1", Role::Tool, vec![Block::tool_result("c1", "Bash", false, "ok")]);
    /// assert_eq!((call.blocks.len(), result.role), (2, Role::Tool));
    /// ```
    pub fn new(entry_id: impl Into<String>, role: Role, blocks: Vec<Block>) -> Record {
        Record { entry_id: entry_id.into(), role, timestamp: None, blocks, meta: BTreeMap::new() }
    }

    /// A record with one text block and no metadata.
    pub fn text(entry_id: impl Into<String>, role: Role, text: impl Into<String>) -> Record {
        Record::new(entry_id, role, vec![Block::text(text)])
    }

    /// The same record with its timestamp (RFC 3339 text).
    pub fn at(mut self, timestamp: impl Into<String>) -> Record {
        self.timestamp = Some(timestamp.into());
        self
    }

    /// The same record stamped with a Unix time in whole seconds (no timestamp outside years 0
    /// to 9999).
    pub fn at_unix_seconds(mut self, seconds: i64) -> Record {
        self.timestamp = crate::time::rfc3339_from_seconds(seconds);
        self
    }
}
