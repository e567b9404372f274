//! The Cursor CLI's chats (`~/.cursor/chats/<folder hash>/<agent>/store.db`): a SQLite file of
//! content-addressed blobs (`blobs(id, data)`, the id the SHA-256 of the data in hex) and a
//! `meta` row `0` holding, hex-encoded, `{agentId, name, createdAt, latestRootBlobId, …}`.
//!
//! The root blob is protobuf: its field 1, repeated, names the conversation's message blobs
//! (32-byte ids) in order. A message blob is JSON `{role, content}` (`content` a string, or
//! parts: `text`, `reasoning` as thinking, `tool-call` as a call, `tool-result` as a result),
//! one record each: `system`, `user`, `assistant` and `tool` records by role. A blob's id is its
//! content, so a record's entryId is `cursor:<agent>/<16 hex digits of the blob id>`, `#<n>` for
//! its nth repeat in the conversation. Other children (checkpoints, trees) are not messages and
//! are passed over. The chat's name, model and times follow in a system record named by their
//! hash. Cursor is closed source: docs/import.md names the readers followed.

use serde_json::{Map, Value};

use super::session::SessionBuilder;
use super::session::{
    content_parts, drop_lone_type, fields_record, put_all, put_nonempty, str_of, take_str, text_of,
    usable_name,
};
use super::ParsedSession;
use annal_engine::{canonical_json, Block, Record, Role};

/// The chat's fields kept in its system record (the root moves with every message).
const STEADY_FIELDS: [&str; 5] = ["agentId", "name", "mode", "createdAt", "lastUsedModel"];

/// The `meta` row's value: hex-encoded JSON, decoded; `None` when it is not.
pub fn cursor_cli_meta(hex: &str) -> Option<Map<String, Value>> {
    let hex = hex.trim();
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> =
        (0..hex.len()).step_by(2).map(|at| u8::from_str_radix(hex.get(at..at + 2)?, 16).ok()).collect();
    match serde_json::from_slice(&bytes?) {
        Ok(Value::Object(meta)) => Some(meta),
        _ => None,
    }
}

/// The ids (hex) of the blobs a root blob lists in its field 1, in order. Reading stops at the
/// first field that cannot be read (the rest of a cut-off blob is lost, not misread).
pub fn cursor_cli_children(root: &[u8]) -> Vec<String> {
    let mut children = Vec::new();
    let mut at = 0;
    while at < root.len() {
        let Some((key, next)) = varint(root, at) else { break };
        at = next;
        let (start, end) = match key & 7 {
            0 => match varint(root, at) {
                Some((_, next)) => (at, next),
                None => break,
            },
            1 => (at, at.saturating_add(8)),
            2 => match varint(root, at)
                .and_then(|(len, next)| Some((next, next.checked_add(usize::try_from(len).ok()?)?)))
            {
                Some(span) => span,
                None => break,
            },
            5 => (at, at.saturating_add(4)),
            _ => break,
        };
        let Some(value) = root.get(start..end) else { break };
        if key >> 3 == 1 && key & 7 == 2 && value.len() == 32 {
            children.push(value.iter().map(|b| format!("{b:02x}")).collect());
        }
        at = end;
    }
    children
}

/// A protobuf varint at `at`: its value and where the next byte is.
fn varint(bytes: &[u8], mut at: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(at)?;
        at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some((value, at));
        }
    }
    None
}

/// The records of one chat: `meta` (decoded) and the root's children `(id, data)` in order,
/// a child absent from the store passed over. Returns the session and one line per message
/// blob that cannot be read.
pub fn parse_cursor_cli_chat(
    agent: &str,
    meta: Map<String, Value>,
    children: &[(String, Vec<u8>)],
) -> (ParsedSession, Vec<String>) {
    let name = str_of(&meta, "agentId").filter(|id| usable_name(id)).unwrap_or(agent).to_owned();
    let mut builder = SessionBuilder::new("cursor", true);
    let mut skipped = Vec::new();
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (index, (id, data)) in children.iter().enumerate() {
        // Checkpoints and trees are blobs too; a message is JSON.
        if data.first() != Some(&b'{') {
            continue;
        }
        let message = match serde_json::from_slice::<Value>(data) {
            Ok(Value::Object(message)) => message,
            Ok(_) => continue,
            Err(err) => {
                skipped.push(format!("blob {id}: not JSON ({err})"));
                continue;
            }
        };
        let repeat = seen.entry(id.as_str()).or_insert(0);
        *repeat += 1;
        let short = id.get(..16).unwrap_or(id);
        let entry = match *repeat {
            1 => format!("cursor:{name}/{short}"),
            n => format!("cursor:{name}/{short}#{n}"),
        };
        builder.push(index + 1, message_record(message, entry), None);
    }
    let steady: Map<String, Value> =
        meta.into_iter().filter(|(key, _)| STEADY_FIELDS.contains(&key.as_str())).collect();
    builder.push(0, fields_record(&format!("cursor:{name}"), steady), None);
    (builder.finish(name, None, None, &[]), skipped)
}

/// One message blob as a record.
fn message_record(mut message: Map<String, Value>, entry: String) -> Record {
    let mut record = Record::new(entry, Role::System, Vec::new());
    record.role = match str_of(&message, "role") {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool") => Role::Tool,
        _ => Role::System,
    };
    if let Some(content) = message.remove("content") {
        let extra = content_parts(content, &mut record.blocks, |part| {
            let block = part_block(part);
            if block.is_some() {
                drop_lone_type(part);
            }
            block
        });
        put_nonempty(&mut record.meta, "contentExtra", extra);
    }
    put_all(&mut record.meta, message);
    record
}

/// The block of one part, taking what it holds out of `part`.
fn part_block(part: &mut Map<String, Value>) -> Option<Block> {
    match str_of(part, "type")? {
        "text" => take_str(part, "text").map(|text| Block::Text { text }),
        "reasoning" => take_str(part, "text").map(|text| Block::Thinking { text }),
        "tool-call" => {
            let (Some(call_id), Some(tool)) = (take_str(part, "toolCallId"), take_str(part, "toolName"))
            else {
                return None;
            };
            let input = part.remove("args").map_or_else(|| "{}".to_owned(), |args| canonical_json(&args));
            Some(Block::ToolCall { call_id, tool, input, target: String::new() })
        }
        "tool-result" => {
            let call_id = take_str(part, "toolCallId")?;
            let tool = take_str(part, "toolName").unwrap_or_default();
            let output = part
                .remove("result")
                .or_else(|| part.remove("output"))
                .map_or_else(String::new, |v| text_of(&v));
            let is_error = part.get("isError").and_then(Value::as_bool) == Some(true);
            if is_error {
                part.remove("isError");
            }
            Some(Block::ToolResult { call_id, tool, is_error, output })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(ids: &[[u8; 32]]) -> Vec<u8> {
        let mut out = Vec::new();
        for id in ids {
            out.extend([0x0a, 32]);
            out.extend(id);
        }
        // Another field after: a workspace string (field 9).
        out.extend([0x4a, 4]);
        out.extend(b"/src");
        out
    }

    #[test]
    fn the_roots_children_in_order() {
        let ids = [[1u8; 32], [0xab; 32]];
        assert_eq!(cursor_cli_children(&root(&ids)), ["01".repeat(32), "ab".repeat(32)]);
        // Cut off inside the second id: the first is read, the rest is not misread.
        let cut = root(&ids);
        assert_eq!(cursor_cli_children(&cut[..40]), ["01".repeat(32)]);
        assert!(cursor_cli_children(&[0xff, 0xff]).is_empty());
    }

    #[test]
    fn meta_is_hex_json() {
        let hex: String = br#"{"agentId":"a1","name":"Fix"}"#.iter().map(|b| format!("{b:02x}")).collect();
        let meta = cursor_cli_meta(&hex).unwrap_or_default();
        assert_eq!(meta.get("agentId"), Some(&Value::from("a1")));
        assert_eq!(cursor_cli_meta("7b0"), None);
        assert_eq!(cursor_cli_meta("zz"), None);
    }

    #[test]
    fn message_blobs_become_records() {
        let meta = cursor_cli_meta(&br#"{"agentId":"a1","name":"Fix","latestRootBlobId":"ff"}"#.iter().map(|b| format!("{b:02x}")).collect::<String>()).unwrap_or_default();
        let blob = |json: &str| json.as_bytes().to_vec();
        let children = vec![
            ("aa".repeat(32), blob(r#"{"role":"system","content":"You are Cursor."}"#)),
            (
                "bb".repeat(32),
                blob(
                    r#"{"role":"user","content":[{"type":"text","text":"<user_query>fix the 解析器 🦀</user_query>"}]}"#,
                ),
            ),
            (
                "cc".repeat(32),
                blob(
                    r#"{"role":"assistant","content":[{"type":"reasoning","text":"Look."},{"type":"text","text":"ok"},{"type":"tool-call","toolCallId":"t1","toolName":"Shell","args":{"command":"ls"}}]}"#,
                ),
            ),
            (
                "dd".repeat(32),
                blob(
                    r#"{"role":"tool","content":[{"type":"tool-result","toolCallId":"t1","toolName":"Shell","result":"a.rs"}]}"#,
                ),
            ),
            ("ee".repeat(32), vec![0x0a, 0x02, 0x01, 0x02]),
            (
                "bb".repeat(32),
                blob(
                    r#"{"role":"user","content":[{"type":"text","text":"<user_query>fix the 解析器 🦀</user_query>"}]}"#,
                ),
            ),
            ("ff".repeat(32), blob("{cut")),
        ];
        let (session, skipped) = parse_cursor_cli_chat("dir", meta, &children);
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert_eq!(session.name, "a1");
        let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
        let bb = format!("cursor:a1/{}", "b".repeat(16));
        assert_eq!(ids[1], bb);
        assert_eq!(ids[4], format!("{bb}#2"));
        let roles: Vec<Role> = session.records.iter().map(|r| r.role).collect();
        assert_eq!(roles, [Role::System, Role::User, Role::Assistant, Role::Tool, Role::User, Role::System]);
        assert_eq!(
            session.records[2].blocks,
            [
                Block::Thinking { text: "Look.".into() },
                Block::Text { text: "ok".into() },
                Block::ToolCall {
                    call_id: "t1".into(),
                    tool: "Shell".into(),
                    input: r#"{"command":"ls"}"#.into(),
                    target: String::new()
                }
            ]
        );
        assert_eq!(
            session.records[3].blocks,
            [Block::ToolResult {
                call_id: "t1".into(),
                tool: "Shell".into(),
                is_error: false,
                output: "a.rs".into()
            }]
        );
        assert_eq!(session.records[5].meta["name"], "\"Fix\"");
        assert!(!session.records[5].meta.contains_key("latestRootBlobId"));
    }
}
