//! Every format is told from every other, both ways: each fixture (built from the shapes each
//! agent writes) is detected as exactly its format, and every other importer refuses it (reads
//! no record from it, or finds most of it of no kind it knows, which `annal import` and
//! `annal sync` report instead of storing). The same check over the real transcripts is in the
//! `corpus` test binary. Then each fixture goes through the facade as `annal import` takes it
//! (`annal::Annal::import`): detected and stored whole, and refused by every other format.

use annal::{Annal, Error, Options};
use annal_formats::TranscriptFormat;

use crate::detection::check;

/// One small transcript per format, as its agent writes it.
fn fixtures() -> Vec<(TranscriptFormat, String)> {
    use TranscriptFormat::*;
    let claude = [
        r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","timestamp":"2026-11-30T10:00:00Z","message":{"role":"user","content":"fix the 解析器 🦀"}}"#,
        r#"{"type":"assistant","uuid":"u2","parentUuid":"u1","sessionId":"s1","message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}"#,
    ]
    .join("\n");
    let codex = [
        r#"{"timestamp":"2026-11-30T10:00:00Z","type":"session_meta","payload":{"id":"c1","cwd":"/src"}}"#,
        r#"{"timestamp":"2026-11-30T10:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#,
    ]
    .join("\n");
    let opencode = r#"{"info":{"id":"ses_1","title":"t"},"messages":[{"info":{"id":"msg_1","role":"user","sessionID":"ses_1","time":{"created":1}},"parts":[{"id":"prt_1","type":"text","text":"hi"}]}]}"#;
    let annal = [
        r#"{"format":"annal-jsonl","version":1,"session":"s"}"#,
        r#"{"entryId":"e1","role":"user","blocks":[{"type":"text","text":"hi"}]}"#,
    ]
    .join("\n");
    let gemini_log = [
        r#"{"sessionId":"g1","projectHash":"p","startTime":"2026-11-30T10:00:00Z","lastUpdated":"2026-11-30T10:00:00Z"}"#,
        r#"{"id":"m1","timestamp":"2026-11-30T10:00:01Z","type":"user","content":"hi"}"#,
        r#"{"id":"m2","timestamp":"2026-11-30T10:00:02Z","type":"gemini","content":"hello"}"#,
    ]
    .join("\n");
    let gemini_json = "{\n  \"sessionId\": \"g2\",\n  \"projectHash\": \"p\",\n  \"startTime\": \"2026-11-30T10:00:00Z\",\n  \"lastUpdated\": \"2026-11-30T10:00:00Z\",\n  \"messages\": [\n    {\"id\": \"m1\", \"timestamp\": \"2026-11-30T10:00:01Z\", \"type\": \"user\", \"content\": \"hi\"}\n  ]\n}\n";
    let aider = "\n# aider chat started at 2026-11-30 10:00:00\n\n> Add .gitignore to git? (Y)es/(N)o [Yes]: y  \n\n#### fix the parser  \n\nDone: `src/parse.rs` now handles it.\n\n";
    let cline = r#"[{"role":"user","content":[{"type":"text","text":"<task>fix it</task>"}]},{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a.rs"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"fn main() {}"}]}]"#;
    let pi = [
        r#"{"type":"session","version":3,"id":"p1","timestamp":"2026-11-30T10:00:00.000Z","cwd":"/src"}"#,
        r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-11-30T10:00:01.000Z","message":{"role":"user","content":"fix the 解析器 🦀","timestamp":1764496801000}}"#,
        r#"{"type":"message","id":"b2c3d4e5","parentId":"a1b2c3d4","timestamp":"2026-11-30T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop","timestamp":1764496802000}}"#,
    ]
    .join("\n");
    let qwen = [
        r#"{"uuid":"q1","parentUuid":null,"sessionId":"s","timestamp":"2026-11-30T10:00:00.000Z","type":"user","cwd":"/src","version":"0.5.0","message":{"role":"user","parts":[{"text":"fix the 解析器"}]}}"#,
        r#"{"uuid":"q2","parentUuid":"q1","sessionId":"s","timestamp":"2026-11-30T10:00:01.000Z","type":"assistant","cwd":"/src","version":"0.5.0","model":"qwen3-coder","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"read_file","args":{"path":"a.rs"}}}]}}"#,
        r#"{"uuid":"q3","parentUuid":"q2","sessionId":"s","timestamp":"2026-11-30T10:00:02.000Z","type":"tool_result","cwd":"/src","version":"0.5.0","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"fn main() {}"}}}]}}"#,
        r#"{"uuid":"q4","parentUuid":"q3","sessionId":"s","timestamp":"2026-11-30T10:00:03.000Z","type":"system","subtype":"ui_telemetry","cwd":"/src","version":"0.5.0","systemPayload":{"uiEvent":{}}}"#,
    ]
    .join("\n");
    let copilot_cli = [
        r#"{"type":"session.start","data":{"sessionId":"s","version":1,"producer":"copilot-agent","startTime":"2026-11-30T10:00:00.000Z"},"id":"e1","timestamp":"2026-11-30T10:00:00.000Z","parentId":null}"#,
        r#"{"type":"user.message","data":{"content":"fix it","attachments":[]},"id":"e2","timestamp":"2026-11-30T10:00:01.000Z","parentId":"e1"}"#,
        r#"{"type":"assistant.message","data":{"messageId":"m1","content":"done","toolRequests":[]},"id":"e3","timestamp":"2026-11-30T10:00:02.000Z","parentId":"e2"}"#,
    ]
    .join("\n");
    let continue_session = r#"{"sessionId":"s","title":"Fix it","workspaceDirectory":"file:///src","history":[{"message":{"role":"user","content":"fix it"},"contextItems":[]},{"message":{"role":"assistant","content":"done"},"contextItems":[]}]}"#;
    let copilot_vscode = "{\n  \"version\": 3,\n  \"requesterUsername\": \"u\",\n  \"responderUsername\": \"GitHub Copilot\",\n  \"sessionId\": \"s\",\n  \"creationDate\": 1764496800000,\n  \"requests\": [\n    {\"requestId\": \"r1\", \"message\": {\"text\": \"fix it\", \"parts\": []}, \"response\": [{\"value\": \"done\"}]}\n  ]\n}\n";
    let copilot_log = [
        r#"{"kind":0,"v":{"version":3,"sessionId":"s","creationDate":1764496800000,"requests":[]}}"#,
        r#"{"kind":2,"k":["requests"],"v":[{"requestId":"r1","message":{"text":"fix it","parts":[]},"response":[]}]}"#,
        r#"{"kind":1,"k":["requests",0,"response"],"v":[{"value":"done"}]}"#,
    ]
    .join("\n");
    let kimi_context = [
        r#"{"role":"_system_prompt","content":"You are Kimi."}"#,
        r#"{"role":"user","content":"fix the 解析器　🦀"}"#,
        r#"{"role":"assistant","content":"Reading.","tool_calls":[{"type":"function","id":"t1","function":{"name":"ReadFile","arguments":"{\"path\":\"a.rs\"}"}}]}"#,
        r#"{"role":"tool","tool_call_id":"t1","content":"fn main() {}"}"#,
        r#"{"role":"_checkpoint","id":1}"#,
    ]
    .join("\n");
    let factory = [
        r#"{"type":"session_start","id":"d1","title":"fix it","sessionTitle":"fix it","owner":"u","version":2,"cwd":"/src"}"#,
        r#"{"type":"message","id":"m1","timestamp":"2026-11-30T10:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"fix the 解析器 🦀"}]}}"#,
        r#"{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-11-30T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"tu1","name":"Read","input":{"file_path":"a.rs"}}]}}"#,
        r#"{"type":"message","id":"m3","parentId":"m2","timestamp":"2026-11-30T10:00:02.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"fn main() {}"}]}}"#,
    ]
    .join("\n");
    let amp = r#"{"v":5,"id":"T-5f0c","created":1764496800000,"title":"Fix it","messages":[{"role":"user","messageId":0,"content":[{"type":"text","text":"fix the 解析器 🦀"}]},{"role":"assistant","messageId":1,"content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"path":"a.rs"}}]},{"role":"user","messageId":2,"content":[{"type":"tool_result","toolUseID":"toolu_1","run":{"status":"done","result":{"output":"fn main() {}"}}}]}]}"#;
    let kiro_log = [
        r#"{"version":"v1","kind":"Prompt","data":{"message_id":"msg-1","content":[{"kind":"text","data":"fix the 解析器 🦀"}],"meta":{"timestamp":1764496800}}}"#,
        r#"{"version":"v1","kind":"AssistantMessage","data":{"message_id":"msg-2","content":[{"kind":"toolUse","data":{"toolUseId":"t1","name":"read","input":{"path":"a.rs"}}}]}}"#,
        r#"{"version":"v1","kind":"ToolResults","data":{"message_id":"msg-3","content":[{"kind":"toolResult","data":{"toolUseId":"t1","content":[{"kind":"text","data":"fn main() {}"}],"status":"success"}}],"results":{}}}"#,
    ]
    .join("\n");
    let cursor = [
        r#"{"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nfix the 解析器 🦀\n</user_query>"}]}}"#,
        r#"{"role":"assistant","message":{"content":[{"type":"text","text":"Reading."},{"type":"tool_use","name":"ReadFile","input":{"path":"a.rs"}}]}}"#,
        r#"{"type":"turn_ended","status":"success"}"#,
    ]
    .join("\n");
    let copilot_legacy = r#"{
  "sessionId": "9b1f7c2e",
  "startTime": "2025-10-04T05:36:00.000Z",
  "chatMessages": [{"role": "system", "content": "You are Copilot."}, {"role": "user", "content": "fix the 解析器 🦀"}],
  "timeline": [
    {"type": "user", "id": "t-1", "timestamp": "2025-10-04T05:36:01.000Z", "text": "fix the 解析器 🦀"},
    {"type": "copilot", "id": "t-2", "timestamp": "2025-10-04T05:36:02.000Z", "text": "Done."}
  ]
}"#;
    let openhands_cli = r#"{"kind":"MessageEvent","id":"e-1","timestamp":"2026-11-30T10:00:00","source":"user","llm_message":{"role":"user","content":[{"type":"text","text":"fix the 解析器 🦀"}]}}"#;
    let openhands_event = r#"{"id":3,"timestamp":"2026-11-30T10:00:00.000000","source":"agent","message":"Running command: ls","action":"run","args":{"command":"ls","thought":""}}"#;
    vec![
        (Claude, claude),
        (Pi, pi),
        (Qwen, qwen),
        (Copilot, copilot_cli),
        (Copilot, copilot_legacy.to_owned()),
        (CursorTranscript, cursor),
        (Continue, continue_session.to_owned()),
        (VsCodeChat, copilot_vscode.to_owned()),
        (VsCodeChat, copilot_log),
        (OpenHands, openhands_event.to_owned()),
        (OpenHands, openhands_cli.to_owned()),
        (Kimi, kimi_context),
        (Factory, factory),
        (Amp, amp.to_owned()),
        (KiroLog, kiro_log),
        (Codex, codex),
        (OpenCode, opencode.to_owned()),
        (Annal, annal),
        (Gemini, gemini_log),
        (Gemini, gemini_json.to_owned()),
        (Aider, aider.to_owned()),
        (Cline, cline.to_owned()),
    ]
}

/// Transcripts of agents annal does not read (yet), in the shapes their own code writes: each is
/// detected as no format and stored by no importer, so `annal import` reports and skips it.
fn unread() -> Vec<(&'static str, String)> {
    let kimi_wire = [
        r#"{"type":"metadata","protocol_version":"1.10"}"#,
        r#"{"timestamp":1764496801.5,"message":{"type":"TurnBegin","payload":{"user_input":"fix it"}}}"#,
        r#"{"timestamp":1764496802.5,"message":{"type":"TextPart","payload":{"type":"text","text":"ok"}}}"#,
    ]
    .join("\n");
    // Cursor's first transcripts: plain text, a role marker on a line of its own.
    let cursor_text = "user:\n<user_query>\nfix the 解析器 🦀\n</user_query>\n\nA:\n[Tool call] ReadFile\n  path: a.rs\n[Tool result] ReadFile\n  fn main() {}\nDone.\n";
    vec![("Kimi CLI wire.jsonl", kimi_wire), ("Cursor agent transcript .txt", cursor_text.to_owned())]
}

#[test]
fn formats_annal_does_not_read_are_no_format() {
    let mut problems = Vec::new();
    for (name, text) in unread() {
        if let Some(format) = annal_formats::detect_format(text.as_bytes()) {
            problems.push(format!("{name}: detected as {format}"));
        }
        for format in TranscriptFormat::ALL {
            let parsed = annal_formats::parse_transcript(text.as_bytes(), format, "f");
            if parsed.record_count() > 0 && parsed.unrecognised <= parsed.recognised {
                problems.push(format!("{name}: the {format} importer would store it"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn each_fixture_is_its_format_and_no_other() {
    let problems: Vec<String> = fixtures()
        .iter()
        .enumerate()
        .flat_map(|(i, (format, text))| check(&format!("fixture {i}"), *format, text.as_bytes()))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn each_fixture_is_imported_as_its_format_and_refused_as_any_other() -> Result<(), Box<dyn std::error::Error>>
{
    let dir = tempfile::tempdir()?;
    // Never searched: the index is left closed.
    let annal =
        Annal::open_with(dir.path().join("s.redb"), &Options { index_eagerly: false, ..Options::default() })?;
    for (i, (format, text)) in fixtures().iter().enumerate() {
        let name = format!("fixture-{i}");
        let before = annal.sessions()?.len();
        for other in TranscriptFormat::ALL.into_iter().filter(|other| other != format) {
            match annal.import(text.as_bytes(), &name, Some(other)) {
                Err(Error::Unrecognised { format: tried, .. }) => assert_eq!(tried, other, "{name}"),
                Ok(summary) => assert_eq!(summary.records_new, 0, "{name} ({format}) stored as {other}"),
                Err(err) => panic!("{name} ({format}) as {other}: {err}"),
            }
        }
        assert_eq!(annal.sessions()?.len(), before, "{name} ({format}): a refusal stored a session");
        let summary = annal.import(text.as_bytes(), &name, None)?;
        assert_eq!(summary.format, Some(*format), "{name}: detected");
        assert!(summary.records_new > 0 && summary.failed.is_empty(), "{name}: {summary:?}");
        assert_eq!(summary.skipped, Vec::new(), "{name}");
    }
    assert!(annal.verify(None)?.is_ok());
    Ok(())
}
