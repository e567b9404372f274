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
    vec![
        (Claude, claude),
        (Codex, codex),
        (OpenCode, opencode.to_owned()),
        (Annal, annal),
        (Gemini, gemini_log),
        (Gemini, gemini_json.to_owned()),
        (Aider, aider.to_owned()),
        (Cline, cline.to_owned()),
    ]
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
