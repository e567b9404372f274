//! The Kimi CLI importer on context files shaped as Kimi writes them (kosong's `Message` with
//! its null fields left out), across the file's rotations, and its detection.

use super::super::{detect_format, parse_transcript, TranscriptFormat};
use super::{kimi_context_number, parse_kimi_context};
use annal_engine::{Block, Role};

const CONTEXT: &str = r#"{"role": "_system_prompt", "content": "You are Kimi CLI."}
{"role": "_checkpoint", "id": 0}
{"role":"user","content":[{"type":"text","text":"fix the 解析器\u3000🦀"},{"type":"image_url","image_url":{"url":"data:image/png;base64,aGk=","id":"img1"}}]}
{"role":"assistant","content":[{"type":"think","think":"Read it first.","encrypted":"x9"},{"type":"text","text":"Reading it."}],"tool_calls":[{"type":"function","id":"ReadFile:0","function":{"name":"ReadFile","arguments":"{\"path\": \"src/a.rs\"}"}}]}
{"role":"tool","content":[{"type":"text","text":"<system>1 line read</system>"},{"type":"text","text":"fn main() {}"}],"tool_call_id":"ReadFile:0"}
{"role": "_usage", "token_count": 5210}
{"role":"assistant","content":"Done."}
"#;

#[test]
fn each_line_becomes_a_record() {
    assert_eq!(detect_format(CONTEXT.as_bytes()), Some(TranscriptFormat::Kimi));
    let parsed = parse_transcript(CONTEXT.as_bytes(), TranscriptFormat::Kimi, "9ab");
    assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
    assert_eq!((parsed.recognised, parsed.unrecognised), (7, 0));
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "9ab");
    let records = &session.records;
    assert_eq!(records.len(), 7);
    assert!(records.iter().all(|r| r.entry_id.starts_with("kimi:9ab/") && r.entry_id.len() == 25));
    assert_eq!(records[0].blocks, [Block::Text { text: "You are Kimi CLI.".into() }]);
    assert_eq!((records[0].role, records[0].meta["role"].as_str()), (Role::System, "\"_system_prompt\""));
    assert_eq!((records[1].role, records[1].meta["id"].as_str()), (Role::System, "0"));
    assert_eq!(records[2].role, Role::User);
    assert_eq!(
        records[2].blocks,
        [
            Block::Text { text: "fix the 解析器\u{3000}🦀".into() },
            Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() }
        ]
    );
    assert!(records[2].meta["contentExtra"].contains("img1"));
    assert!(!records[2].meta.contains_key("role"));
    assert_eq!(
        records[3].blocks,
        [
            Block::Thinking { text: "Read it first.".into() },
            Block::Text { text: "Reading it.".into() },
            Block::ToolCall {
                call_id: "ReadFile:0".into(),
                tool: "ReadFile".into(),
                input: "{\"path\": \"src/a.rs\"}".into(),
                target: String::new()
            }
        ]
    );
    assert!(records[3].meta["contentExtra"].contains("\"encrypted\":\"x9\""));
    assert!(!records[3].meta.contains_key("tool_calls"));
    assert_eq!(records[4].role, Role::Tool);
    assert_eq!(
        records[4].blocks,
        [Block::ToolResult {
            call_id: "ReadFile:0".into(),
            tool: "ReadFile".into(),
            is_error: false,
            output: "<system>1 line read</system>\nfn main() {}".into()
        }]
    );
    assert_eq!(records[5].meta["token_count"], "5210");
    assert_eq!(records[6].blocks, [Block::Text { text: "Done.".into() }]);
}

#[test]
fn appended_lines_keep_earlier_ids_and_repeats_are_their_own() {
    let more = format!("{CONTEXT}{{\"role\":\"user\",\"content\":\"continue\"}}\n{{\"role\":\"user\",\"content\":\"continue\"}}\n");
    let before = parse_transcript(CONTEXT.as_bytes(), TranscriptFormat::Kimi, "s");
    let after = parse_transcript(more.as_bytes(), TranscriptFormat::Kimi, "s");
    let (before, after) = (&before.sessions[0].records, &after.sessions[0].records);
    assert_eq!(&after[..before.len()], &before[..]);
    assert_eq!(after.len(), before.len() + 2);
    assert_ne!(after[7].entry_id, after[8].entry_id);
    assert_eq!(after[7].blocks, after[8].blocks);
}

#[test]
fn rotations_are_read_oldest_first_without_repeating_copied_lines() {
    // An undo: the old file set aside, its lines up to checkpoint 1 copied into a new one.
    let old = "{\"role\":\"_checkpoint\",\"id\":0}\n{\"role\":\"user\",\"content\":\"one\"}\n{\"role\":\"_checkpoint\",\"id\":1}\n{\"role\":\"user\",\"content\":\"two\"}\n";
    let undone = "{\"role\":\"_checkpoint\",\"id\":0}\n{\"role\":\"user\",\"content\":\"one\"}\n{\"role\":\"_checkpoint\",\"id\":1}\n{\"role\":\"user\",\"content\":\"two, again\"}\n";
    // Then `/clear`: that file set aside too, and a new one begun.
    let cleared = "{\"role\":\"_checkpoint\",\"id\":0}\n{\"role\":\"user\",\"content\":\"three\"}\n";
    let parsed = parse_kimi_context(&[old.as_bytes(), undone.as_bytes()], cleared.as_bytes(), "s");
    let texts: Vec<String> = parsed.sessions[0]
        .records
        .iter()
        .map(|r| match r.blocks.first() {
            Some(Block::Text { text }) => text.clone(),
            _ => r.meta.get("id").cloned().unwrap_or_default(),
        })
        .collect();
    // The new file's first line repeats the first file's (checkpoint 0): the same line at the
    // same place is taken for a copy.
    assert_eq!(texts, ["0", "one", "1", "two", "two, again", "three"]);
    let ids: std::collections::HashSet<_> = parsed.sessions[0].records.iter().map(|r| &r.entry_id).collect();
    assert_eq!(ids.len(), 6);
    assert_eq!(parsed.sessions[0].claimed_hashes.len(), 6);
    // The current file alone gives the same ids to the records it holds.
    let alone = parse_transcript(cleared.as_bytes(), TranscriptFormat::Kimi, "s");
    assert_eq!(alone.sessions[0].records[1..], parsed.sessions[0].records[5..]);
}

#[test]
fn file_names_of_a_session() {
    assert_eq!(kimi_context_number("context.jsonl"), Some(0));
    assert_eq!(kimi_context_number("context_12.jsonl"), Some(12));
    for name in ["context_0.jsonl", "context_.jsonl", "context_1a.jsonl", "context.json", "wire.jsonl"] {
        assert_eq!(kimi_context_number(name), None, "{name}");
    }
}

#[test]
fn plain_chat_messages_and_look_alikes_are_not_kimi() {
    // OpenAI-style messages alone: many tools write them, so they are no Kimi file.
    let chat = "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\"hello\"}\n";
    assert_eq!(detect_format(chat.as_bytes()), None);
    // A checkpoint with other fields, or a usage line without its count, is no signature.
    assert_eq!(detect_format(b"{\"role\":\"_checkpoint\",\"id\":0,\"x\":1}\n"), None);
    assert_eq!(detect_format(b"{\"role\":\"_usage\",\"token_count\":\"5\"}\n"), None);
    // A message with fields Kimi never writes is not read as one.
    let other = "{\"role\":\"_checkpoint\",\"id\":0}\n{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}\n{\"role\":\"user\",\"content\":\"x\",\"uuid\":\"u\"}\n";
    let parsed = parse_transcript(other.as_bytes(), TranscriptFormat::Kimi, "s");
    assert_eq!((parsed.recognised, parsed.unrecognised), (1, 2));
}
