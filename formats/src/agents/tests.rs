//! The parsing layer's tests: each format's transcript parsed, file stems, format names.

use proptest::prelude::*;

use super::*;

/// Fragments of every format, so random input reaches deep into each parser.
const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\n",
    "\"",
    "null",
    "7",
    "true",
    "//",
    "\u{e9}",
    "\"type\"",
    "\"user\"",
    "\"assistant\"",
    "\"message\"",
    "\"content\"",
    "\"tool_use\"",
    "\"tool_result\"",
    "\"tool_use_id\"",
    "\"id\"",
    "\"uuid\"",
    "\"sessionId\"",
    "\"payload\"",
    "\"response_item\"",
    "\"function_call_output\"",
    "\"call_id\"",
    "\"output\"",
    "\"info\"",
    "\"messages\"",
    "\"parts\"",
    "\"tool\"",
    "\"state\"",
    "\"status\"",
    "\"completed\"",
    "\"format\"",
    "\"annal-jsonl\"",
    "\"version\"",
    "\"role\"",
    "\"blocks\"",
    "\"source\"",
    "\"base64\"",
    "\"data\"",
    "\"image\"",
    "\"time\"",
    "\"created\"",
    "-99999999999999999",
];

fn assemble(indices: &[usize]) -> String {
    indices.iter().map(|&i| PIECES[i % PIECES.len()]).collect()
}

proptest! {
    #[test]
    fn any_bytes_parse_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = detect_format(&bytes);
        for format in TranscriptFormat::ALL {
            let _ = parse_transcript(&bytes, format, "f");
        }
    }

    #[test]
    fn json_like_input_parses_deterministically(indices in proptest::collection::vec(0usize..1000, 0..200)) {
        let text = assemble(&indices);
        let _ = detect_format(text.as_bytes());
        for format in TranscriptFormat::ALL {
            let parsed = parse_transcript(text.as_bytes(), format, "f");
            prop_assert_eq!(&parse_transcript(text.as_bytes(), format, "f"), &parsed);
            for session in &parsed.sessions {
                prop_assert!(session.records.iter().all(|r| !r.entry_id.is_empty()));
                prop_assert_eq!(session.records.len(), session.claimed_hashes.len());
            }
        }
    }
}

#[test]
fn stems_of_transcript_files() {
    use std::path::Path;
    assert_eq!(transcript_stem(Path::new("a/b/5c03.jsonl")), "5c03");
    assert_eq!(transcript_stem(Path::new("s/2025/01/02/rollout-x.jsonl.zst")), "rollout-x");
    assert_eq!(transcript_stem(Path::new("tasks/1733/api_conversation_history.json")), "1733");
    assert_eq!(transcript_stem(Path::new("session-state/5f0c/events.jsonl")), "5f0c");
    assert_eq!(transcript_stem(Path::new("conversations/9ab/events/event-00001-x.json")), "9ab");
    assert_eq!(transcript_stem(Path::new("agent-transcripts/9ab/subagents/7c.jsonl")), "9ab/subagents/7c");
    assert_eq!(transcript_stem(Path::new(".claude/projects/p/s1/subagents/agent-a1.jsonl")), "agent-a1");
    assert_eq!(transcript_stem(Path::new("sessions/5d41/9ab/context.jsonl")), "9ab");
    assert_eq!(transcript_stem(Path::new("sessions/5d41/9ab/context_2.jsonl")), "9ab");
    assert_eq!(transcript_stem(Path::new("9ab/subagents/a7/context.jsonl")), "9ab/agent-a7");
    assert_eq!(transcript_stem(Path::new("9ab/context_x.jsonl")), "context_x");
    assert_eq!(transcript_stem(Path::new("code/app/.aider.chat.history.md")), "app");
    assert_eq!(transcript_stem(Path::new("logs/app__.aider.chat.history.md")), "app__");
    assert_eq!(transcript_stem(Path::new("noext")), "noext");
}

#[test]
fn format_names_round_trip() {
    for format in TranscriptFormat::ALL {
        assert_eq!(TranscriptFormat::parse(format.name()), Some(format));
        assert_eq!(format.to_string(), format.name());
    }
    assert_eq!(TranscriptFormat::parse("aider"), Some(TranscriptFormat::Aider));
    assert_eq!(TranscriptFormat::parse("goose"), None);
}
