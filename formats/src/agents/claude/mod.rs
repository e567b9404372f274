//! Claude Code session JSONL: one JSON object per line, every line type kept, one record per
//! line. Sub-agent files (`agent-*.jsonl`) become sessions of their own.
//!
//! A line's `message.content` becomes blocks; the rest of the message (id, model, usage, …) is
//! `meta["message"]`, the content parts' fields that have no block form are
//! `meta["contentExtra"]` (keyed by the part's index), and every other field of the line stays
//! in `meta` under its own name. A line without a message is a system record of meta only.

use serde_json::{Map, Value};

use super::anthropic::{content_blocks, Dialect};
use super::lines::read_json_lines;
use super::session::{line_object, put, put_all, str_of, usable_id, usable_name, SessionBuilder};
use super::{ParseOptions, ParsedTranscript, TranscriptFormat};
use annal_engine::canonical_json;
use annal_engine::{Block, Record, Role};

/// What the lines say about which session the file is.
#[derive(Debug, Default)]
struct Identity {
    session_id: Option<String>,
    /// From the first line that says: sub-agent files are sidechains from their first line on,
    /// while a main session may contain sidechain lines later.
    sidechain: Option<bool>,
    agent_id: Option<String>,
}

impl Identity {
    fn learn(&mut self, line: &Map<String, Value>) {
        if self.session_id.is_none() {
            self.session_id = str_of(line, "sessionId").filter(|id| usable_name(id)).map(str::to_owned);
        }
        if self.sidechain.is_none() {
            self.sidechain = line.get("isSidechain").and_then(Value::as_bool);
        }
        if self.agent_id.is_none() {
            self.agent_id = str_of(line, "agentId").filter(|id| usable_name(id)).map(str::to_owned);
        }
    }

    /// The session name, and the parent session of a sub-agent file.
    fn name(self, stem: &str) -> (String, Option<String>) {
        let stem_agent = stem.starts_with("agent-");
        let is_agent = self.sidechain == Some(true) && (self.agent_id.is_some() || stem_agent);
        match (self.session_id, is_agent) {
            // Sub-agent lines carry the parent's sessionId; the file is its own session, named
            // like its place on disk (`<session>/subagents/agent-<id>.jsonl`).
            (Some(parent), true) => {
                let agent = match self.agent_id {
                    Some(id) => format!("agent-{id}"),
                    None => stem.to_owned(),
                };
                (format!("{parent}/{agent}"), Some(parent))
            }
            (Some(id), false) => (id, None),
            (None, _) => (stem.to_owned(), None),
        }
    }
}

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut builder = SessionBuilder::new("claude", true);
    let mut identity = Identity::default();
    let mut parsed = ParsedTranscript::default();
    read_json_lines(
        bytes,
        options,
        TranscriptFormat::Claude,
        is_claude_line,
        &mut parsed,
        |number, value| {
            if let Value::Object(map) = &value {
                identity.learn(map);
            }
            builder.push(number, line_record(value), None);
        },
    );
    if !builder.is_empty() {
        let (name, parent) = identity.name(stem);
        let extra: Vec<(&str, String)> =
            parent.iter().map(|p| ("parentSession", canonical_json(&Value::String(p.clone())))).collect();
        parsed.sessions.push(builder.finish(name, None, None, &extra));
    }
    parsed
}

/// Line types Claude Code writes.
pub(super) const CLAUDE_TYPES: [&str; 7] =
    ["user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation", "progress"];

/// Whether a line is one Claude Code writes: it names its session or itself (`sessionId`,
/// `uuid`, `leafUuid`, `messageId`) or is of a known bookkeeping type, and a user or assistant
/// line carries its message. Other tools' JSONL shares `type: "user"` but not the rest; Qwen
/// Code's shares the whole envelope, but its messages are Google GenAI content (`parts`, no
/// `content`) and its system lines carry a `systemPayload`.
pub(super) fn is_claude_line(map: &Map<String, Value>) -> bool {
    let foreign_message =
        map.get("message").and_then(Value::as_object).is_some_and(|message| !message.contains_key("content"));
    if foreign_message || map.contains_key("systemPayload") {
        return false;
    }
    let kind = str_of(map, "type");
    let named = ["sessionId", "uuid", "leafUuid", "messageId"].iter().any(|key| map.contains_key(*key));
    match kind {
        Some("user" | "assistant") => named && map.get("message").is_some_and(Value::is_object),
        Some(kind) => named || CLAUDE_TYPES.contains(&kind),
        None => false,
    }
}

/// One line as a record (its entryId left empty when the line has no usable `uuid`).
fn line_record(value: Value) -> Record {
    let mut record = Record::new(String::new(), Role::System, Vec::new());
    let Some(mut map) = line_object(value, &mut record) else { return record };
    if let Some(uuid) = str_of(&map, "uuid").filter(|id| usable_id(id)) {
        record.entry_id = uuid.to_owned();
    }
    let mut only_results = false;
    match map.remove("message") {
        Some(Value::Object(mut message)) => {
            match message.remove("content") {
                Some(Value::String(text)) => record.blocks.push(Block::Text { text }),
                Some(Value::Array(parts)) => {
                    let content = content_blocks(parts, Dialect::ClaudeCode);
                    record.blocks = content.blocks;
                    only_results = content.only_results;
                    if !content.extra.is_empty() {
                        put(&mut record.meta, "contentExtra", &Value::Object(content.extra));
                    }
                }
                Some(other) => {
                    message.insert("content".into(), other);
                }
                None => {}
            }
            put(&mut record.meta, "message", &Value::Object(message));
        }
        Some(other) => {
            map.insert("message".into(), other);
        }
        None => {}
    }
    record.role = match str_of(&map, "type") {
        Some("assistant") => Role::Assistant,
        Some("user") if only_results => Role::Tool,
        Some("user") => Role::User,
        _ => Role::System,
    };
    put_all(&mut record.meta, map);
    record
}

#[cfg(test)]
mod tests {
    use super::super::{parse_transcript, SkipReason, TranscriptFormat};
    use super::*;

    fn parse(text: &str, stem: &str) -> ParsedTranscript {
        parse_transcript(text.as_bytes(), TranscriptFormat::Claude, stem)
    }

    const SESSION: &str = r#"{"type":"summary","summary":"Fix the build","leafUuid":"u9"}
{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","cwd":"/w","timestamp":"2026-01-02T03:04:05.000Z","message":{"role":"user","content":"run the tests"}}
{"type":"assistant","uuid":"u2","sessionId":"s1","message":{"id":"m1","model":"x","role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"text","text":"ok"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cargo test","b":[1]}}]}}
{"type":"user","uuid":"u3","sessionId":"s1","toolUseResult":{"stdout":"fail"},"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"aGk="}}]}]}}
{"type":"file-history-snapshot","messageId":"u1","snapshot":{"files":{}}}
{"type":"brand-new-kind","sessionId":"s1","x":1}
"#;

    #[test]
    fn every_line_type_becomes_a_record() {
        let parsed = parse(SESSION, "file");
        assert!(parsed.skipped.is_empty());
        let session = &parsed.sessions[0];
        assert_eq!(session.name, "s1");
        let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
        assert_eq!(ids, ["claude:s1:1", "u1", "u2", "u3", "claude:s1:5", "claude:s1:6"]);
        let roles: Vec<Role> = session.records.iter().map(|r| r.role).collect();
        use Role::*;
        assert_eq!(roles, [System, User, Assistant, Tool, System, System]);

        let summary = &session.records[0];
        assert!(summary.blocks.is_empty());
        assert_eq!(summary.meta["summary"], "\"Fix the build\"");
        assert_eq!(summary.meta["leafUuid"], "\"u9\"");

        let user = &session.records[1];
        assert_eq!(user.timestamp.as_deref(), Some("2026-01-02T03:04:05.000Z"));
        assert_eq!(user.blocks, [Block::Text { text: "run the tests".into() }]);
        assert_eq!(user.meta["message"], r#"{"role":"user"}"#);
        assert_eq!(user.meta["cwd"], "\"/w\"");
        assert_eq!(user.meta["parentUuid"], "null");
        assert!(!user.meta.contains_key("timestamp"));

        let assistant = &session.records[2];
        assert_eq!(assistant.blocks[0], Block::Thinking { text: "hmm".into() });
        assert_eq!(
            assistant.blocks[2],
            Block::ToolCall {
                call_id: "t1".into(),
                tool: "Bash".into(),
                input: r#"{"b":[1],"command":"cargo test"}"#.into(),
                target: String::new()
            }
        );
        assert_eq!(assistant.meta["contentExtra"], r#"{"0":{"signature":"sig"}}"#);
        assert_eq!(assistant.meta["message"], r#"{"id":"m1","model":"x","role":"assistant"}"#);

        let tool = &session.records[3];
        assert_eq!(
            tool.blocks,
            [
                Block::ToolResult {
                    call_id: "t1".into(),
                    tool: "Bash".into(),
                    is_error: true,
                    output: "a\nb".into()
                },
                Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() },
            ]
        );
        assert_eq!(
            tool.meta["contentExtra"],
            r#"{"0":{"content":[{"type":"text"},{"type":"text"},{"source":{"type":"base64"},"type":"image"}]}}"#
        );
        assert_eq!(tool.meta["toolUseResult"], r#"{"stdout":"fail"}"#);
        assert_eq!(session.records[5].meta["type"], "\"brand-new-kind\"");
    }

    #[test]
    fn reparsing_and_growing_are_stable() {
        let first = parse(SESSION, "file");
        assert_eq!(parse(SESSION, "file"), first);
        let grown =
            format!("{SESSION}{}\n", r#"{"type":"assistant","uuid":"u7","message":{"content":"done"}}"#);
        let grown = parse(&grown, "file");
        let (before, after) = (&first.sessions[0].records, &grown.sessions[0].records);
        assert_eq!(&after[..before.len()], &before[..]);
        assert_eq!(after.len(), before.len() + 1);
    }

    #[test]
    fn sub_agent_files_are_their_own_sessions() {
        let text = r#"{"type":"user","uuid":"a1","sessionId":"s1","isSidechain":true,"agentId":"abc","message":{"role":"user","content":"look"}}"#;
        let session = &parse(text, "agent-abc").sessions[0];
        assert_eq!(session.name, "s1/agent-abc");
        assert_eq!(session.records[0].meta["parentSession"], "\"s1\"");
        // An old-style main file whose sidechain lines have no agentId stays the main session.
        let main =
            r#"{"type":"user","uuid":"a1","sessionId":"s1","isSidechain":true,"message":{"content":"x"}}"#;
        assert_eq!(parse(main, "s1").sessions[0].name, "s1");
        assert_eq!(parse(main, "agent-old").sessions[0].name, "s1/agent-old");
        assert_eq!(parse(r#"{"type":"x"}"#, "stem").sessions[0].name, "stem");
    }

    #[test]
    fn bad_lines_are_reported_and_skipped() {
        let text = "// comment\n{\"type\":\"user\",\"uuid\":\"u1\",\"message\":{\"content\":\"hi\"}}\n\
                    {broken\n[1,2]\n\"text\"\n{\"type\":\"user\",\"uuid\":\"u2\",\"mess";
        let parsed = parse(text, "f");
        let skipped: Vec<String> = parsed.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(
            skipped,
            [
                "line 1: comment line (not JSON)",
                "line 3: not JSON (key must be a string at column 2)",
                "line 6: truncated (the file ends inside this line)",
            ]
        );
        assert_eq!(parsed.skipped[2].reason, SkipReason::Truncated);
        let records = &parsed.sessions[0].records;
        assert_eq!(records.len(), 3);
        assert_eq!(records[1].meta["value"], "[1,2]");
        assert_eq!(records[2].meta["value"], "\"text\"");
    }

    #[test]
    fn odd_content_is_kept_in_meta() {
        let text = r#"{"type":"assistant","uuid":"u1","message":{"content":[{"type":"redacted_thinking","data":"xx"},7,{"type":"tool_use","id":"t"},{"type":"web_search_tool_result","tool_use_id":"t","content":{"type":"web_search_tool_result_error","error_code":"x"}}]}}
{"type":"user","uuid":"u2","message":{"content":[]}}
{"type":"user","uuid":"u3","message":"plain"}"#;
        let records = &parse(text, "f").sessions[0].records;
        assert_eq!(
            records[0].meta["contentExtra"],
            r#"{"0":{"data":"xx","type":"redacted_thinking"},"1":7,"2":{"id":"t","type":"tool_use"},"3":{"type":"web_search_tool_result"}}"#
        );
        assert!(matches!(&records[0].blocks[0], Block::ToolResult { is_error: true, .. }));
        assert_eq!(records[1].role, Role::User);
        assert_eq!(records[2].meta["message"], "\"plain\"");
    }
}
