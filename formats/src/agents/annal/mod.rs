//! annal's own JSONL export: a header line
//! `{"format":"annal-jsonl","version":1,"session":…,"parent":…,"forkAt":…}`, then one record
//! per line in the portable format (docs/format.md). A file may hold several exports one after
//! another; each header opens a session.
//!
//! Records are kept exactly as exported, with the hashes they claim, so the caller can check
//! that the import reproduces the exported chain. Nothing is filled in or renamed, except an
//! entryId the record lacks (derived as `annal:<session>:<line>`).

use serde_json::Value;

use super::lines::{lines, read_line, LineValue};
use super::session::{usable_name, SessionBuilder};
use super::{ParseOptions, ParsedSession, ParsedTranscript, SkipReason, Skipped};
use crate::export::parse_export_header;
use annal_engine::record_from_json;

#[derive(Debug)]
struct Open {
    name: String,
    parent: Option<String>,
    fork_at: Option<u64>,
    builder: SessionBuilder,
    /// A header opened it: keep it even without records (a fork with no records of its own).
    headed: bool,
}

impl Open {
    fn new(name: String, parent: Option<String>, fork_at: Option<u64>, headed: bool) -> Open {
        Open { name, parent, fork_at, builder: SessionBuilder::new("annal", false), headed }
    }

    fn close(self, sessions: &mut Vec<ParsedSession>) {
        if self.headed || !self.builder.is_empty() {
            sessions.push(self.builder.finish(self.name, self.parent, self.fork_at, &[]));
        }
    }
}

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut parsed = ParsedTranscript::default();
    let mut open = Open::new(stem.to_owned(), None, None, false);
    // The line of a header that could not be read; records after it are skipped.
    let mut rejected: Option<usize> = None;
    for line in lines(bytes) {
        let value = match read_line(&line, options) {
            LineValue::Blank => continue,
            LineValue::Skip(reason) => {
                parsed.skipped.push(Skipped { line: line.number, reason });
                continue;
            }
            LineValue::Json(value) => value,
        };
        if value.as_object().is_some_and(|map| map.contains_key("format")) {
            match read_header(&value, stem) {
                Ok(next) => {
                    parsed.recognised += 1;
                    rejected = None;
                    std::mem::replace(&mut open, next).close(&mut parsed.sessions);
                }
                Err(reason) => {
                    rejected = Some(line.number);
                    parsed.skipped.push(Skipped { line: line.number, reason: SkipReason::Invalid(reason) });
                }
            }
            continue;
        }
        if let Some(header_line) = rejected {
            // Which session these records belong to is unknown: never guess.
            let reason = SkipReason::Invalid(format!("follows the unreadable header on line {header_line}"));
            parsed.skipped.push(Skipped { line: line.number, reason });
            continue;
        }
        match record_from_json(&value) {
            Ok(portable) => {
                // A line of another tool's JSONL can read as a record (a `role` is all one needs)
                // and carry nothing: it counts as this format's only in the portable shape.
                match value.as_object().is_some_and(is_portable_shape) {
                    true => parsed.recognised += 1,
                    false => parsed.unrecognised += 1,
                }
                let claimed = portable.hash.zip(portable.prev_hash);
                open.builder.push(line.number, portable.record, claimed);
            }
            Err(err) => {
                parsed.skipped.push(Skipped { line: line.number, reason: SkipReason::Invalid(err.0) })
            }
        }
    }
    open.close(&mut parsed.sessions);
    parsed
}

/// The fields of a portable record (docs/format.md).
const PORTABLE_FIELDS: [&str; 8] =
    ["entryId", "role", "timestamp", "blocks", "meta", "sourceOrder", "hash", "prevHash"];

/// A record line as annal writes one: its blocks or its entryId, and no field the portable
/// format does not have (OpenAI-style chat lines have `content`, `tool_calls`, …).
fn is_portable_shape(map: &serde_json::Map<String, Value>) -> bool {
    (map.contains_key("blocks") || map.contains_key("entryId"))
        && map.keys().all(|key| PORTABLE_FIELDS.contains(&key.as_str()))
}

fn read_header(header: &Value, stem: &str) -> Result<Open, String> {
    let mut header = header.clone();
    // An export always names its session; a hand-written header may leave it to the file.
    if let Some(map) = header.as_object_mut().filter(|map| !map.contains_key("session")) {
        map.insert("session".into(), Value::String(stem.to_owned()));
    }
    let header = parse_export_header(&header.to_string())?;
    if !usable_name(&header.session) {
        return Err("\"session\" must be a non-empty name without control characters".into());
    }
    Ok(Open::new(header.session, header.parent, header.fork_at, true))
}

#[cfg(test)]
mod tests {
    use super::super::{parse_transcript, TranscriptFormat};
    use super::*;
    use annal_engine::hash_to_hex;
    use annal_engine::{Block, Role};

    fn parse(text: &str) -> ParsedTranscript {
        parse_transcript(text.as_bytes(), TranscriptFormat::Annal, "export")
    }

    #[test]
    fn header_then_records_with_claimed_hashes() {
        let (h1, h0) = (hash_to_hex(&[1; 32]), hash_to_hex(&[0; 32]));
        let text = format!(
            "{{\"format\":\"annal-jsonl\",\"version\":1,\"session\":\"child\",\"parent\":\"main\",\"forkAt\":2}}\n\
             {{\"sourceOrder\":2,\"entryId\":\"e3\",\"role\":\"tool\",\"blocks\":[{{\"type\":\"toolResult\",\"callId\":\"c\",\"output\":\"x\"}}],\"hash\":\"{h1}\",\"prevHash\":\"{h0}\"}}\n\
             {{\"role\":\"user\",\"blocks\":[{{\"type\":\"text\",\"text\":\"hi\"}}]}}\n"
        );
        let parsed = parse(&text);
        assert!(parsed.skipped.is_empty());
        let session = &parsed.sessions[0];
        assert_eq!(
            (session.name.as_str(), session.parent.as_deref(), session.fork_at),
            ("child", Some("main"), Some(2))
        );
        assert_eq!(session.claimed_hashes, [Some(([1; 32], [0; 32])), None]);
        // The tool name stays empty: filling it in would change the content the hash claims.
        assert!(matches!(&session.records[0].blocks[0], Block::ToolResult { tool, .. } if tool.is_empty()));
        assert_eq!(session.records[1].entry_id, "annal:child:3");
        assert_eq!(session.records[1].role, Role::User);
    }

    #[test]
    fn several_exports_and_bad_lines() {
        let text = "{\"format\":\"annal-jsonl\",\"version\":1,\"session\":\"a\"}\n\
                    {\"format\":\"annal-jsonl\",\"version\":1,\"session\":\"b\"}\n\
                    {\"entryId\":\"b1\",\"role\":\"robot\"}\n\
                    {\"format\":\"annal-jsonl\",\"version\":9,\"session\":\"c\"}\n\
                    {\"format\":\"other\"}\n\
                    {\"entryId\":\"c1\",\"role\":\"assistant\",\"blocks\":[]}\n\
                    {\"format\":\"annal-jsonl\",\"version\":1,\"session\":\"d\"}\n\
                    {\"entryId\":\"d1\",\"role\":\"assistant\",\"blocks\":[]}\n";
        let parsed = parse(text);
        let names: Vec<&str> = parsed.sessions.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "d"]);
        assert!(parsed.sessions[0].records.is_empty());
        assert!(parsed.sessions[1].records.is_empty());
        assert_eq!(parsed.sessions[2].records[0].entry_id, "d1");
        let skipped: Vec<String> = parsed.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(
            skipped,
            [
                "line 3: not a valid record (unknown role \"robot\" (user, assistant, tool or system))",
                "line 4: not a valid record (export version 9 is not supported (this annal reads 1))",
                "line 5: not a valid record (header format is Some(\"other\"), expected \"annal-jsonl\")",
                "line 6: not a valid record (follows the unreadable header on line 5)",
            ]
        );
    }

    #[test]
    fn records_without_a_header_belong_to_the_file_stem() {
        let parsed = parse("{\"entryId\":\"e\",\"role\":\"user\"}\n");
        assert_eq!(parsed.sessions[0].name, "export");
        assert!(parse("").sessions.is_empty());
    }
}
