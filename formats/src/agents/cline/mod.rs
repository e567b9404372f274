//! Cline and Roo Code task histories: a task's `api_conversation_history.json`, one JSON array
//! of Anthropic `MessageParam`s, one record per element.
//!
//! Both extensions keep a folder per task in their VS Code global storage
//! (`saoudrizwan.claude-dev/tasks/<taskId>/` for Cline, `rooveterinaryinc.roo-cline/tasks/<taskId>/`
//! for Roo Code), holding `api_conversation_history.json` (what the model saw) beside
//! `ui_messages.json` (the chat as shown, `{ts, type: say|ask, …}`, not read here). The array is
//! rewritten whole on every save and grows at its end, so an element's index is stable: its
//! entryId is `cline:<taskId>:<index>` (0-based). The task id names the session: the caller
//! passes the task folder's name as the stem.
//!
//! An element is `{role, content, …}`: `content` a string or parts `text`, `image`, `document`,
//! `tool_use`, `tool_result`, `thinking`, `redacted_thinking`, and Roo's `reasoning`. A user
//! element of tool results only is a tool record, as Claude Code's importer does it. `ts`
//! (milliseconds) is the timestamp. Other fields (`id`, `modelInfo`, `metrics`, Roo's
//! `isSummary`, `condenseId`, …) stay in `meta` under their own names, and what a part has
//! beyond its block in `meta["contentExtra"]`, keyed by the part's index; the `condenseParent`
//! and `truncationParent` tags Roo adds to earlier messages later are left out. Older Cline wrote
//! tool calls as XML inside the text (`<read_file><path>…</path></read_file>`): it stays text.
//!
//! A document cut short (older versions wrote in place) imports its complete elements and reports
//! the rest as truncated; an element that is not JSON ends the import there, reported. When a
//! task resumes, both extensions write the closing user message again at its index with a
//! resumption note added; the store keeps that as a revision of the one read before.

use serde_json::Value;

use super::anthropic::{content_blocks, Dialect};
use super::lines::{document_body, json_error};
use super::session::{put, put_all, str_of, take_str, SessionBuilder};
use super::{ParseOptions, ParsedTranscript, SkipReason, Skipped};
use annal_engine::rfc3339_from_millis;
use annal_engine::{Block, Record, Role};

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut parsed = ParsedTranscript::default();
    let Some(bytes) = document_body(bytes, options, &mut parsed) else { return parsed };
    // Cline and Roo Code replace a closing user message when a task resumes (its content plus a
    // note, at the same index): read again, it is stored as a revision of the one stored now.
    let read = elements(bytes);
    let mut builder = SessionBuilder::new("cline", true);
    for (index, (_, value)) in read.values.into_iter().enumerate() {
        let (record, known) = element_record(value);
        *if known { &mut parsed.recognised } else { &mut parsed.unrecognised } += 1;
        builder.push(index, record, None);
    }
    parsed.skipped.extend(read.stop);
    if !builder.is_empty() {
        parsed.sessions.push(builder.finish(stem.to_owned(), None, None, &[]));
    }
    parsed
}

/// The elements of a task history, each with the offset it starts at.
#[derive(Debug, Default)]
struct Elements {
    values: Vec<(usize, Value)>,
    /// The array's `]` was read.
    closed: bool,
    /// Why the reading stopped early, or what follows the array.
    stop: Option<Skipped>,
}

/// The elements of the array in `bytes`, read one at a time so a document cut short still
/// yields the complete ones.
fn elements(bytes: &[u8]) -> Elements {
    let mut read = Elements::default();
    let mut at = skip_space(bytes, 0);
    let stop = |mut read: Elements, at: usize, reason: SkipReason| {
        read.stop = Some(Skipped { line: line_of(bytes, at), reason });
        read
    };
    match bytes.get(at) {
        None => return read,
        Some(b'[') => at = skip_space(bytes, at + 1),
        Some(_) => return stop(read, at, SkipReason::Invalid("a task history is a JSON array".into())),
    }
    let mut next = at;
    if bytes.get(at) != Some(&b']') {
        loop {
            let mut stream = serde_json::Deserializer::from_slice(&bytes[at..]).into_iter::<Value>();
            let value = match stream.next() {
                Some(Ok(value)) => value,
                None => return stop(read, at, SkipReason::Truncated),
                Some(Err(err)) if err.is_eof() => return stop(read, at, SkipReason::Truncated),
                Some(Err(err)) => return Elements { stop: Some(located(bytes, at, &err)), ..read },
            };
            next = skip_space(bytes, at + stream.byte_offset());
            // An element counts once what follows it is written (a number cut short reads as one).
            let Some(&delimiter) = bytes.get(next) else { return stop(read, at, SkipReason::Truncated) };
            read.values.push((at, value));
            match delimiter {
                b',' => at = skip_space(bytes, next + 1),
                b']' => break,
                _ => return stop(read, next, SkipReason::Invalid("expected `,` or `]`".into())),
            }
        }
    }
    read.closed = true;
    let after = skip_space(bytes, next + 1);
    match after < bytes.len() {
        true => stop(read, after, SkipReason::Invalid("text after the JSON array".into())),
        false => read,
    }
}

fn skip_space(bytes: &[u8], from: usize) -> usize {
    from + bytes.get(from..).map_or(0, |rest| rest.iter().take_while(|b| b.is_ascii_whitespace()).count())
}

/// 1-based line of byte `at`.
fn line_of(bytes: &[u8], at: usize) -> usize {
    1 + bytes[..at.min(bytes.len())].iter().filter(|&&b| b == b'\n').count()
}

/// A JSON error in the element starting at byte `at`, placed in the whole document.
fn located(bytes: &[u8], at: usize, err: &serde_json::Error) -> Skipped {
    let line = line_of(bytes, at) + err.line().saturating_sub(1);
    let mut reason = json_error(err);
    if let SkipReason::NotJson { column, .. } = &mut reason {
        if err.line() <= 1 {
            let line_start = bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            *column += at - line_start;
        }
    }
    Skipped { line, reason }
}

/// One element as a record, and whether it is a message (or a Roo reasoning item).
fn element_record(value: Value) -> (Record, bool) {
    let mut record = Record::new(String::new(), Role::System, Vec::new());
    let Value::Object(mut map) = value else {
        put(&mut record.meta, "value", &value);
        return (record, false);
    };
    // Roo Code tags messages already written when it condenses or truncates the context later;
    // kept, the tags would change records already imported.
    map.remove("condenseParent");
    map.remove("truncationParent");
    if let Some(time) = map.get("ts").and_then(Value::as_i64).and_then(rfc3339_from_millis) {
        record.timestamp = Some(time);
        map.remove("ts");
    }
    let (mut only_results, mut content) = (false, true);
    match map.remove("content") {
        Some(Value::String(text)) => record.blocks.push(Block::Text { text }),
        Some(Value::Array(parts)) => {
            let parts = content_blocks(parts, Dialect::Cline);
            (record.blocks, only_results) = (parts.blocks, parts.only_results);
            if !parts.extra.is_empty() {
                put(&mut record.meta, "contentExtra", &Value::Object(parts.extra));
            }
        }
        Some(other) => {
            map.insert("content".into(), other);
            content = false;
        }
        None => content = false,
    }
    // Roo Code (from 3.31) keeps encrypted reasoning as an element of its own, without a role.
    let reasoning = !map.contains_key("role") && str_of(&map, "type") == Some("reasoning");
    if reasoning {
        record.blocks.extend(take_str(&mut map, "text").map(|text| Block::Thinking { text }));
    }
    record.role = match str_of(&map, "role") {
        Some("assistant") => Role::Assistant,
        Some("user") if only_results => Role::Tool,
        Some("user") => Role::User,
        None if reasoning => Role::Assistant,
        _ => Role::System,
    };
    let known = reasoning || (content && matches!(record.role, Role::User | Role::Assistant | Role::Tool));
    if record.role != Role::System && !reasoning {
        map.remove("role");
    }
    put_all(&mut record.meta, map);
    (record, known)
}

/// Whether `bytes` is a task history: a JSON array whose first element is a message (`role`
/// user or assistant, `content` a string or an array). Only that element is read.
pub(super) fn is_cline_document(bytes: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Message {
        role: String,
        content: Value,
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'[') {
        return false;
    }
    match serde_json::Deserializer::from_slice(&bytes[at + 1..]).into_iter::<Message>().next() {
        Some(Ok(Message { role, content })) => {
            matches!(role.as_str(), "user" | "assistant") && (content.is_string() || content.is_array())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{detect_format, parse_transcript, TranscriptFormat};
    use super::*;

    const TASK: &str = "1733245345123";

    /// A task's `api_conversation_history.json`, element by element: an older Cline turn with
    /// XML tool calls in the text, a native tool call and its result, a Roo Code reasoning part,
    /// reasoning item and condensed summary, and an old-style completion.
    const ELEMENTS: [&str; 10] = [
        r#"{"role":"user","content":[{"type":"text","text":"<task>\n日本語のREADMEを書いて 📝 — e\u0301te\u0301\u2009ok\u00a0!\n</task>"},{"type":"text","text":"<environment_details>\n# VSCode Visible Files\nREADME.md\n</environment_details>"}]}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"<thinking>Read it first.</thinking>\n\n<read_file>\n<path>README.md</path>\n</read_file>"}]}"#,
        r#"{"role":"user","content":[{"type":"text","text":"[read_file for 'README.md'] Result:"},{"type":"text","text":"Café au lait ☕"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"aGk="}}],"ts":1733245346000}"#,
        r#"{"role":"assistant","id":"msg_01","content":[{"type":"thinking","thinking":"画像を確認する","signature":"c2ln"},{"type":"tool_use","id":"toolu_01","name":"read_file","input":{"path":"src/main.rs","b":[1]},"call_id":"resp_1"}],"modelInfo":{"modelId":"claude-sonnet-4-5","providerId":"anthropic","mode":"act"},"metrics":{"tokens":{"prompt":1200,"completion":40,"cached":0},"cost":0.0042},"ts":1733245347000}"#,
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":[{"type":"text","text":"fn main() {}"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"aGk="}}]}],"ts":1733245348000}"#,
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_02","is_error":true,"content":"Error: ENOENT"},{"type":"text","text":"<environment_details>…</environment_details>"}]}"#,
        r#"{"role":"assistant","content":[{"type":"reasoning","text":"考え中…","summary":[]},{"type":"text","text":"完了しました 🎉"}],"ts":1733245349000}"#,
        r#"{"type":"reasoning","encrypted_content":"gAAAA","id":"rs_1","summary":[],"text":"thought"}"#,
        r#"{"role":"user","content":"Summary of the conversation so far","isSummary":true,"condenseId":"c1","condenseParent":"c0"}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"<attempt_completion>\n<result>\nREADME を書きました ✅\n</result>\n</attempt_completion>"}]}"#,
    ];

    fn document(elements: &[&str]) -> String {
        format!("[{}]", elements.join(","))
    }

    fn parse(text: &str) -> ParsedTranscript {
        parse_transcript(text.as_bytes(), TranscriptFormat::Cline, TASK)
    }

    #[test]
    fn elements_become_records() {
        let parsed = parse(&document(&ELEMENTS));
        assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
        assert_eq!((parsed.recognised, parsed.unrecognised), (10, 0));
        let session = &parsed.sessions[0];
        assert_eq!(session.name, TASK);
        assert!(session.records.iter().enumerate().all(|(i, r)| r.entry_id == format!("cline:{TASK}:{i}")));
        use Role::{Assistant as A, Tool as T, User as U};
        let roles: Vec<Role> = session.records.iter().map(|r| r.role).collect();
        assert_eq!(roles, [U, A, U, A, T, U, A, A, U, A]);
        let [task, xml, read, call, result, failed, roo, item, summary, _] = &session.records[..] else {
            panic!("ten records")
        };
        let text = "<task>\n日本語のREADMEを書いて 📝 — e\u{301}te\u{301}\u{2009}ok\u{a0}!\n</task>";
        assert_eq!((&task.blocks[0], task.meta.len()), (&Block::text(text), 0));
        let calls =
            "<thinking>Read it first.</thinking>\n\n<read_file>\n<path>README.md</path>\n</read_file>";
        assert_eq!(xml.blocks, [Block::text(calls)]);
        assert_eq!(read.timestamp.as_deref(), Some("2024-12-03T17:02:26.000Z"));
        assert_eq!(read.blocks[2], Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() });
        assert_eq!(read.meta["contentExtra"], r#"{"2":{"source":{"type":"base64"}}}"#);
        assert_eq!(call.blocks[0], Block::Thinking { text: "画像を確認する".into() });
        let input = r#"{"b":[1],"path":"src/main.rs"}"#;
        assert_eq!(call.blocks[1], Block::tool_call("toolu_01", "read_file", input));
        assert_eq!(call.meta["contentExtra"], r#"{"0":{"signature":"c2ln"},"1":{"call_id":"resp_1"}}"#);
        assert_eq!(call.meta["id"], "\"msg_01\"");
        let metrics = r#"{"cost":0.0042,"tokens":{"cached":0,"completion":40,"prompt":1200}}"#;
        assert_eq!(call.meta["metrics"], metrics);
        assert!(!call.meta.contains_key("role") && !call.meta.contains_key("ts"));
        // The result names the tool of the call it answers.
        assert_eq!(result.blocks[0], Block::tool_result("toolu_01", "read_file", false, "fn main() {}"));
        assert!(matches!(result.blocks[1], Block::Blob { .. }));
        assert_eq!(failed.blocks[0], Block::tool_result("toolu_02", "", true, "Error: ENOENT"));
        assert_eq!(roo.blocks, [Block::Thinking { text: "考え中…".into() }, Block::text("完了しました 🎉")]);
        assert_eq!(roo.meta["contentExtra"], r#"{"0":{"summary":[],"type":"reasoning"}}"#);
        assert_eq!(item.blocks, [Block::Thinking { text: "thought".into() }]);
        assert_eq!(item.meta["encrypted_content"], "\"gAAAA\"");
        assert_eq!((summary.meta["isSummary"].as_str(), summary.meta.get("condenseParent")), ("true", None));
    }

    #[test]
    fn a_growing_or_cut_history_parses_to_a_prefix() {
        let full_text = document(&ELEMENTS);
        let full = &parse(&full_text).sessions[0].records;
        for count in 1..=ELEMENTS.len() {
            let grown = parse(&document(&ELEMENTS[..count]));
            let records = grown.sessions.first().map_or(&[][..], |s| &s.records[..]);
            assert_eq!(records, &full[..count]);
            assert!(grown.skipped.is_empty(), "{:?}", grown.skipped);
        }
        for (cut, _) in full_text.char_indices().skip(1) {
            let part = parse(&full_text[..cut]);
            let skipped: Vec<&SkipReason> = part.skipped.iter().map(|s| &s.reason).collect();
            assert_eq!(skipped, [&SkipReason::Truncated], "cut at {cut}");
            let records = part.sessions.first().map_or(&[][..], |s| &s.records[..]);
            assert_eq!(records, &full[..records.len()], "cut at {cut}");
        }
        // Pretty-printed with a long line, and bad input: reported where it is.
        let long = format!("{{\"role\":\"user\",\"content\":\"{}\"}}", "長".repeat(100_000));
        let pretty = format!("[\n  {long},\n  {}\n  {{\"role\": oops}}\n]", ELEMENTS[1]);
        let parsed = parse(&pretty);
        assert_eq!(parsed.record_count(), 2);
        let invalid = SkipReason::Invalid("expected `,` or `]`".into());
        assert_eq!(parsed.skipped, [Skipped { line: 4, reason: invalid }]);
        let broken = parse("[\n{\"role\":\"user\",\"content\":\"hi\"},\n  {\"role\": oops}]");
        let column = SkipReason::NotJson { message: "expected value".into(), column: 12 };
        assert_eq!(broken.skipped, [Skipped { line: 3, reason: column }]);
        for (text, why) in [("{}", "a task history is a JSON array"), ("[1] x", "text after the JSON array")]
        {
            assert_eq!(parse(text).skipped, [Skipped { line: 1, reason: SkipReason::Invalid(why.into()) }]);
        }
        assert_eq!(parse("[1, \"x\"]").unrecognised, 2);
    }

    #[test]
    fn detection_both_ways() {
        let history = document(&ELEMENTS);
        assert!(is_cline_document(history.as_bytes()));
        assert_eq!(detect_format(history.as_bytes()), Some(TranscriptFormat::Cline));
        let pretty = "\u{feff}[\n  {\n    \"content\": \"hi\",\n    \"role\": \"user\"\n  }\n]\n";
        assert_eq!(detect_format(pretty.as_bytes()), Some(TranscriptFormat::Cline));
        let ui_messages = r#"[{"ts":1733245345123,"type":"say","say":"task","text":"README"},{"ts":1733245346000,"type":"ask","ask":"tool","text":"{\"tool\":\"readFile\"}"}]"#;
        for other in [
            "[]",
            ui_messages,
            "[1, 2, 3]",
            r#"[{"role":"system","content":"x"}]"#,
            r#"[{"role":"user","content":7}]"#,
            "\n# aider chat started at 2025-07-15 11:38:37\n\n#### [{\"role\":\"user\",\"content\":\"hi\"}]  \n",
            r#"{"type":"user","uuid":"u1","sessionId":"s1","message":{"role":"user","content":"hi"}}"#,
            r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}"#,
            r#"{"info":{},"messages":[{"role":"user","content":"hi"}]}"#,
        ] {
            assert!(!is_cline_document(other.as_bytes()), "{other}");
            assert_ne!(detect_format(other.as_bytes()), Some(TranscriptFormat::Cline), "{other}");
        }
    }
}
