//! aider's chat log's tests: sessions, inputs, replies and notices; a growing log; torn lines; detection.

use super::super::{detect_format, parse_transcript, parse_transcript_with, TranscriptFormat};
use super::*;
use annal_engine::Block;

fn parse(text: &[u8]) -> ParsedTranscript {
    parse_transcript(text, TranscriptFormat::Aider, "proj")
}

/// A log as aider writes it, one `append_chat_history` call per item.
fn writes(long: usize) -> Vec<String> {
    let reply = "はい。変更点は次のとおりです:\n\n> a quote from the docs\n\n#### Step 1\n\nsrc/main.rs\n\
                 ```rust\n<<<<<<< SEARCH\nfn main() {}\n=======\nfn main() { println!(\"👋\"); }\n\
                 >>>>>>> REPLACE\n```";
    [
        "\n# aider chat started at 2025-07-15 11:38:37\n\n",
        "> Aider v0.85.1  \n",
        "\n#### 日本語で説明して 🙂  \n#### e\u{301}te\u{301} — thin\u{2009}space, no\u{a0}break  \n",
        &format!("\n{reply}\n\n"),
        "> Tokens: 3.2k sent, 21 received. Cost: $0.0082 message, $0.0082 session.  \n",
        "> # 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: 検索\n\
         >>>>>>> REPLACE\n\nJust reply with fixed versions of the block above that failed to match.  \n",
        ">  \n",
        "> mkdir -p dist/dags          \ntouch dist/dags/index.js  \n",
        "\n# aider chat started at 2025-07-16 09:00:00\n\n",
        &format!("\n#### {}  \n", "長い行 ".repeat(long)),
        "\n# aider chat started at 2025-07-16 09:00:00\n\n",
        "> ^C KeyboardInterrupt  \n",
    ]
    .map(str::to_owned)
    .to_vec()
}

#[test]
fn sessions_inputs_replies_and_notices() {
    let parsed = parse(writes(3).concat().as_bytes());
    assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
    let names: Vec<&str> = parsed.sessions.iter().map(|s| s.name.as_str()).collect();
    let (first, second) = ("proj@2025-07-15 11:38:37", "proj@2025-07-16 09:00:00");
    assert_eq!(names, [first.to_owned(), second.to_owned(), format!("{second}#2")]);
    use Role::{Assistant as A, System as S, User as U};
    let expected = [
        (first, 2, S, "aider chat started at 2025-07-15 11:38:37"),
        (first, 4, S, "Aider v0.85.1"),
        (first, 6, U, "日本語で説明して 🙂\ne\u{301}te\u{301} — thin\u{2009}space, no\u{a0}break"),
        (first, 9, A, "はい。変更点は次のとおりです:\n\n> a quote"),
        (first, 24, S, "Tokens: 3.2k sent, 21 received. Cost"),
        (first, 25, S, "# 1 SEARCH/REPLACE block failed to"),
        (first, 31, S, ""),
        (first, 32, S, "mkdir -p dist/dags          \ntouch dist/"),
        (second, 35, S, "aider chat started at 2025-07-16 09:00:00"),
        (second, 38, U, "長い行 長い行 長い行 "),
        (&format!("{second}#2"), 40, S, "aider chat started at 2025-07-16 09:00:00"),
        (&format!("{second}#2"), 42, S, "^C KeyboardInterrupt"),
    ];
    let records: Vec<&Record> = parsed.sessions.iter().flat_map(|s| &s.records).collect();
    assert_eq!(records.len(), expected.len());
    for (record, (session, line, role, start)) in records.iter().zip(expected) {
        assert_eq!(
            (record.entry_id.as_str(), record.role),
            (format!("aider:{session}:{line}").as_str(), role)
        );
        assert!(
            matches!(&record.blocks[..], [Block::Text { text }] if text.starts_with(start)),
            "{record:?}"
        );
    }
    let records = &parsed.sessions[0].records;
    let reply = &writes(3)[3];
    assert_eq!(records[3].blocks, [Block::Text { text: reply.trim().to_owned() }]);
    let error = "# 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: 検索\n\
                 >>>>>>> REPLACE\n\nJust reply with fixed versions of the block above that failed to match.";
    assert_eq!(records[5].blocks, [Block::Text { text: error.into() }]);
    assert_eq!(records[0].meta["startedAt"], "\"2025-07-15 11:38:37\"");
    assert_eq!((parsed.recognised, parsed.unrecognised), (12, 0));
}

#[test]
fn a_growing_log_parses_to_a_prefix() {
    let writes = writes(300);
    let text = writes.concat();
    let full = parse(text.as_bytes());
    let ends: Vec<usize> =
        writes.iter().scan(0, |at, w| Some(*at + w.len()).inspect(|end| *at = *end)).collect();
    let mut compared = 0;
    for (cut, _) in text.char_indices().filter(|&(cut, _)| cut > 0) {
        let torn = text.as_bytes()[cut - 1] != b'\n';
        if !torn && !ends.contains(&cut) {
            continue; // a write torn just after a line break: see the module notes
        }
        let part = parse(&text.as_bytes()[..cut]);
        assert!(part.skipped.iter().all(|s| s.reason == SkipReason::Truncated), "cut at {cut}");
        assert_eq!(torn, part.skipped.last().is_some_and(|s| s.line == text[..cut].lines().count()));
        for (short, long) in part.sessions.iter().zip(&full.sessions) {
            assert_eq!(short.name, long.name, "cut at {cut}");
            assert_eq!(short.records[..], long.records[..short.records.len()], "cut at {cut}");
            compared += short.records.len();
        }
        assert!(part.sessions.len() <= full.sessions.len());
    }
    assert!(compared > 1000, "{compared}");
    assert_eq!(parse(text.as_bytes()), full, "parsing is deterministic");
}

#[test]
fn a_torn_last_line_waits_until_complete() {
    let head = "\n# aider chat started at 2026-04-22 22:40:12\n\n> Aider v0.86.1  \n\n";
    let torn = parse(format!("{head}#### Привет, мир").as_bytes());
    let lines: Vec<(usize, &SkipReason)> = torn.skipped.iter().map(|s| (s.line, &s.reason)).collect();
    assert_eq!(lines, [(6, &SkipReason::Truncated)]);
    assert_eq!(torn.record_count(), 2);
    let done = parse(format!("{head}#### Привет, мир  \n").as_bytes());
    assert!(done.skipped.is_empty());
    assert_eq!(done.sessions[0].records[..2], torn.sessions[0].records[..]);
    assert_eq!(done.sessions[0].records[2].blocks, [Block::Text { text: "Привет, мир".into() }]);
    // A reply not yet followed by its blank line waits too, reported at its first line.
    let reply = parse(format!("{head}\nПривет!\n").as_bytes());
    assert_eq!(reply.skipped, [Skipped { line: 7, reason: SkipReason::Truncated }]);
    assert_eq!(parse(format!("{head}\nПривет!\n\n").as_bytes()).record_count(), 3);
}

#[test]
fn bad_lines_and_text_before_the_first_header() {
    let mut text = b"notes kept above\n\n# aider chat started at 2025-01-01 00:00:00\n\n".to_vec();
    text.extend_from_slice(b"\nreply \xFF line\nrest of the reply\n\n> ok  \n");
    let parsed = parse_transcript_with(&text, TranscriptFormat::Aider, "proj", &ParseOptions::default());
    assert_eq!(parsed.skipped, [Skipped { line: 6, reason: SkipReason::NotUtf8 { valid_up_to: 6 } }]);
    assert_eq!(parsed.sessions[0].name, "proj");
    assert_eq!(parsed.sessions[0].records[0].role, Role::Assistant);
    let reply = &parsed.sessions[1].records[1];
    assert_eq!(reply.blocks, [Block::Text { text: "rest of the reply".into() }]);
    assert_eq!((parsed.recognised, parsed.unrecognised), (3, 1));
    let options = ParseOptions { max_line_bytes: 16, ..ParseOptions::default() };
    let long = parse_transcript_with(&text, TranscriptFormat::Aider, "proj", &options);
    assert!(long.skipped.iter().any(|s| matches!(s.reason, SkipReason::TooLarge { .. })));
}

#[test]
fn detection_is_strict() {
    let log = writes(1).concat();
    assert!(is_aider_log(log.as_bytes()));
    assert!(is_aider_log(format!("\u{feff}\r\n  \n{}", log.trim_start()).as_bytes()));
    assert_eq!(detect_format(log.as_bytes()), Some(TranscriptFormat::Aider));
    let readme = "# annal\n\nAn event-sourced session store.\n\n#### Usage  \n\n> note  \n";
    for other in [
        readme,
        "Some notes\n# aider chat started at 2025-07-15 11:38:37\n",
        "# aider chat started at yesterday\n",
        "  # aider chat started at 2025-07-15 11:38:37\n",
        "[{\"role\":\"user\",\"content\":\"# aider chat started at 2025-07-15 11:38:37\"}]",
        r#"{"type":"user","uuid":"u1","sessionId":"s1","message":{"role":"user","content":"hi"}}"#,
        "",
    ] {
        assert!(!is_aider_log(other.as_bytes()), "{other:?}");
        assert_ne!(detect_format(other.as_bytes()), Some(TranscriptFormat::Aider), "{other:?}");
    }
}
