//! Crush and the Go OpenCode it continues: rows of their SQLite `sessions` and `messages`
//! tables as records. Reading the database is the caller's; this turns rows into records.
//!
//! Each message row is one record, `crush:<message id>` (the ids are UUIDs, and the agent
//! updates a row in place, so the id stays). Its `role` column maps to the role (`tool` rows
//! carry tool results). Its `parts` column is a JSON list of `{type, data}`: `text` becomes a
//! text block, `reasoning` a thinking block, `tool_call` a tool call (its `input` is JSON text),
//! `tool_result` a tool result (and a blob when it carries image `data`), `binary` and data-URL
//! `image_url` parts blobs. What no block holds (the `finish` part, signatures, a result's
//! `metadata`, shell commands) stays in `meta["parts"]`, in order, less the fields the blocks
//! took; the row's other columns (model, provider, finished_at, …) are `meta` under their
//! column names. A row whose `parts` is not a JSON list is skipped and reported.
//!
//! The session row (title, token counts, cost, summary message, todos) is a system record
//! `crush:<session>:session:<hash of the row>`, so each version of the row is kept once. A
//! session with a parent (a sub-agent's task, a title generation) names it in every record's
//! `meta["parentSession"]`, as Claude Code sub-agents do.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::session::{base64_bytes, data_url_blob, put, str_of, take_str, text_of, SessionBuilder};
use super::ParsedSession;
use annal_engine::{canonical_input, canonical_json, rfc3339_from_millis, rfc3339_from_seconds};
use annal_engine::{Block, Record, Role};

/// One row of the `sessions` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrushSessionRow {
    /// `id`: the session's name.
    pub id: String,
    /// `parent_session_id`, when set.
    pub parent_session_id: Option<String>,
    /// `updated_at`, Unix seconds or milliseconds (the agent writes seconds).
    pub updated_at: Option<i64>,
    /// Every column of the row (these three included) by name, each value as JSON text. Left
    /// empty for a session whose row is missing: then no session record is made.
    pub columns: Vec<(String, String)>,
}

/// One row of the `messages` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrushMessageRow {
    /// `id`.
    pub id: String,
    /// `role`: `user`, `assistant`, `tool` or `system`.
    pub role: String,
    /// `parts`: the JSON list of content parts.
    pub parts: String,
    /// `created_at`, Unix seconds or milliseconds.
    pub created_at: Option<i64>,
    /// The other columns (model, provider, finished_at, …) by name, each value as JSON text.
    /// `updated_at` belongs in none of them: it changes whenever the agent saves the row again.
    pub columns: Vec<(String, String)>,
}

/// The records of one session's message rows (in the order given), then its session record;
/// and one line per row that could not be read, naming the row and why.
///
/// ```
/// use annal_engine::Role;
/// use annal_formats::{parse_crush_session, CrushMessageRow, CrushSessionRow};
/// let session = CrushSessionRow { id: "s1".into(), ..CrushSessionRow::default() };
/// let rows = [CrushMessageRow {
///     id: "m1".into(),
///     role: "user".into(),
///     parts: r#"[{"type":"text","data":{"text":"hi"}}]"#.into(),
///     ..CrushMessageRow::default()
/// }];
/// let (parsed, skipped) = parse_crush_session(&session, &rows);
/// assert_eq!((parsed.records[0].entry_id.as_str(), parsed.records[0].role), ("crush:m1", Role::User));
/// assert!(skipped.is_empty());
/// ```
pub fn parse_crush_session(
    session: &CrushSessionRow,
    messages: &[CrushMessageRow],
) -> (ParsedSession, Vec<String>) {
    let mut builder = SessionBuilder::new("crush", true);
    let mut skipped = Vec::new();
    for (index, row) in messages.iter().enumerate() {
        match message_record(row) {
            Ok(record) => builder.push(index + 1, record, None),
            Err(why) => skipped.push(format!("message {:?}: {why}", row.id)),
        }
    }
    let name = if session.id.is_empty() { "crush".to_owned() } else { session.id.clone() };
    if let Some(record) = session_record("crush", &name, &session.columns, unix_time(session.updated_at)) {
        builder.push(0, record, None);
    }
    let extra = parent_meta(session.parent_session_id.as_deref());
    (builder.finish(name, None, None, &extra), skipped)
}

fn message_record(row: &CrushMessageRow) -> Result<Record, String> {
    if row.id.is_empty() {
        return Err("no id".into());
    }
    let parts = match serde_json::from_str::<Value>(&row.parts) {
        Ok(Value::Array(parts)) => parts,
        Ok(_) => return Err("parts is not a JSON list".into()),
        Err(err) => return Err(format!("parts is not JSON ({err})")),
    };
    let role = match row.role.as_str() {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        _ => Role::System,
    };
    let mut record = Record {
        entry_id: format!("crush:{}", row.id),
        role,
        timestamp: unix_time(row.created_at),
        blocks: Vec::new(),
        meta: BTreeMap::new(),
    };
    put_columns(&mut record.meta, &row.columns);
    if role == Role::System && row.role != "system" {
        put(&mut record.meta, "role", &Value::String(row.role.clone()));
    }
    let kept: Vec<Value> = parts.into_iter().map(|part| part_blocks(part, &mut record.blocks)).collect();
    put(&mut record.meta, "parts", &Value::Array(kept));
    Ok(record)
}

/// One part's blocks into `blocks`; returns what is left of the part.
fn part_blocks(part: Value, blocks: &mut Vec<Block>) -> Value {
    let Value::Object(mut part) = part else { return part };
    let kind = str_of(&part, "type").unwrap_or_default().to_owned();
    let Some(Value::Object(data)) = part.get_mut("data") else { return Value::Object(part) };
    match kind.as_str() {
        "text" => blocks.extend(take_text(data, "text").map(|text| Block::Text { text })),
        "reasoning" => blocks.extend(take_text(data, "thinking").map(|text| Block::Thinking { text })),
        "tool_call" => blocks.extend(tool_call(data)),
        "tool_result" => tool_result(data, blocks),
        // Go writes this struct without JSON tags: its fields keep their Go names.
        "binary" => blocks.extend(take_blob(data, "Data", "MIMEType")),
        "image_url" => {
            if let Some(blob) = str_of(data, "url").and_then(data_url_blob) {
                data.remove("url");
                blocks.push(blob);
            }
        }
        _ => {}
    }
    Value::Object(part)
}

/// A string field that says something; an empty one stays where it is.
fn take_text(data: &mut Map<String, Value>, key: &str) -> Option<String> {
    match str_of(data, key) {
        Some(text) if !text.is_empty() => take_str(data, key),
        _ => None,
    }
}

fn tool_call(data: &mut Map<String, Value>) -> Option<Block> {
    let call_id = take_str(data, "id")?;
    let Some(tool) = take_str(data, "name") else {
        data.insert("id".into(), Value::String(call_id));
        return None;
    };
    // The agent keeps the input as the JSON text the model streamed.
    let input = match data.remove("input") {
        Some(Value::String(input)) => canonical_input(&input),
        Some(other) => text_of(&other),
        None => "{}".to_owned(),
    };
    Some(Block::ToolCall { call_id, tool, input, target: String::new() })
}

fn tool_result(data: &mut Map<String, Value>, blocks: &mut Vec<Block>) {
    let Some(call_id) = take_str(data, "tool_call_id") else { return };
    // An empty name is filled in from the call by the session builder.
    let tool = take_str(data, "name").unwrap_or_default();
    let is_error = match data.remove("is_error") {
        Some(Value::Bool(flag)) => flag,
        Some(other) => {
            data.insert("is_error".into(), other);
            false
        }
        None => false,
    };
    let output = data.remove("content").map(|content| text_of(&content)).unwrap_or_default();
    blocks.push(Block::ToolResult { call_id, tool, is_error, output });
    blocks.extend(take_blob(data, "data", "mime_type"));
}

/// A blob from a base64 field and its MIME type field, both taken out when it decodes.
fn take_blob(data: &mut Map<String, Value>, key: &str, mime_key: &str) -> Option<Block> {
    let bytes = str_of(data, key).filter(|text| !text.is_empty()).and_then(base64_bytes)?;
    data.remove(key);
    let media_type = take_str(data, mime_key).unwrap_or_default();
    Some(Block::Blob { media_type, data: bytes })
}

/// Each column into `meta` under its name; a value that is not JSON text is kept as a string.
pub(super) fn put_columns(meta: &mut BTreeMap<String, String>, columns: &[(String, String)]) {
    for (name, value) in columns {
        put(meta, name, &json_of(value));
    }
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// The session row as a system record whose id names the session and hashes the row, so a
/// changed row is a new record and an unchanged one is stored once. `None` without columns.
pub(super) fn session_record(
    prefix: &str,
    session: &str,
    columns: &[(String, String)],
    timestamp: Option<String>,
) -> Option<Record> {
    if columns.is_empty() {
        return None;
    }
    let row = Value::Object(columns.iter().map(|(name, value)| (name.clone(), json_of(value))).collect());
    let hash = blake3::hash(canonical_json(&row).as_bytes()).to_hex();
    let mut record = Record {
        entry_id: format!("{prefix}:{session}:session:{}", &hash.as_str()[..16]),
        role: Role::System,
        timestamp,
        blocks: Vec::new(),
        meta: BTreeMap::new(),
    };
    put(&mut record.meta, "session", &row);
    Some(record)
}

/// `meta["parentSession"]` for every record of a session that has a parent.
pub(super) fn parent_meta(parent: Option<&str>) -> Vec<(&'static str, String)> {
    parent
        .filter(|parent| !parent.is_empty())
        .map(|parent| ("parentSession", canonical_json(&Value::String(parent.to_owned()))))
        .into_iter()
        .collect()
}

/// RFC 3339 text of a Unix time in seconds or milliseconds. The agents' schemas say
/// milliseconds while their code writes seconds; 10^11 seconds is in the year 5138 and 10^11
/// milliseconds in 1973, so the size tells them apart.
pub(super) fn unix_time(value: Option<i64>) -> Option<String> {
    let value = value?;
    if value.unsigned_abs() >= 100_000_000_000 {
        rfc3339_from_millis(value)
    } else {
        rfc3339_from_seconds(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, role: &str, parts: &str) -> CrushMessageRow {
        CrushMessageRow {
            id: id.into(),
            role: role.into(),
            parts: parts.into(),
            created_at: Some(1_751_991_380),
            columns: vec![("model".into(), "\"gpt-4o-mini\"".into()), ("finished_at".into(), "null".into())],
        }
    }

    const LONG: usize = 200_000;

    fn session() -> (ParsedSession, Vec<String>) {
        let text = format!("日本語のテキスト 🦀👩‍👩‍👧 e\u{301}\u{302} {}", "ж".repeat(LONG));
        let user = format!(
            r#"[{{"type":"text","data":{{"text":{}}}}},
            {{"type":"binary","data":{{"Path":"a.png","MIMEType":"image/png","Data":"aGk="}}}},
            {{"type":"image_url","data":{{"url":"https://x/y.png"}}}}]"#,
            Value::String(text)
        );
        let assistant = r#"[{"type":"reasoning","data":{"thinking":"考える","signature":"sig"}},
            {"type":"tool_call","data":{"id":"c1","name":"glob","input":"{\"pattern\": \"*.go\", \"path\": \"/p\"}","type":"function","finished":true}},
            {"type":"finish","data":{"reason":"tool_use","time":1751991383}}]"#;
        let tool = r#"[{"type":"tool_result","data":{"tool_call_id":"c1","name":"","content":"a.go\n🦀.go","metadata":"{}","is_error":false}},
            {"type":"tool_result","data":{"tool_call_id":"c2","name":"view","content":"no","data":"aGk=","mime_type":"image/png","is_error":true}}]"#;
        let session = CrushSessionRow {
            id: "s1".into(),
            parent_session_id: Some("s0".into()),
            updated_at: Some(1_751_992_305_000),
            columns: vec![("id".into(), "\"s1\"".into()), ("title".into(), "\"タイトル ✨\"".into())],
        };
        let rows = [
            row("m1", "user", &user),
            row("m2", "assistant", assistant),
            row("m3", "tool", tool),
            row("m4", "assistant", "{\"not\": \"a list\"}"),
            row("m5", "assistant", "[{\"type\":\"text\""),
            row("m6", "critic", "[7, {\"type\":\"text\",\"data\":{\"text\":\"\"}}]"),
        ];
        parse_crush_session(&session, &rows)
    }

    #[test]
    fn parts_become_blocks_and_the_rest_is_meta() {
        let (parsed, skipped) = session();
        assert_eq!(parsed.name, "s1");
        let ids: Vec<&str> = parsed.records.iter().map(|r| r.entry_id.as_str()).collect();
        assert_eq!(ids[..4], ["crush:m1", "crush:m2", "crush:m3", "crush:m6"]);
        assert!(ids[4].starts_with("crush:s1:session:"), "{ids:?}");
        let [user, assistant, tool, odd, info] = &parsed.records[..] else { panic!("{ids:?}") };
        assert_eq!(user.timestamp.as_deref(), Some("2025-07-08T16:16:20Z"));
        assert!(
            matches!(&user.blocks[0], Block::Text { text } if text.len() > 2 * LONG && text.contains("e\u{301}\u{302}"))
        );
        assert_eq!(user.blocks[1], Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() });
        assert_eq!(user.blocks.len(), 2, "a URL that is not data stays in meta");
        assert!(
            user.meta["parts"].contains(r#""Path":"a.png""#)
                && user.meta["parts"].contains("https://x/y.png")
        );
        assert_eq!(user.meta["model"], "\"gpt-4o-mini\"");
        assert_eq!(assistant.role, Role::Assistant);
        assert_eq!(assistant.blocks[0], Block::Thinking { text: "考える".into() });
        assert_eq!(assistant.blocks[1], Block::tool_call("c1", "glob", r#"{"path":"/p","pattern":"*.go"}"#));
        assert!(assistant.meta["parts"].contains(r#""reason":"tool_use""#));
        assert_eq!(tool.role, Role::Tool);
        assert_eq!(tool.blocks[0], Block::tool_result("c1", "glob", false, "a.go\n🦀.go"));
        assert_eq!(tool.blocks[1], Block::tool_result("c2", "view", true, "no"));
        assert!(matches!(&tool.blocks[2], Block::Blob { media_type, .. } if media_type == "image/png"));
        assert_eq!((odd.role, odd.meta["role"].as_str()), (Role::System, "\"critic\""));
        assert!(odd.blocks.is_empty(), "an empty text stays in meta");
        assert_eq!(info.timestamp.as_deref(), Some("2025-07-08T16:31:45.000Z"));
        assert!(info.meta["session"].contains("タイトル ✨"));
        assert!(parsed.records.iter().all(|r| r.meta["parentSession"] == "\"s0\""));
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert_eq!(skipped[0], "message \"m4\": parts is not a JSON list");
        assert!(skipped[1].starts_with("message \"m5\": parts is not JSON ("), "{skipped:?}");
    }

    #[test]
    fn the_same_rows_parse_the_same_and_a_changed_session_row_is_a_new_record() {
        assert_eq!(session(), session());
        let mut changed =
            CrushSessionRow { id: "s".into(), columns: vec![("c".into(), "1".into())], ..Default::default() };
        let first = parse_crush_session(&changed, &[]).0.records[0].entry_id.clone();
        changed.columns[0].1 = "2".into();
        assert_ne!(parse_crush_session(&changed, &[]).0.records[0].entry_id, first);
        let bare = parse_crush_session(&CrushSessionRow::default(), &[row("", "user", "[]")]);
        assert_eq!((bare.0.name.as_str(), bare.0.records.len()), ("crush", 0));
        assert_eq!(bare.1, ["message \"\": no id"]);
    }
}
