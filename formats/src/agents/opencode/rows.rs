//! OpenCode's stored rows (the 1.2 SQLite tables `session`, `message` and `part`, or the older
//! `storage/` JSON tree) as records.
//!
//! OpenCode keeps a message's info in one row and each of its parts in a row of its own, with
//! the ids that tie them together (`id`, `sessionID`, `messageID`) moved out of the JSON into
//! columns or file paths. Putting them back gives exactly the message `opencode export` prints,
//! and the export importer turns it into records: a session read from the database, from the
//! storage tree or from an export gets the same records with the same entryIds, so importing it
//! from more than one of them stores it once.

use serde_json::{Map, Value};

use super::opencode::export_session;
use super::session::usable_id;
use super::ParsedSession;

/// One message as stored: its `data` JSON and its parts' `data` JSON, with the row ids.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenCodeMessageRows {
    /// The message row's id.
    pub id: String,
    /// The message's JSON (its info, with or without `id` and `sessionID`).
    pub data: String,
    /// `(part id, part JSON)`, in the order the agent keeps them (by part id).
    pub parts: Vec<(String, String)>,
}

/// The records of one session from its session info JSON and message rows, in the order given,
/// followed by the session's info record; and one line per row that could not be read.
///
/// `session_json` is the session's info as `opencode export` prints it (`{id, title, parentID,
/// time, …}`); its `id` is set to `session_id`. A message or part whose JSON is not an object is
/// left out and named in the lines returned (ids quoted and escaped, so each is one line), as is
/// a message whose id cannot be an entryId; a session info that is not an object is replaced by
/// `{id}`. Never panics.
///
/// ```
/// use annal_formats::{parse_opencode_rows, OpenCodeMessageRows};
/// let rows = [OpenCodeMessageRows {
///     id: "msg_1".into(),
///     data: r#"{"role":"user","time":{"created":1771210919124}}"#.into(),
///     parts: vec![("prt_1".into(), r#"{"type":"text","text":"你好 👋"}"#.into())],
/// }];
/// let (session, skipped) = parse_opencode_rows("ses_1", r#"{"title":"Demo"}"#, &rows);
/// assert!(skipped.is_empty());
/// assert_eq!(session.name, "ses_1");
/// assert_eq!(session.records[0].entry_id, "msg_1");
/// assert!(session.records[1].entry_id.starts_with("opencode:ses_1:info:"));
/// ```
pub fn parse_opencode_rows(
    session_id: &str,
    session_json: &str,
    messages: &[OpenCodeMessageRows],
) -> (ParsedSession, Vec<String>) {
    let mut skipped = Vec::new();
    let mut info = match object(session_json) {
        Ok(info) => info,
        Err(why) => {
            skipped.push(format!("session {session_id:?}: {why}"));
            Map::new()
        }
    };
    info.insert("id".into(), Value::String(session_id.to_owned()));
    let mut exported = Vec::with_capacity(messages.len());
    for message in messages {
        if let Some(value) = message_value(session_id, message, &mut skipped) {
            exported.push(value);
        }
    }
    let document = Map::from_iter([
        ("info".to_owned(), Value::Object(info)),
        ("messages".to_owned(), Value::Array(exported)),
    ]);
    (export_session(document, session_id), skipped)
}

/// A message as its export prints it, `{info, parts}`, or `None` (reported) if it cannot be read.
fn message_value(
    session_id: &str,
    message: &OpenCodeMessageRows,
    skipped: &mut Vec<String>,
) -> Option<Value> {
    let id = &message.id;
    // A derived id would depend on which rows one read happened to see; a stable id is required.
    if !usable_id(id) {
        skipped.push(format!("message {:?}: the id is empty or too long for an entryId", short(id)));
        return None;
    }
    let mut info = match object(&message.data) {
        Ok(info) => info,
        Err(why) => {
            skipped.push(format!("message {id:?}: {why}"));
            return None;
        }
    };
    // As OpenCode reads a row back: the columns win over anything left in the JSON.
    info.insert("id".into(), Value::String(id.clone()));
    info.insert("sessionID".into(), Value::String(session_id.to_owned()));
    let mut parts = Vec::with_capacity(message.parts.len());
    for (part_id, data) in &message.parts {
        match object(data) {
            Ok(mut part) => {
                part.insert("id".into(), Value::String(part_id.clone()));
                part.insert("sessionID".into(), Value::String(session_id.to_owned()));
                part.insert("messageID".into(), Value::String(id.clone()));
                parts.push(Value::Object(part));
            }
            Err(why) => skipped.push(format!("part {part_id:?} of message {id:?}: {why}")),
        }
    }
    Some(Value::Object(Map::from_iter([
        ("info".to_owned(), Value::Object(info)),
        ("parts".to_owned(), Value::Array(parts)),
    ])))
}

/// `text` as a JSON object, or why it is not one.
fn object(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("the JSON is not an object".to_owned()),
        Err(err) => Err(format!("not JSON ({err})")),
    }
}

/// The start of a long id, for a message that names it.
fn short(id: &str) -> &str {
    let mut end = id.len().min(64);
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    &id[..end]
}

#[cfg(test)]
mod tests {
    use super::super::{parse_transcript, TranscriptFormat};
    use super::*;

    fn rows(id: &str, data: &str, parts: &[(&str, &str)]) -> OpenCodeMessageRows {
        let parts = parts.iter().map(|(id, data)| ((*id).to_owned(), (*data).to_owned())).collect();
        OpenCodeMessageRows { id: id.into(), data: data.into(), parts }
    }

    const SESSION: &str = r#"{"id":"ses_1","parentID":"ses_0","slug":"calm-river","projectID":"p","directory":"/src/δ","title":"Café ☕ 日本語","version":"1.2.6","time":{"created":1771210919109,"updated":1771210999000}}"#;
    const USER: &str = r#"{"role":"user","time":{"created":1771210919124},"agent":"build","model":{"providerID":"anthropic","modelID":"claude"}}"#;
    const ASSISTANT: &str = r#"{"role":"assistant","parentID":"msg_1","time":{"created":1771210919136,"completed":1771210929136},"modelID":"claude","providerID":"anthropic","cost":0.01,"tokens":{"input":5,"output":7,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}"#;
    const TEXT: &str = "e\u{301}t\u{e9} — 中文 👩‍💻";

    /// The rows of a session give the records its export gives, entryIds and content alike.
    #[test]
    fn rows_match_the_export_of_the_same_session() {
        let text = format!(r#"{{"type":"text","text":"{TEXT}"}}"#);
        let tool = r#"{"type":"tool","callID":"c1","tool":"bash","state":{"status":"completed","input":{"command":"ls ü"},"output":"a\nb","time":{"start":1771210920000,"end":1771210921000}}}"#;
        let messages = [
            rows("msg_1", USER, &[("prt_1", &text)]),
            rows("msg_2", ASSISTANT, &[("prt_2", r#"{"type":"step-start"}"#), ("prt_3", tool)]),
        ];
        let (session, skipped) = parse_opencode_rows("ses_1", SESSION, &messages);
        assert!(skipped.is_empty(), "{skipped:?}");
        let export = format!(
            r#"{{"info":{SESSION},"messages":[
              {{"info":{{"id":"msg_1","sessionID":"ses_1",{}}},"parts":[{{"id":"prt_1","sessionID":"ses_1","messageID":"msg_1",{}}}]}},
              {{"info":{{"id":"msg_2","sessionID":"ses_1",{}}},"parts":[{{"id":"prt_2","sessionID":"ses_1","messageID":"msg_2","type":"step-start"}},{{"id":"prt_3","sessionID":"ses_1","messageID":"msg_2",{}}}]}}]}}"#,
            &USER[1..USER.len() - 1],
            &text[1..text.len() - 1],
            &ASSISTANT[1..ASSISTANT.len() - 1],
            &tool[1..tool.len() - 1],
        );
        let parsed = parse_transcript(export.as_bytes(), TranscriptFormat::OpenCode, "export");
        assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
        assert_eq!(parsed.sessions.len(), 1);
        assert_eq!(parsed.sessions[0], session);
        let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
        assert_eq!(ids[..3], ["msg_1", "msg_2", "msg_2/result"]);
        assert_eq!(session.records[0].meta["parentSession"], "\"ses_0\"");
    }

    #[test]
    fn unreadable_rows_are_left_out_and_named() {
        let long = "m".repeat(600);
        let messages = [
            rows("msg_1", "{not json", &[]),
            rows("msg_2", "[1]", &[]),
            rows("", USER, &[]),
            rows(&long, USER, &[]),
            rows("msg_3", USER, &[("prt_1", "null"), ("prt_2", r#"{"type":"text","text":"ok"}"#)]),
        ];
        let (session, skipped) = parse_opencode_rows("ses_1", "\"text\"", &messages);
        assert_eq!(skipped.len(), 6, "{skipped:?}");
        assert_eq!(skipped[0], r#"session "ses_1": the JSON is not an object"#);
        assert!(
            skipped[1].starts_with(r#"message "msg_1": not JSON (key must be a string"#),
            "{}",
            skipped[1]
        );
        assert_eq!(skipped[5], r#"part "prt_1" of message "msg_3": the JSON is not an object"#);
        let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
        assert_eq!(ids.len(), 2);
        assert_eq!(ids[0], "msg_3");
        assert!(session.records[1].meta["session"].contains("\"id\":\"ses_1\""));
    }
}
