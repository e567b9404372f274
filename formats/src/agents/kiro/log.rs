//! Kiro CLI's session logs (`~/.kiro/sessions/cli/<session>.jsonl`, newer builds): one entry
//! per line, `{version: "v1", kind, data}`, appended; the conversation is what replaying them
//! gives.
//!
//! Every entry is one record. `Prompt` is a user record, `AssistantMessage` an assistant one and
//! `ToolResults` a tool one, each of its `content` blocks (`{kind, data}`: `text`, `toolUse` as a
//! call, `toolResult` as a result, failed for `error`, `image` as a blob), its entryId the
//! entry's `message_id`. `Compaction` is a system record whose text is the summary (the
//! messages it replaced stay; `messages_snapshot` in meta), `ResetTo`, `CancelledPrompt` and
//! `Clear` system records of meta: what they undid stays in the journal. What no block holds
//! stays in `meta` (`meta` with the prompt's time in seconds, `results`, …).

use serde_json::{Map, Value};

use super::lines::read_json_lines;
use super::session::{
    line_object, put_all, put_nonempty, str_of, take_str, text_of, usable_id, SessionBuilder,
};
use super::{ParseOptions, ParsedTranscript, TranscriptFormat};
use annal_engine::{canonical_json, Block, Record, Role};

/// The kinds of entry Kiro writes.
const KINDS: [&str; 7] =
    ["Prompt", "AssistantMessage", "ToolResults", "Compaction", "ResetTo", "CancelledPrompt", "Clear"];

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut builder = SessionBuilder::new("kiro", true);
    let mut parsed = ParsedTranscript::default();
    read_json_lines(
        bytes,
        options,
        TranscriptFormat::KiroLog,
        is_kiro_entry,
        &mut parsed,
        |number, value| {
            builder.push(number, entry_record(value), None);
        },
    );
    if !builder.is_empty() {
        parsed.sessions.push(builder.finish(stem.to_owned(), None, None, &[]));
    }
    parsed
}

/// Whether a line is a log entry: `version` `v1` and a `kind` Kiro writes, with its `data`
/// object where the kind has one.
pub(super) fn is_kiro_entry(map: &Map<String, Value>) -> bool {
    let Some(kind) = str_of(map, "kind").filter(|kind| KINDS.contains(kind)) else { return false };
    let data_ok = match kind {
        "CancelledPrompt" | "Clear" => {
            !map.contains_key("data") || map.get("data").is_some_and(Value::is_object)
        }
        _ => map.get("data").is_some_and(Value::is_object),
    };
    str_of(map, "version") == Some("v1") && data_ok
}

/// The record of one entry (see the module comment).
fn entry_record(value: Value) -> Record {
    let mut record = Record::new(String::new(), Role::System, Vec::new());
    let Some(mut map) = line_object(value, &mut record) else { return record };
    let kind = str_of(&map, "kind").unwrap_or_default().to_owned();
    if let Some(Value::Object(mut data)) = map.remove("data") {
        record.role = match kind.as_str() {
            "Prompt" => Role::User,
            "AssistantMessage" => Role::Assistant,
            "ToolResults" => Role::Tool,
            _ => Role::System,
        };
        if record.role != Role::System {
            if let Some(id) = str_of(&data, "message_id").filter(|id| usable_id(id)) {
                record.entry_id = id.to_owned();
                data.remove("message_id");
            }
            if let Some(Value::Array(content)) = data.remove("content") {
                let extra = content_into(content, &mut record.blocks);
                put_nonempty(&mut record.meta, "contentExtra", extra);
            }
        } else if kind == "Compaction" {
            if let Some(summary) = take_str(&mut data, "summary") {
                record.blocks.push(Block::Text { text: summary });
            }
        }
        put_nonempty(&mut record.meta, "data", data);
    }
    put_all(&mut record.meta, map);
    record
}

/// Content blocks (`{kind, data}`) appended to `blocks`; returns, keyed by block index, the
/// blocks no annal block holds, whole.
fn content_into(content: Vec<Value>, blocks: &mut Vec<Block>) -> Map<String, Value> {
    let mut extra = Map::new();
    for (index, block) in content.into_iter().enumerate() {
        match content_block(&block) {
            Some(found) => blocks.extend(found),
            None => {
                extra.insert(index.to_string(), block);
            }
        }
    }
    extra
}

/// The annal blocks of one content block; `None` for one of another shape.
fn content_block(block: &Value) -> Option<Vec<Block>> {
    let data = block.get("data")?;
    match block.get("kind")?.as_str()? {
        "text" => Some(vec![Block::Text { text: data.as_str()?.to_owned() }]),
        "toolUse" => {
            let call_id = data.get("toolUseId")?.as_str()?.to_owned();
            let tool = data.get("name")?.as_str()?.to_owned();
            let input = data.get("input").map_or_else(|| "{}".to_owned(), canonical_json);
            Some(vec![Block::ToolCall { call_id, tool, input, target: String::new() }])
        }
        "toolResult" => {
            let call_id = data.get("toolUseId")?.as_str()?.to_owned();
            let is_error = data.get("status").and_then(Value::as_str) == Some("error");
            let mut texts = Vec::new();
            let mut images = Vec::new();
            for part in data.get("content").and_then(Value::as_array).into_iter().flatten() {
                match (part.get("kind").and_then(Value::as_str), part.get("data")) {
                    (Some("text"), Some(Value::String(text))) => texts.push(text.clone()),
                    (Some("image"), Some(image)) => images.extend(image_block(image)),
                    (_, Some(other)) => texts.push(text_of(other)),
                    (_, None) => {}
                }
            }
            let result =
                Block::ToolResult { call_id, tool: String::new(), is_error, output: texts.join("\n") };
            Some(std::iter::once(result).chain(images).collect())
        }
        "image" => image_block(data).map(|image| vec![image]),
        _ => None,
    }
}

/// An image `{format, source: {kind: "bytes", data: [...]}}` as a blob.
fn image_block(image: &Value) -> Option<Block> {
    let source = image.get("source")?;
    if source.get("kind").and_then(Value::as_str) != Some("bytes") {
        return None;
    }
    let bytes = source.get("data")?.as_array()?;
    let data =
        bytes.iter().map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok())).collect::<Option<Vec<u8>>>()?;
    let format = image.get("format").and_then(Value::as_str).unwrap_or_default();
    let media_type = if format.is_empty() { String::new() } else { format!("image/{format}") };
    Some(Block::Blob { media_type, data })
}

#[cfg(test)]
mod tests {
    use super::super::{detect_format, parse_transcript, TranscriptFormat};
    use annal_engine::{Block, Role};

    const LOG: &str = r#"{"version":"v1","kind":"Prompt","data":{"message_id":"msg-1","content":[{"kind":"text","data":"fix the 解析器　🦀"},{"kind":"image","data":{"format":"png","source":{"kind":"bytes","data":[104,105]}}}],"meta":{"timestamp":1764496800}}}
{"version":"v1","kind":"AssistantMessage","data":{"message_id":"msg-2","content":[{"kind":"text","data":"Reading it."},{"kind":"toolUse","data":{"toolUseId":"tooluse_1","name":"read","input":{"path":"a.rs"}}}]}}
{"version":"v1","kind":"ToolResults","data":{"message_id":"msg-3","content":[{"kind":"toolResult","data":{"toolUseId":"tooluse_1","content":[{"kind":"text","data":"fn main() {}"},{"kind":"json","data":{"lines":1}}],"status":"error"}}],"results":{}}}
{"version":"v1","kind":"Compaction","data":{"summary":"We read a.rs.","strategy":{},"messages_snapshot":[]}}
{"version":"v1","kind":"CancelledPrompt"}
"#;

    #[test]
    fn each_entry_becomes_a_record() {
        assert_eq!(detect_format(LOG.as_bytes()), Some(TranscriptFormat::KiroLog));
        let parsed = parse_transcript(LOG.as_bytes(), TranscriptFormat::KiroLog, "5f0c");
        assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
        assert_eq!((parsed.recognised, parsed.unrecognised), (5, 0));
        let session = &parsed.sessions[0];
        assert_eq!(session.name, "5f0c");
        let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
        assert_eq!(ids, ["msg-1", "msg-2", "msg-3", "kiro:5f0c:4", "kiro:5f0c:5"]);
        let roles: Vec<Role> = session.records.iter().map(|r| r.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::System, Role::System]);
        let records = &session.records;
        assert_eq!(
            records[0].blocks,
            [
                Block::Text { text: "fix the 解析器\u{3000}🦀".into() },
                Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() }
            ]
        );
        assert_eq!(records[0].meta["data"], r#"{"meta":{"timestamp":1764496800}}"#);
        assert_eq!(
            records[2].blocks,
            [Block::ToolResult {
                call_id: "tooluse_1".into(),
                tool: "read".into(),
                is_error: true,
                output: "fn main() {}\n{\"lines\":1}".into()
            }]
        );
        assert_eq!(records[3].blocks, [Block::Text { text: "We read a.rs.".into() }]);
        assert_eq!(records[4].meta["kind"], "\"CancelledPrompt\"");
    }
}
